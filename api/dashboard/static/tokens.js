// Your personal access tokens (GET /people/me/tokens): for scripts and CI, each scoped to one of your accounts
// with a role that grants no more than yours there, and an expiry. A new token is shown once, with a copy
// button; the list shows each one's last use and expiry; revoking one stops it at once.

import { roleIn, rolesWithin } from './access.js';
import { admin } from './api.js';
import { badge, clearErrors, field, h, shownOnce, submitting, toast, when } from './dom.js';
import { table } from './table.js';

const DEFAULT_DAYS = 90;
const MAX_DAYS = 366;

export async function tokensView(ctx) {
  let tokens = (await admin('/people/me/tokens')).data;
  const names = new Map(ctx.accounts.map((a) => [a.id, a.name]));
  const list = h('div', {});
  const shown = h('div', { class: 'shown-holder', 'aria-live': 'polite' });

  const revokeButton = (token) => h('button', { type: 'button', class: 'small quiet danger',
    'aria-label': `Revoke ${token.name || token.prefix}`, onclick: async () => {
      if (!window.confirm(`Revoke ${token.name || token.prefix}? Whatever uses it is refused from now on.`)) return;
      await admin(`/people/me/tokens/${token.id}`, { method: 'DELETE' });
      tokens = (await admin('/people/me/tokens')).data;
      paint();
      toast('Token revoked.');
    } }, 'Revoke');

  function paint() {
    list.replaceChildren(table('Your personal access tokens', [
      { label: 'Name', cell: (t) => t.name || '—' },
      { label: 'Starts with', cell: (t) => h('code', {}, t.prefix) },
      { label: 'Account', cell: (t) => names.get(t.account_id) || t.account_id },
      { label: 'Role', cell: (t) => t.role },
      { label: 'Status', cell: (t) => badge(t.status, t.status === 'active' ? 'on' : 'off') },
      { label: 'Last used', sort: (t) => t.last_used_at || null, cell: (t) => (t.last_used_at ? when(t.last_used_at) : 'never') },
      { label: 'Expires', sort: (t) => t.expires_at, cell: (t) => when(t.expires_at) },
      { label: 'Actions', cell: (t) => (t.status === 'active' ? revokeButton(t) : null) },
    ], tokens.map((t) => ({ item: t, attrs: { 'data-token': t.id, 'data-name': t.name, 'data-status': t.status } })),
    { empty: 'No tokens yet: create one for a script that calls the admin API as you.' }));
  }

  function createForm() {
    const name = h('input', { type: 'text', name: 'name', maxlength: 200, placeholder: 'CI deploys' });
    const account = h('select', { name: 'account_id' }, ctx.accounts.map((a) =>
      h('option', { value: a.id, selected: a.id === ctx.account }, a.name)));
    const role = h('select', { name: 'role' });
    const days = h('input', { type: 'number', name: 'expires_in_days', min: 1, max: MAX_DAYS, step: 1,
      value: DEFAULT_DAYS });
    const paintRoles = () => {
      const mine = roleIn(account.value);
      role.replaceChildren(...rolesWithin(mine).map((r) => h('option', { value: r, selected: r === mine }, r)));
    };
    account.addEventListener('change', paintRoles);
    paintRoles();
    const submit = h('button', { type: 'submit', class: 'primary' }, 'Create token');
    const form = h('form', { class: 'card toolbar', 'aria-label': 'Create a personal access token', novalidate: true },
      field('Name', name), field('Account', account),
      field('Role', role, { hint: 'At most what your own role there allows.' }),
      field('Expires in (days)', days), h('div', { class: 'actions' }, submit),
      h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      clearErrors(form);
      await submitting(form, submit, async () => {
        const created = (await admin('/people/me/tokens', { method: 'POST', body: { name: name.value.trim(),
          account_id: account.value, role: role.value, expires_in_days: Number(days.value) } })).data;
        name.value = '';
        shown.replaceChildren(shownOnce('New token', created.token, { name: 'new-token',
          note: 'Copy it now: it is shown only once. Send it as Authorization: Bearer <token>.' }));
        shown.querySelector('input').focus();
        tokens = (await admin('/people/me/tokens')).data;
        paint();
      });
    });
    return form;
  }

  paint();
  return h('section', { class: 'tokens' },
    h('h1', { tabindex: -1 }, 'Personal tokens'),
    h('p', { class: 'muted' }, 'Tokens for scripts and CI: the admin API takes them as the operator token, '
      + 'limited to one account and a role. They cannot manage you (profile, password, tokens).'),
    createForm(), shown, list);
}
