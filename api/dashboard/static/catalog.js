// The campaigns' catalog (/dashboard/{account}/campaigns/catalog): the account's brands, tiers and rewards, each
// listed with an Edit button and one form that creates one or edits the one chosen, through the generated
// resource routes (POST, PATCH of the form's fields). A tier's entry and exit conditions, a reward's conditions
// and content (conditions.js) are sent only when changed; members the form does not show (a reward's other
// limits) stay as stored. The API's messages stand beside the fields they name.

import { admin, inAccount, query } from './api.js';
import { conditionsEditor, contentEditor } from './conditions.js';
import { badge, clearErrors, field, h, submitting, toast } from './dom.js';
import { table } from './table.js';

const STATUS = [['ACTIVE', 'Active'], ['INACTIVE', 'Inactive']];

function select(name, options, none) {
  return h('select', { name }, none ? h('option', { value: '' }, none) : null,
    options.map(([value, label]) => h('option', { value }, label)));
}

// A place in a form for editors made anew for each item (their stored value is the item's).
function slot() {
  const node = h('div', { class: 'wide editor-slot' });
  return { node, editors: {}, put(editors) {
    this.editors = editors;
    node.replaceChildren(...Object.values(editors).map((editor) => editor.node));
  } };
}

// The changed members of `editors` added to `body`; a content that is not a JSON object stops the save.
function withEditors(body, editors) {
  for (const [name, editor] of Object.entries(editors)) {
    const now = editor.read();
    if (now.error) throw Object.assign(new Error(now.error), { fields: [[name, now.error]], text: now.error });
    if (editor.changed()) body[name] = Array.isArray(now) ? now : now.value;
  }
  return body;
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
    await submitting(form, submit, async () => {
      const body = read(form, editing);
      if (editing) await admin(`${path}/${editing.id}`, { method: 'PATCH', body });
      else await admin(path, { method: 'POST', body });
      toast(editing ? `${body.name} saved.` : `${body.name} created.`);
      items = await load();
      paint();
      choose(null);
    });
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

  const tierRules = slot();
  const rewardRules = slot();
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
        field('Description', h('textarea', { name: 'description', rows: 2 }), { wide: true }), tierRules.node],
      read: (form) => withEditors({ name: value(form, 'name'), status: value(form, 'status'),
        level: number(value(form, 'level')), description: value(form, 'description') }, tierRules.editors),
      fill: (form, item) => {
        fillCommon(form, item);
        form.elements.level.value = item ? String(item.level) : '';
        form.elements.description.value = item?.description || '';
        tierRules.put({
          entry_conditions: conditionsEditor({ name: 'entry_conditions', label: 'Entry conditions',
            value: item?.entry_conditions, none: 'None: a customer enters the tier by its level alone.' }),
          exit_conditions: conditionsEditor({ name: 'exit_conditions', label: 'Exit conditions',
            value: item?.exit_conditions, none: 'None: a customer stays in the tier.' }),
        });
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
        field('Description', h('textarea', { name: 'description', rows: 2 }), { wide: true }), rewardRules.node],
      read: (form, editing) => {
        const factor = number(value(form, 'attributes.conversion_factor'));
        const attributes = { ...(editing?.attributes || {}) };
        if (factor === null) delete attributes.conversion_factor;
        else attributes.conversion_factor = factor;
        return withEditors({ name: value(form, 'name'), status: value(form, 'status'),
          type: value(form, 'type') || 'POINTS', brand_id: value(form, 'brand_id') || null,
          description: value(form, 'description'), attributes }, rewardRules.editors);
      },
      fill: (form, item) => {
        fillCommon(form, item);
        form.elements.type.value = item?.type || 'POINTS';
        form.elements.brand_id.value = item?.brand_id || '';
        form.elements['attributes.conversion_factor'].value = item?.attributes?.conversion_factor ?? '';
        form.elements.description.value = item?.description || '';
        rewardRules.put({
          conditions: conditionsEditor({ name: 'conditions', label: 'Conditions', value: item?.conditions,
            none: 'None: every customer qualifies.' }),
          content: contentEditor({ name: 'content', value: item?.content }),
        });
      },
    }),
  ]);
  return h('section', { class: 'catalog-page' },
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: `${ctx.base}/campaigns` }, 'Campaigns'),
      ' / Brands, tiers and rewards'),
    h('h1', { tabindex: -1 }, 'Brands, tiers and rewards'), ...sections);
}
