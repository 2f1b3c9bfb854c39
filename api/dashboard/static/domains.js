// The account's custom domains: each with its status, the token it must serve (and where), a Verify button
// that says what went wrong when the service could not fetch the token back, and a form to add one.

import { admin, ApiError, inAccount } from './api.js';
import { badge, clearErrors, field, h, showErrors, table, toast, when } from './dom.js';

// The Verify answer's details as sentences: {problem, message, url} each.
function problems(error) {
  const details = error.body?.details;
  if (Array.isArray(details)) return details.map((d) => d.message || String(d));
  return [error.text];
}

export async function domainsView(ctx) {
  const results = h('div', { class: 'results' });
  const status = h('div', { class: 'verify-result', role: 'status', 'aria-live': 'polite' });
  let domains = [];

  function verifyButton(domain) {
    const button = h('button', { type: 'button', class: 'small', 'aria-label': `Verify ${domain.host}` },
      domain.status === 'live' ? 'Verify again' : 'Verify');
    button.addEventListener('click', async () => {
      button.disabled = true;
      status.replaceChildren(h('p', { class: 'muted' }, `Fetching the token from ${domain.host}…`));
      try {
        const answer = (await admin(inAccount(ctx.account, `/domains/${domain.id}/verify`), { method: 'POST' })).data;
        domains[domains.findIndex((d) => d.id === domain.id)] = answer;
        paint();
        status.replaceChildren(h('p', { class: 'ok' }, `${answer.host} is live: its links resolve there now.`));
        toast(`${answer.host} verified.`);
      } catch (error) {
        if (!(error instanceof ApiError) || error.status === 401) throw error;
        status.replaceChildren(h('div', { class: 'problem', role: 'alert' },
          h('p', {}, h('strong', {}, `${domain.host} is not verified. `), error.message),
          h('ul', {}, problems(error).map((text) => h('li', {}, text)))));
      } finally {
        button.disabled = false;
      }
    });
    return button;
  }

  function deleteButton(domain) {
    const button = h('button', { type: 'button', class: 'small quiet', 'aria-label': `Delete ${domain.host}` }, 'Delete');
    button.addEventListener('click', async () => {
      if (!window.confirm(`Delete ${domain.host}? Its links stop resolving there.`)) return;
      await admin(inAccount(ctx.account, `/domains/${domain.id}`), { method: 'DELETE' });
      domains = domains.filter((d) => d.id !== domain.id);
      paint();
      toast(`${domain.host} deleted.`);
    });
    return button;
  }

  function proof(domain) {
    return h('div', { class: 'proof' },
      h('div', {}, 'Path: ', h('code', { 'data-role': 'path' }, domain.verification.path)),
      h('div', {}, 'Token: ', h('code', { 'data-role': 'token' }, domain.verification.token)),
      h('div', { class: 'muted' }, 'Fetched from ', h('code', {}, domain.verification.url)));
  }

  function paint() {
    results.replaceChildren(table('Domains', [
      { label: 'Host', cell: (d) => h('strong', {}, d.host) },
      { label: 'Status', cell: (d) => badge(d.status) },
      { label: 'Serve this to prove the domain is yours', class: 'wrap', cell: (d) => proof(d) },
      { label: 'Added', cell: (d) => when(d.created_at) },
      { label: 'Verified', cell: (d) => (d.verified_at ? when(d.verified_at) : '—') },
      { label: 'Action', cell: (d) => h('div', { class: 'actions' }, verifyButton(d), deleteButton(d)) },
    ], domains.map((item) => ({ item, attrs: { 'data-domain': item.host, 'data-status': item.status } })),
    { empty: 'No custom domains yet: the account\'s links resolve on the shared host.' }));
  }

  const host = h('input', { name: 'host', type: 'text', required: true, autocomplete: 'off', spellcheck: 'false',
    placeholder: 'links.example.com' });
  const add = h('button', { type: 'submit', class: 'primary' }, 'Add domain');
  const form = h('form', { class: 'toolbar', 'aria-label': 'Add a domain', novalidate: true },
    field('Host', host, { hint: 'A DNS name you control, pointed at the service\'s proxy.' }),
    h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }), add);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    add.disabled = true;
    try {
      const created = (await admin(inAccount(ctx.account, '/domains'), { method: 'POST',
        body: { host: host.value.trim() } })).data;
      domains.push(created);
      host.value = '';
      paint();
      toast(`${created.host} added: it is pending until verified.`);
    } catch (error) {
      if (!(error instanceof ApiError) || error.status === 401) throw error;
      showErrors(form, error);
    } finally {
      add.disabled = false;
    }
  });

  domains = (await admin(inAccount(ctx.account, '/domains'))).data;
  paint();
  return h('section', {}, h('h1', { tabindex: -1 }, 'Domains'),
    h('p', { class: 'muted' }, 'Publish the account\'s links under its own host. A new domain is pending: point its '
      + 'DNS at the service\'s proxy, which then serves the token below at the path below on that host, and press '
      + 'Verify. Once live, the account\'s links resolve there and its app association files list only its apps.'),
    form, status, results);
}
