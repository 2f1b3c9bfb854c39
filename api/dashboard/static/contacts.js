// The account's contacts (GET /contacts, a page at a time): listed, created and edited with personform.js. A
// contact is a person as the account's CRM knows them (names, e-mail, phone, document); a customer is who buys.

import { can } from './access.js';
import { admin, inAccount, query } from './api.js';
import { h, pager, toast } from './dom.js';
import { personForm, STATUSES } from './personform.js';
import { table } from './table.js';

const PAGE = 50;
const STATUS_LABELS = new Map(STATUSES);

const SPECS = [
  { name: 'first_name', label: 'First name' },
  { name: 'last_name', label: 'Last name' },
  { name: 'email', label: 'E-mail', type: 'email' },
  { name: 'phone', label: 'Phone', type: 'tel' },
  { name: 'document_type', label: 'Document type', placeholder: 'CC, passport' },
  { name: 'document_number', label: 'Document number' },
  { name: 'external_id', label: 'External id', hint: 'The contact\u2019s id in the account\u2019s own systems.' },
  { name: 'country', label: 'Country' },
  { name: 'city', label: 'City' },
  { name: 'status', label: 'Status', options: STATUSES },
  { name: 'dob', label: 'Date of birth', type: 'date' },
];

export const contactName = (c) => [c.first_name, c.last_name].filter(Boolean).join(' ') || c.email || 'No name';

export async function contactsView(ctx) {
  const writer = can(ctx.account, 'customers:write');
  const list = h('div', { class: 'results', 'aria-live': 'polite' });
  const editor = h('div', { class: 'contact-editor' });
  let offset = Number(ctx.search.get('offset')) || 0;

  function showNew() {
    if (!writer) {
      editor.replaceChildren();
      return;
    }
    editor.replaceChildren(h('details', { class: 'new-contact' }, h('summary', {}, 'New contact'),
      personForm({ account: ctx.account, permission: 'customers:write', label: 'New contact',
        submit: 'Create contact', specs: SPECS, item: null,
        identifies: ['first_name', 'last_name', 'email', 'phone', 'document_number', 'external_id'],
        send: async (body) => (await admin(inAccount(ctx.account, '/contacts'), { method: 'POST', body })).data,
        done: async (created) => {
          toast(`Contact created: ${contactName(created)}.`);
          showNew();
          await load();
        } })));
  }

  function showEdit(contact) {
    const title = `Edit ${contactName(contact)}`;
    const cancel = h('button', { type: 'button', class: 'quiet', onclick: () => showNew() }, 'Close');
    editor.replaceChildren(h('section', { class: 'card-section', 'aria-label': title },
      h('h2', { tabindex: -1 }, title),
      personForm({ account: ctx.account, permission: 'customers:write', label: title, submit: 'Save contact',
        specs: SPECS, item: contact,
        send: async (body) => (await admin(inAccount(ctx.account, `/contacts/${encodeURIComponent(contact.id)}`),
          { method: 'PATCH', body })).data,
        done: async (saved) => {
          toast(`Contact saved: ${contactName(saved)}.`);
          await load();
        } }),
      cancel));
    editor.querySelector('h2').focus();
  }

  async function load() {
    const page = await admin(inAccount(ctx.account, `/contacts${query({ limit: PAGE, offset })}`));
    list.replaceChildren(
      table('Contacts', [
        { label: 'Name', cell: (c) => contactName(c) },
        { label: 'E-mail', class: 'wrap', cell: (c) => c.email || '\u2014' },
        { label: 'Phone', cell: (c) => c.phone || '\u2014' },
        { label: 'Document', cell: (c) => (c.document_number ? `${c.document_type || ''} ${c.document_number}`.trim()
          : '\u2014') },
        { label: 'Status', cell: (c) => STATUS_LABELS.get(c.status) || c.status },
        { label: writer ? 'Edit' : 'Details', sort: false, cell: (c) => h('button', { type: 'button', class: 'quiet',
          'aria-label': `${writer ? 'Edit' : 'Show'} ${contactName(c)}`, onclick: () => showEdit(c) },
        writer ? 'Edit' : 'Show') },
      ], page.data.map((item) => ({ item, attrs: { 'data-contact': item.id } })),
      { empty: writer ? 'No contacts yet: create one with “New contact” above.' : 'No contacts yet.' }),
      pager(offset, PAGE, page.count, page.data.length, (next) => { offset = next; load(); }));
  }

  showNew();
  await load();
  return h('section', { class: 'contacts' },
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: `${ctx.base}/customers` }, 'Customers'),
      ' / Contacts'),
    h('h1', { tabindex: -1 }, 'Contacts'), editor, list);
}
