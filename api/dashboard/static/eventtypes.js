// The account's custom event types (documents of kind custom_event_types): the names, besides PURCHASE, that the
// storefront API accepts as an event's type. An inactive type is refused by the API until it is made active again.
// One form creates a type or edits the one chosen in the list.

import { admin, inAccount, query } from './api.js';
import { badge, clearErrors, field, h, submitting, toast } from './dom.js';
import { table } from './table.js';

export async function eventTypesView(ctx) {
  const path = inAccount(ctx.account, '/custom-event-types');
  const load = async () => (await admin(`${path}${query({ limit: 500 })}`)).data;
  let types = await load();
  let editing = null;
  const writable = ctx.can('campaigns:write');
  const list = h('div', {});

  const name = h('input', { type: 'text', name: 'name', maxlength: 64, autocomplete: 'off', spellcheck: 'false',
    placeholder: 'store_visit' });
  const description = h('textarea', { name: 'description', rows: 2 });
  const active = h('input', { type: 'checkbox', name: 'active', checked: true });
  const heading = h('h2', {}, 'New event type');
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Create event type');
  const cancel = h('button', { type: 'button', class: 'quiet', hidden: true }, 'Cancel');
  const form = h('form', { class: 'card event-type-form', 'aria-label': 'Event type', novalidate: true },
    heading, field('Name', name, { hint: 'A letter, then letters, digits, _, . or - (at most 64).' }),
    field('Description', description, { wide: true }),
    h('label', { class: 'check' }, active, ' Active: the API accepts events of this type'),
    h('div', { class: 'actions' }, submit, cancel),
    h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }));

  function choose(type) {
    editing = type;
    clearErrors(form);
    name.value = type ? type.name : '';
    description.value = type ? type.description || '' : '';
    active.checked = type ? type.active : true;
    heading.textContent = type ? `Edit ${type.name}` : 'New event type';
    submit.textContent = type ? 'Save event type' : 'Create event type';
    cancel.hidden = !type;
    if (type) name.focus();
  }
  cancel.addEventListener('click', () => choose(null));

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    const body = { name: name.value.trim(), description: description.value.trim(), active: active.checked };
    await submitting(form, submit, async () => {
      if (editing) await admin(`${path}/${editing.id}`, { method: 'PATCH', body });
      else await admin(path, { method: 'POST', body });
      toast(editing ? `${body.name} saved.` : `${body.name} created.`);
      types = await load();
      paint();
      choose(null);
    });
  });

  function paint() {
    list.replaceChildren(table('Custom event types', [
      { label: 'Name', cell: (t) => h('code', {}, t.name) },
      { label: 'Description', class: 'wrap', cell: (t) => t.description || '—' },
      { label: 'Status', cell: (t) => badge(t.active ? 'Active' : 'Inactive', t.active ? 'on' : 'off') },
      { label: 'Actions', cell: (t) => (writable ? h('button', { type: 'button', class: 'small quiet',
        'aria-label': `Edit ${t.name}`, onclick: () => choose(t) }, 'Edit') : null) },
    ], types.map((t) => ({ item: t, attrs: { 'data-type': t.name, 'data-active': String(t.active) } })),
    { empty: 'No custom event types: the shop can send purchases only. Create one (such as '
      + 'app_open) to count other actions.' }));
  }

  paint();
  return h('section', { class: 'event-types' },
    h('h1', { tabindex: -1 }, 'Event types'),
    h('p', { class: 'muted' }, 'Besides PURCHASE, the types of event the storefront API accepts from this account. '
      + 'Campaigns earn on them and connections forward them by name.'),
    list, writable ? form : null);
}
