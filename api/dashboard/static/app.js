// The dashboard's shell: the sign-in, the account choice, the section links and the router. Each page
// path under /dashboard names what to show; the views build it from the admin API. Who is signed in (the
// operator, or a person and their roles) is kept in access.js, which every page asks what to show.

import { can, isOperator, setAccess, signedPerson } from './access.js';
import { admin, ApiError, AuthError, inAccount, query, session } from './api.js';
import { accountView } from './account.js';
import { auditView } from './audit.js';
import { campaignsView, campaignView } from './campaigns.js';
import { newCampaignView } from './campaignedit.js';
import { catalogView } from './catalog.js';
import { clicksView } from './clicks.js';
import { connectionsView, connectionView } from './connections.js';
import { contactsView } from './contacts.js';
import { customersView, customerView } from './customers.js';
import { deliveriesView } from './deliveries.js';
import { deliveryView } from './delivery.js';
import { domainsView } from './domains.js';
import { h, toast } from './dom.js';
import { eventView } from './events.js';
import { eventTypesView } from './eventtypes.js';
import { keysView } from './keys.js';
import { importView } from './imports.js';
import { linkView } from './link.js';
import { linksView, newLinkView } from './links.js';
import { liveView } from './live.js';
import { membersView } from './members.js';
import { acceptInvitationView, resetPasswordView } from './onetime.js';
import { linkPreviewSettingsView } from './previews.js';
import { profileView } from './profile.js';
import { reportsView } from './reports.js';
import { signInView } from './signin.js';
import { tokensView } from './tokens.js';

const BASE = '/dashboard';
const ACCOUNT_KEY = 'linksvc.dashboard.account';
const SEG = '([^/]+)';
const ROUTES = [
  [new RegExp(`^${BASE}/${SEG}/links$`), linksView],
  [new RegExp(`^${BASE}/${SEG}/links/new$`), newLinkView, 'links:write'],
  [new RegExp(`^${BASE}/${SEG}/links/import$`), importView, 'links:write'],
  [new RegExp(`^${BASE}/${SEG}/links/${SEG}$`), linkView],
  [new RegExp(`^${BASE}/${SEG}/links/${SEG}/clicks$`), clicksView],
  [new RegExp(`^${BASE}/${SEG}/campaigns$`), campaignsView],
  [new RegExp(`^${BASE}/${SEG}/campaigns/new$`), newCampaignView, 'campaigns:write'],
  [new RegExp(`^${BASE}/${SEG}/campaigns/catalog$`), catalogView],
  [new RegExp(`^${BASE}/${SEG}/campaigns/${SEG}$`), campaignView],
  [new RegExp(`^${BASE}/${SEG}/deliveries$`), deliveriesView],
  [new RegExp(`^${BASE}/${SEG}/deliveries/${SEG}$`), deliveryView],
  [new RegExp(`^${BASE}/${SEG}/reports$`), reportsView],
  [new RegExp(`^${BASE}/${SEG}/live$`), liveView, 'links:read'],
  [new RegExp(`^${BASE}/${SEG}/domains$`), domainsView],
  [new RegExp(`^${BASE}/${SEG}/events/${SEG}$`), eventView],
  [new RegExp(`^${BASE}/${SEG}/customers$`), customersView],
  [new RegExp(`^${BASE}/${SEG}/customers/contacts$`), contactsView],
  [new RegExp(`^${BASE}/${SEG}/customers/${SEG}$`), customerView],
  [new RegExp(`^${BASE}/${SEG}/connections$`), connectionsView],
  [new RegExp(`^${BASE}/${SEG}/connections/new$`), connectionView, 'connections:write'],
  [new RegExp(`^${BASE}/${SEG}/connections/${SEG}$`), connectionView],
  [new RegExp(`^${BASE}/${SEG}/api-keys$`), keysView, 'keys:read'],
  [new RegExp(`^${BASE}/${SEG}/event-types$`), eventTypesView, 'campaigns:read'],
  [new RegExp(`^${BASE}/${SEG}/link-preview$`), linkPreviewSettingsView],
  [new RegExp(`^${BASE}/${SEG}/members$`), membersView, 'members:read'],
  [new RegExp(`^${BASE}/${SEG}/account$`), accountView, 'account:read'],
  [new RegExp(`^${BASE}/${SEG}/audit-log$`), auditView, 'audit:read'],
  [new RegExp(`^${BASE}/${SEG}/tokens$`), tokensView, 'self'],
  [new RegExp(`^${BASE}/${SEG}/profile$`), profileView, 'self'],
];
// The pages an emailed one-time link opens: shown signed in or not (the link's token is the credential).
const PUBLIC = { [`${BASE}/accept-invitation`]: acceptInvitationView, [`${BASE}/reset-password`]: resetPasswordView };
const SECTIONS = ['links', 'campaigns', 'reports', 'deliveries', 'domains', 'link-preview', 'members', 'audit-log',
  'tokens', 'profile', 'connections', 'api-keys', 'customers', 'event-types', 'live'];

const state = { signedIn: null, accounts: null, sequence: 0 };
const main = document.getElementById('main');

export function navigate(path, { replace = false } = {}) {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  render();
}

// Who the session is of: the operator (every account) or a person (their accounts, with their roles there).
async function loadAccess() {
  const answer = (await session.state()).data;
  if (!answer.signed_in) {
    setAccess();
    return false;
  }
  if (answer.person_id) {
    const [me, grants] = await Promise.all([admin('/people/me'), session.roles()]);
    setAccess({ person: me.data, grants: grants.data });
  } else {
    setAccess({ operator: true });
  }
  return true;
}

// The account switcher's choices: all of them for the operator, the person's own for a person.
async function loadAccounts() {
  if (state.accounts) return state.accounts;
  if (isOperator()) {
    state.accounts = (await admin(`/accounts${query({ limit: 500 })}`)).data;
  } else {
    const found = await Promise.all((signedPerson()?.accounts || []).map((m) =>
      admin(inAccount(m.account_id, '')).then((answer) => answer.data, (error) => {
        if (error instanceof AuthError) throw error;
        return null;  // left since the page loaded: not shown
      })));
    state.accounts = found.filter(Boolean).sort((a, b) => a.name.localeCompare(b.name));
  }
  return state.accounts;
}

export async function refreshAccess() {
  state.accounts = null;
  state.signedIn = await loadAccess();
}

function showShell(account, section) {
  const top = document.getElementById('top');
  top.hidden = false;
  const select = document.getElementById('account');
  select.replaceChildren(...state.accounts.map((a) =>
    h('option', { value: a.id, selected: a.id === account }, `${a.name} (${a.environment})`)));
  for (const link of top.querySelectorAll('a[data-section]')) {
    link.href = `${BASE}/${account}/${link.dataset.section}`;
    link.closest('li, .top-link').hidden = Boolean(link.dataset.needs) && !can(account, link.dataset.needs);
    if (link.dataset.section === section) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

function signInPage() {
  document.getElementById('top').hidden = true;
  const next = location.pathname.startsWith(`${BASE}/sign-in`) ? null : location.pathname + location.search;
  const view = signInView(async () => {
    await refreshAccess();
    navigate(next && next !== `${BASE}/` && next !== BASE ? next : `${BASE}/`, { replace: true });
  });
  return view;
}

async function home() {
  const accounts = await loadAccounts();
  if (!accounts.length) {
    if (!isOperator()) {
      document.getElementById('top').hidden = true;
      return h('section', {}, h('h1', { tabindex: -1 }, 'No accounts yet'),
        h('p', {}, 'You are not a member of any account. Ask an account\'s owner for an invitation.'),
        h('p', {}, h('button', { type: 'button', class: 'quiet', onclick: () => signOut() }, 'Sign out')));
    }
    return h('section', {}, h('h1', { tabindex: -1 }, 'No accounts yet'),
      h('p', {}, 'Create an account with the admin API (POST /api/admin/v1/accounts), then come back.'));
  }
  const remembered = localStorage.getItem(ACCOUNT_KEY);
  const account = accounts.some((a) => a.id === remembered) ? remembered : accounts[0].id;
  navigate(`${BASE}/${account}/links`, { replace: true });
  return null;
}

async function render() {
  const sequence = ++state.sequence;
  const path = location.pathname.replace(/\/+$/, '') || BASE;
  main.setAttribute('aria-busy', 'true');
  let view = null;
  try {
    if (PUBLIC[path]) {
      document.getElementById('top').hidden = true;
      view = PUBLIC[path]({ navigate, refreshAccess, base: BASE });
    } else if (state.signedIn === null) state.signedIn = await loadAccess();
    if (view) {
      // a one-time link's page
    } else if (!state.signedIn) {
      view = signInPage();
    } else if (path === BASE || path === `${BASE}/sign-in`) {
      view = await home();
    } else {
      view = await routeView(path);
    }
  } catch (error) {
    if (error instanceof AuthError) {
      state.signedIn = false;
      state.accounts = null;
      setAccess();
      toast('Your session has ended. Sign in again.');
      view = signInPage();
    } else {
      view = h('section', { class: 'problem' }, h('h1', { tabindex: -1 }, 'Something went wrong'),
        h('p', { role: 'alert' }, error.text || error.message || String(error)),
        h('p', {}, h('a', { href: `${BASE}/` }, 'Back to the start')));
    }
  }
  if (sequence !== state.sequence || view === null) return;
  main.removeAttribute('aria-busy');
  main.replaceChildren(view);
  const heading = main.querySelector('h1');
  document.title = heading ? `${heading.textContent} · linksvc` : 'linksvc dashboard';
  if (state.focusHeading && heading) heading.focus();
  state.focusHeading = true;
}

async function routeView(path) {
  for (const [pattern, view, needs] of ROUTES) {
    const match = pattern.exec(path);
    if (!match) continue;
    const [account, ...params] = match.slice(1).map(decodeURIComponent);
    const accounts = await loadAccounts();
    if (!accounts.some((a) => a.id === account)) break;
    localStorage.setItem(ACCOUNT_KEY, account);
    showShell(account, path.split('/')[3]);
    const ctx = { account, params, search: new URLSearchParams(location.search), navigate, base: `${BASE}/${account}`,
      can: (permission) => can(account, permission), refreshAccess, signOut, accounts };
    if (needs && !can(account, needs)) {
      return h('section', {}, h('h1', { tabindex: -1 }, 'Not for your role'),
        h('p', {}, isOperator() ? 'This page is a person\'s own: sign in with your email to see it.'
          : 'Your role in this account does not allow this page.'),
        h('p', {}, h('a', { href: `${BASE}/${account}/links` }, 'Go to the links.')));
    }
    return view(ctx);
  }
  return h('section', {}, h('h1', { tabindex: -1 }, 'Page not found'),
    h('p', {}, 'Nothing is at this address. ', h('a', { href: `${BASE}/` }, 'Go to the links.')));
}

// Same-page navigation for links inside the dashboard; anything else (new tab, download, #hash) is left alone.
document.addEventListener('click', (event) => {
  const anchor = event.target.closest?.('a[href]');
  if (!anchor || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey
      || event.altKey || anchor.target || anchor.hasAttribute('download')) return;
  const url = new URL(anchor.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith(BASE) || url.pathname.startsWith(`${BASE}/static/`)) {
    return;
  }
  if (url.hash && url.pathname === location.pathname) return;
  event.preventDefault();
  navigate(url.pathname + url.search);
});

window.addEventListener('popstate', render);

// A failed call in a button or a form handler: an ended session leads to the sign-in, anything else is said.
window.addEventListener('unhandledrejection', (event) => {
  if (!(event.reason instanceof ApiError)) return;
  event.preventDefault();
  if (event.reason instanceof AuthError) {
    state.signedIn = false;
    state.accounts = null;
    setAccess();
    toast('Your session has ended. Sign in again.');
    navigate(`${BASE}/sign-in`);
  } else {
    toast(event.reason.text);
  }
});

document.getElementById('account').addEventListener('change', (event) => {
  const section = location.pathname.split('/')[3] || 'links';
  const needs = document.querySelector(`#top a[data-section="${CSS.escape(section)}"]`)?.dataset.needs;
  const kept = SECTIONS.includes(section) && (!needs || can(event.target.value, needs));
  navigate(`${BASE}/${event.target.value}/${kept ? section : 'links'}`);
});

async function signOut(message = 'Signed out.') {
  await session.signOut();
  state.signedIn = false;
  state.accounts = null;
  setAccess();
  if (message) toast(message);
  navigate(`${BASE}/sign-in`);
}

document.getElementById('sign-out').addEventListener('click', () => signOut());

state.focusHeading = false;
render();
