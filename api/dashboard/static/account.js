// The account itself (/dashboard/{account}/account): its name and environment, changed with one PATCH
// (permission account:write: the owner and the admin), and, for the operator, a form that creates another
// account (POST /accounts) and opens it. The API's messages stand beside the fields they name.

import { isOperator } from './access.js';
import { admin, inAccount } from './api.js';
import { clearErrors, field, h, submitting, toast, when } from './dom.js';

const ENVIRONMENTS = [['production', 'Production'], ['sandbox', 'Sandbox']];

function environment(current) {
  return h('select', { name: 'environment' },
    ENVIRONMENTS.map(([value, label]) => h('option', { value, selected: value === current }, label)));
}

function onSubmit(form, button, send) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    await submitting(form, button, send);
  });
}

export async function accountView(ctx) {
  let account = (await admin(inAccount(ctx.account, ''))).data;
  const writable = ctx.can('account:write');
  const facts = h('dl', { class: 'facts' });
  const paintFacts = () => facts.replaceChildren(
    h('dt', {}, 'Id'), h('dd', {}, h('code', {}, account.id)),
    h('dt', {}, 'Created'), h('dd', {}, when(account.created_at)),
    h('dt', {}, 'Changed'), h('dd', {}, when(account.updated_at)));

  const name = h('input', { type: 'text', name: 'name', value: account.name, maxlength: 200, autocomplete: 'off' });
  const save = h('button', { type: 'submit', class: 'primary' }, 'Save account');
  const form = h('form', { class: 'card account-form', 'aria-label': 'The account', novalidate: true },
    h('div', { class: 'grid' }, field('Name', name), field('Environment', environment(account.environment),
      { hint: 'Sandbox for tests; its keys and data stay apart from production\u2019s.' })),
    h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }), h('div', { class: 'actions' }, save));
  onSubmit(form, save, async () => {
    const body = { name: name.value.trim(), environment: form.elements.environment.value };
    account = (await admin(inAccount(ctx.account, ''), { method: 'PATCH', body })).data;
    const choice = document.querySelector(`#account option[value="${CSS.escape(account.id)}"]`);
    if (choice) choice.textContent = `${account.name} (${account.environment})`;  // the switcher, as it loads it
    paintFacts();
    toast(`${account.name} saved.`);
  });

  let create = null;
  if (isOperator()) {
    const newName = h('input', { type: 'text', name: 'name', maxlength: 200, autocomplete: 'off' });
    const add = h('button', { type: 'submit', class: 'primary' }, 'Create account');
    create = h('form', { class: 'card account-form', 'aria-label': 'New account', novalidate: true },
      h('h2', {}, 'New account'),
      h('div', { class: 'grid' }, field('Name', newName), field('Environment', environment('sandbox'))),
      h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }), h('div', { class: 'actions' }, add));
    onSubmit(create, add, async () => {
      const created = (await admin('/accounts', { method: 'POST',
        body: { name: newName.value.trim(), environment: create.elements.environment.value } })).data;
      toast(`${created.name} created.`);
      window.location.assign(`/dashboard/${created.id}/account`);  // the switcher then lists it
    });
  }

  paintFacts();
  return h('section', { class: 'account-page' },
    h('h1', { tabindex: -1 }, 'Account'),
    h('p', { class: 'muted' }, writable ? 'The account\u2019s name and environment, as the account switcher shows them.'
      : 'The account\u2019s name and environment; the owner and admins change them.'),
    writable ? form : h('p', {}, `${account.name} (${account.environment})`),
    facts, create);
}
