// The campaigns' catalog (/dashboard/{account}/campaigns/catalog): the account's brands, tiers and rewards, each
// listed with an Edit button and one form that creates one or edits the one chosen, through the generated
// resource routes (POST, PATCH of the form's fields). Members the form does not show (a tier's entry and exit
// conditions, a reward's conditions, content and other limits) stay as stored. The API's messages stand beside
// the fields they name.

import { admin, inAccount, query } from './api.js';
import { badge, clearErrors, field, h, showErrors, toast } from './dom.js';
import { table } from './table.js';

const STATUS = [['ACTIVE', 'Active'], ['INACTIVE', 'Inactive']];

function select(name, options, none) {
  return h('select', { name }, none ? h('option', { value: '' }, none) : null,
    options.map(([value, label]) => h('option', { value }, label)));
}

const text = (name, attrs = {}) => h('input', { type: 'text', name, autocomplete: 'off', ...attrs });
const number = (raw) => (raw === '' ? null : Number.isNaN(Number(raw)) ? raw : Number(raw));

// One kind of the catalog: its table, and a form whose controls are named by the API's fields.
async function kindSection(ctx, { kind, one, title, intro, columns, fields, read, fill }) {
  const path = inAccount(ctx.account, `/${kind}`);
  const load = async () => (await admin(`${path}${query({ limit: 500 })}`)).data;
  let items = await load();
  let editing = null;
  const writable = ctx.can('campaigns:write');
  const list = h('div', {});
  const heading = h('h3', {}, `New ${one}`);
  const submit = h('button', { type: 'submit', class: 'primary' }, `Create ${one}`);
  const cancel = h('button', { type: 'button', class: 'quiet', hidden: true }, 'Cancel');
  const form = h('form', { class: 'card catalog-form', 'aria-label': `${title}: ${one}`, novalidate: true },
    heading, h('div', { class: 'grid' }, fields()), h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }),
    h('div', { class: 'actions' }, submit, cancel));

  function choose(item) {
    editing = item;
    clearErrors(form);
    form.reset();
    fill(form, item);
    heading.textContent = item ? `Edit ${item.name}` : `New ${one}`;
    submit.textContent = item ? `Save ${one}` : `Create ${one}`;
    cancel.hidden = !item;
    if (item) form.elements.name.focus();
  }
  cancel.addEventListener('click', () => choose(null));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    submit.disabled = true;
    const body = read(form, editing);
    try {
      if (editing) await admin(`${path}/${editing.id}`, { method: 'PATCH', body });
      else await admin(path, { method: 'POST', body });
      toast(editing ? `${body.name} saved.` : `${body.name} created.`);
      items = await load();
      paint();
      choose(null);
    } catch (error) {
      if (error.status === 401) throw error;
      showErrors(form, error);
    } finally {
      submit.disabled = false;
    }
  });

  function paint() {
    list.replaceChildren(table(title, [
      ...columns,
      { label: 'Status', cell: (item) => badge(item.status === 'ACTIVE' ? 'Active' : 'Inactive',
        item.status === 'ACTIVE' ? 'on' : 'off') },
      ...(writable ? [{ label: 'Actions', cell: (item) => h('button', { type: 'button', class: 'small quiet',
        'aria-label': `Edit ${item.name}`, onclick: () => choose(item) }, 'Edit') }] : []),
    ], items.map((item) => ({ item, attrs: { [`data-${one}`]: item.name } })),
    { empty: `No ${kind} yet.` }));
  }
  paint();
  choose(null);
  const id = `catalog-${kind}`;
  return h('section', { class: 'catalog', 'aria-labelledby': id }, h('h2', { id }, title),
    h('p', { class: 'muted' }, intro), list, writable ? form : null);
}

export async function catalogView(ctx) {
  const brands = (await admin(inAccount(ctx.account, `/brands${query({ limit: 500 })}`))).data;
  const brandName = new Map(brands.map((b) => [b.id, b.name]));
  const value = (form, name) => form.elements[name].value.trim();
  const nameAndStatus = () => [field('Name', text('name', { maxlength: 200 })),
    field('Status', select('status', STATUS))];
  const fillCommon = (form, item) => {
    form.elements.name.value = item?.name || '';
    form.elements.status.value = item?.status || 'ACTIVE';
  };

  const sections = await Promise.all([
    kindSection(ctx, {
      kind: 'brands', one: 'brand', title: 'Brands',
      intro: 'The brands a campaign or a reward may belong to.',
      columns: [{ label: 'Name', cell: (b) => h('strong', {}, b.name) }],
      fields: nameAndStatus,
      read: (form) => ({ name: value(form, 'name'), status: value(form, 'status') }),
      fill: fillCommon,
    }),
    kindSection(ctx, {
      kind: 'tiers', one: 'tier', title: 'Tiers',
      intro: 'The loyalty tiers, lowest level first; a campaign may be limited to some of them.',
      columns: [{ label: 'Name', cell: (t) => h('strong', {}, t.name) }, { label: 'Level', cell: (t) => String(t.level) },
        { label: 'Description', class: 'wrap', cell: (t) => t.description || '—' }],
      fields: () => [...nameAndStatus(), field('Level', text('level', { inputmode: 'decimal' })),
        field('Description', h('textarea', { name: 'description', rows: 2 }), { wide: true })],
      read: (form) => ({ name: value(form, 'name'), status: value(form, 'status'), level: number(value(form, 'level')),
        description: value(form, 'description') }),
      fill: (form, item) => {
        fillCommon(form, item);
        form.elements.level.value = item ? String(item.level) : '';
        form.elements.description.value = item?.description || '';
      },
    }),
    kindSection(ctx, {
      kind: 'rewards', one: 'reward', title: 'Rewards',
      intro: 'What campaigns issue: points, a discount, a product. A behaviour campaign names the reward it issues.',
      columns: [{ label: 'Name', cell: (r) => h('strong', {}, r.name) }, { label: 'Type', cell: (r) => r.type },
        { label: 'Brand', cell: (r) => brandName.get(r.brand_id) || '—' },
        { label: 'Conversion factor', cell: (r) => String(r.attributes?.conversion_factor ?? 1) }],
      fields: () => [...nameAndStatus(),
        field('Type', text('type', { placeholder: 'POINTS', spellcheck: 'false' }),
          { hint: 'Capitals and _, such as POINTS or DISCOUNT.' }),
        field('Brand', select('brand_id', brands.map((b) => [b.id, b.name]), '\u2014 none \u2014')),
        field('Conversion factor', text('attributes.conversion_factor', { inputmode: 'decimal' }),
          { hint: 'What one unit of the reward is worth in money (1 when empty).' }),
        field('Description', h('textarea', { name: 'description', rows: 2 }), { wide: true })],
      read: (form, editing) => {
        const factor = number(value(form, 'attributes.conversion_factor'));
        const attributes = { ...(editing?.attributes || {}) };
        if (factor === null) delete attributes.conversion_factor;
        else attributes.conversion_factor = factor;
        return { name: value(form, 'name'), status: value(form, 'status'), type: value(form, 'type') || 'POINTS',
          brand_id: value(form, 'brand_id') || null, description: value(form, 'description'), attributes };
      },
      fill: (form, item) => {
        fillCommon(form, item);
        form.elements.type.value = item?.type || 'POINTS';
        form.elements.brand_id.value = item?.brand_id || '';
        form.elements['attributes.conversion_factor'].value = item?.attributes?.conversion_factor ?? '';
        form.elements.description.value = item?.description || '';
      },
    }),
  ]);
  return h('section', { class: 'catalog-page' },
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: `${ctx.base}/campaigns` }, 'Campaigns'),
      ' / Brands, tiers and rewards'),
    h('h1', { tabindex: -1 }, 'Brands, tiers and rewards'), ...sections);
}
