// The back office's customers: a search (part of a name or e-mail, a phone, a document number or an external id,
// GET /customer-search) and a customer's page: who they are, their tier, their wallet (rewards held, with what
// expires first) and their path from clicks to events (events.js). A customer is created on the search page and
// edited on their page (personform.js); the account's contacts have their own page (contacts.js).

import { can } from './access.js';
import { admin, inAccount, query } from './api.js';
import { day, field, h, toast } from './dom.js';
import { personForm, STATUSES } from './personform.js';
import { table } from './table.js';
import { count } from './format.js';
import { customerPath } from './events.js';

const customerHref = (ctx, id) => `${ctx.base}/customers/${encodeURIComponent(id)}`;

async function tierNames(ctx) {
  const tiers = (await admin(inAccount(ctx.account, `/tiers${query({ limit: 500 })}`))).data;
  return new Map(tiers.map((t) => [t.id, t.name]));
}

// The customer's own fields a marketer changes (not the computed ones: metrics, wallet, registration).
function customerFields(tiers) {
  return [
    { name: 'name', label: 'Name' },
    { name: 'email', label: 'E-mail', type: 'email' },
    { name: 'phone', label: 'Phone', type: 'tel' },
    { name: 'document_type', label: 'Document type', placeholder: 'CC, passport' },
    { name: 'document_number', label: 'Document number' },
    { name: 'external_id', label: 'External id', hint: 'The customer\u2019s id in the store\u2019s own systems.' },
    { name: 'tier_id', label: 'Tier', options: [...tiers].map(([id, name]) => [id, name]), none: '\u2014 none \u2014' },
    { name: 'status', label: 'Status', options: STATUSES },
    { name: 'country', label: 'Country' },
    { name: 'gender', label: 'Gender' },
    { name: 'dob', label: 'Date of birth', type: 'date', fromApi: (v) => (v ? String(v).slice(0, 10) : ''),
      toApi: (v) => `${v}T00:00:00Z` },
  ];
}

function newCustomerSection(ctx, tiers) {
  if (!can(ctx.account, 'customers:write')) return null;
  const form = personForm({ account: ctx.account, permission: 'customers:write', label: 'New customer',
    submit: 'Create customer', specs: customerFields(tiers), item: null,
    identifies: ['name', 'email', 'phone', 'document_number', 'external_id'],
    send: async (body) => (await admin(inAccount(ctx.account, '/customers'), { method: 'POST', body })).data,
    done: (created) => {
      toast('Customer created.');
      ctx.navigate(customerHref(ctx, created.id));
    } });
  return h('details', { class: 'new-customer' }, h('summary', {}, 'New customer'), form);
}

export async function customersView(ctx) {
  const text = (ctx.search.get('q') || '').trim();
  const q = h('input', { type: 'search', name: 'q', value: text, maxlength: 200, autocomplete: 'off',
    placeholder: 'Ana, ana@example.com, 300 123 4567, CC1020304050' });
  const form = h('form', { class: 'toolbar filters', role: 'search', 'aria-label': 'Search customers' },
    field('Name, e-mail, phone or document number', q),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Search')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    ctx.navigate(`${ctx.base}/customers${query({ q: q.value.trim() })}`);
  });
  let results = h('p', { class: 'muted' }, 'Type part of a name or an e-mail, four digits or more of a phone, or a '
    + 'whole document number.');
  const tiers = await tierNames(ctx);
  if (text) {
    const found = (await admin(inAccount(ctx.account, `/customer-search${query({ q: text, limit: 50 })}`))).data;
    results = table(`Customers matching ${text}`, [
      { label: 'Name', cell: (c) => h('a', { href: customerHref(ctx, c.id) }, c.name || c.email || 'No name') },
      { label: 'E-mail', cell: (c) => c.email || '—' },
      { label: 'Phone', cell: (c) => c.phone || '—' },
      { label: 'Document', cell: (c) => (c.document_number ? `${c.document_type || ''} ${c.document_number}`.trim()
        : '—') },
      { label: 'Tier', cell: (c) => (c.tier_id ? tiers.get(c.tier_id) || 'a removed tier' : '—') },
    ], found.map((item) => ({ item, attrs: { 'data-customer': item.id } })),
    { empty: `No customer matches “${text}”. Try part of the name, the e-mail, or four digits of the phone.` });
  }
  return h('section', { class: 'customers' }, h('h1', { tabindex: -1 }, 'Customers'),
    h('p', {}, h('a', { href: `${ctx.base}/customers/contacts` }, 'Contacts'),
      ': the people behind the account\u2019s customers, listed, created and edited.'),
    form, newCustomerSection(ctx, tiers),
    h('div', { class: 'results', 'aria-live': 'polite' }, results));
}


export async function customerView(ctx) {
  const [customerId] = ctx.params;
  const [customer, tiers] = await Promise.all([
    admin(inAccount(ctx.account, `/customers/${encodeURIComponent(customerId)}`)).then((a) => a.data),
    tierNames(ctx)]);
  const row = (term, value) => (value ? [h('dt', {}, term), h('dd', { 'data-fact': term.toLowerCase() }, value)]
    : null);
  const metrics = customer.metrics || {};
  const totals = customer.wallet?.totals || [];
  return h('section', { class: 'customer-page' },
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: `${ctx.base}/customers` }, 'Customers'),
      ` / ${customer.name || customer.email || 'No name'}`),
    h('h1', { tabindex: -1 }, customer.name || customer.email || 'Customer without a name'),
    h('dl', { class: 'facts' },
      row('Tier', customer.tier_id ? tiers.get(customer.tier_id) || 'a removed tier' : 'none'),
      row('E-mail', customer.email),
      row('Phone', customer.phone),
      row('Document', customer.document_number && `${customer.document_type || ''} ${customer.document_number}`.trim()),
      row('External id', customer.external_id),
      row('Status', customer.status),
      row('Registered', customer.registration_date && day(customer.registration_date)),
      row('Purchases', metrics.purchase_count !== undefined ? count(metrics.purchase_count) : null)),
    h('h2', {}, 'Details'),
    personForm({ account: ctx.account, permission: 'customers:write', label: `Edit ${customer.name || 'customer'}`,
      submit: 'Save customer', specs: customerFields(tiers), item: customer,
      send: async (body) => (await admin(inAccount(ctx.account, `/customers/${encodeURIComponent(customerId)}`),
        { method: 'PATCH', body })).data,
      done: () => {
        toast('Customer saved.');
        ctx.navigate(customerHref(ctx, customerId), { replace: true });
      } }),
    h('h2', {}, 'Wallet'),
    table('Rewards held', [
      { label: 'Reward', cell: (t) => t.reward?.name || 'a removed reward' },
      { label: 'Amount', class: 'num', sort: (t) => Number(t.total), cell: (t) => count(t.total) },
      { label: 'First expiry', sort: (t) => t.expiration_date || null,
        cell: (t) => (t.expiration_date ? day(t.expiration_date) : 'never') },
    ], totals.map((item) => ({ item, attrs: { 'data-reward': item.reward_id } })),
    { empty: 'No rewards held yet: purchases earn them under the account\'s campaigns.' }),
    h('h2', {}, 'Customer path'),
    await customerPath(ctx, customerId));
}
