// The account's API keys (GET /accounts/{id}/api-keys): the keys the storefront API and the apps authorize with.
// A new key is shown once, with a copy button (only its hash is kept); revoking one stops its tokens at once.

import { admin, inAccount } from './api.js';
import { badge, clearErrors, field, h, shownOnce, submitting, toast, when } from './dom.js';
import { table } from './table.js';

const KINDS = [['SERVER', 'SERVER: a backend (purchases, reversals, customers)'],
  ['CLIENT', 'CLIENT: an app or a web page (events other than purchases)']];

export async function keysView(ctx) {
  const path = inAccount(ctx.account, '/api-keys');
  let keys = (await admin(path)).data;
  const list = h('div', {});
  const shown = h('div', { class: 'shown-holder', 'aria-live': 'polite' });
  const label = (k) => k.name || k.prefix;

  const revokeButton = (key) => h('button', { type: 'button', class: 'small quiet danger',
    'aria-label': `Revoke ${label(key)}`, onclick: async () => {
      if (!window.confirm(`Revoke ${label(key)}? Whatever uses it is refused from now on.`)) return;
      await admin(inAccount(ctx.account, `/api-keys/${key.id}`), { method: 'DELETE' });
      keys = (await admin(path)).data;
      paint();
      toast('Key revoked.');
    } }, 'Revoke');

  function paint() {
    list.replaceChildren(table('API keys', [
      { label: 'Name', cell: (k) => k.name || '—' },
      { label: 'Starts with', cell: (k) => h('code', {}, k.prefix) },
      { label: 'Kind', cell: (k) => k.kind },
      { label: 'Created', sort: (k) => k.created_at, cell: (k) => when(k.created_at) },
      { label: 'Status', cell: (k) => (k.revoked_at ? badge(`Revoked ${when(k.revoked_at)}`, 'off')
        : badge('Active', 'on')) },
      { label: 'Actions', cell: (k) => (!k.revoked_at && ctx.can('keys:write') ? revokeButton(k) : null) },
    ], keys.map((k) => ({ item: k, attrs: { 'data-key': k.id, 'data-name': k.name,
      'data-status': k.revoked_at ? 'revoked' : 'active' } })), { empty: 'No API keys yet: create one for the shop\'s server (SERVER) or its app (CLIENT).' }));
  }

  function createForm() {
    const name = h('input', { type: 'text', name: 'name', maxlength: 200, placeholder: 'Checkout backend' });
    const kind = h('select', { name: 'kind' }, KINDS.map(([value, text]) => h('option', { value }, text)));
    const submit = h('button', { type: 'submit', class: 'primary' }, 'Create key');
    const form = h('form', { class: 'card toolbar', 'aria-label': 'Create an API key', novalidate: true },
      field('Name', name), field('Kind', kind), h('div', { class: 'actions' }, submit),
      h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      clearErrors(form);
      await submitting(form, submit, async () => {
        const created = (await admin(path, { method: 'POST', body: { name: name.value.trim(), kind: kind.value } }))
          .data;
        name.value = '';
        shown.replaceChildren(shownOnce('New API key', created.key, { name: 'new-key',
          note: 'Copy it now: it is shown only once. Send it as x-api-key to GET /auth/authorize.' }));
        shown.querySelector('input').focus();
        keys = (await admin(path)).data;
        paint();
      });
    });
    return form;
  }

  paint();
  return h('section', { class: 'api-keys' },
    h('h1', { tabindex: -1 }, 'API keys'),
    h('p', { class: 'muted' }, 'Keys of the storefront API: exchanged for an access token at GET /auth/authorize. '
      + 'A key is shown once, when it is made; only the first characters are kept to recognise it.'),
    ctx.can('keys:write') ? createForm() : null, shown, list);
}
