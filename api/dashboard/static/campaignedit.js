// A campaign created (/campaigns/new) or edited on its page, through the admin API's campaign documents: its
// name, type, brand, dates (in the browser's zone, stored in UTC), pause, labels, the stores, channels and
// products it is limited to (empty: all), who funds it and its order; a behaviour campaign's earning (the event
// type, the reward, the amounts, the expiry, the daily limit, the conditions); a coupon campaign's new codes;
// its content (a JSON object). A create is one POST, an edit one PATCH of what changed; members the form does
// not show (tiers, platforms, the codes already issued) stay as stored. The API checks everything: its messages stand beside
// the fields they name ("attributes.reward_id", "ends_at").

import { editableIf } from './access.js';
import { admin, inAccount, query } from './api.js';
import { conditionsEditor, contentEditor } from './conditions.js';
import { clearErrors, field, h, showErrors, submitting, toast } from './dom.js';
import { localValue, utcValue } from './lifecycle.js';

const TYPES = [['BEHAVIOR', 'Behaviour: earn on events'], ['COUPONS', 'Coupons'], ['PUNCH_CARDS', 'Punch cards'],
  ['REFERRALS', 'Referrals'], ['SCORE_STREAKS', 'Score streaks']];
const EARNING = ['amount', 'per_currency_unit', 'expires_in_days', 'max_per_day'];
const listText = (values) => (values || []).join(', ');
const listOf = (text) => text.split(',').map((part) => part.trim()).filter(Boolean);

function text(name, value, attrs = {}) {
  return h('input', { type: 'text', name, value: value ?? '', autocomplete: 'off', ...attrs });
}

function choice(name, options, current, { none } = {}) {
  return h('select', { name },
    none ? h('option', { value: '' }, none) : null,
    options.map(([value, label]) => h('option', { value, selected: value === current }, label)));
}

async function choices(account) {
  const list = async (kind) => (await admin(inAccount(account, `/${kind}${query({ limit: 500 })}`))).data;
  const [brands, rewards, types] = await Promise.all([list('brands'), list('rewards'), list('custom-event-types')]);
  return { brands, rewards, eventTypes: ['PURCHASE', ...types.filter((t) => t.active).map((t) => t.name)] };
}

// The form of `campaign` (null: a new one); `done(saved)` gets the API's answer.
async function campaignForm(ctx, campaign, done) {
  const { brands, rewards, eventTypes } = await choices(ctx.account);
  const current = campaign || { type: 'BEHAVIOR', attributes: {}, labels: [], paused: false, order: 0 };
  const earning = current.attributes || {};
  const form = h('form', { class: 'card campaign-form', novalidate: true,
    'aria-label': campaign ? `Edit ${campaign.name}` : 'New campaign' });
  const typeSelect = choice('type', TYPES, current.type);
  const conditions = conditionsEditor({ name: 'attributes.conditions', label: 'Conditions',
    value: earning.conditions, none: 'None: every event of the type earns.' });
  const content = contentEditor({ name: 'content', value: current.content });
  const behaviour = h('fieldset', { class: 'earning' }, h('legend', {}, 'Earning'),
    h('p', { class: 'hint' }, 'What a customer earns, and for which event: a fixed amount per event, plus an amount '
      + 'per unit of the order\u2019s currency.'),
    h('div', { class: 'grid' },
      field('Event type', choice('attributes.event_type', eventTypes.map((t) => [t, t]), earning.event_type,
        { none: '— choose —' })),
      field('Reward', choice('attributes.reward_id', rewards.map((r) => [r.id, r.name]), earning.reward_id,
        { none: '— choose —' })),
      field('Amount per event', text('attributes.amount', earning.amount, { inputmode: 'decimal' })),
      field('Amount per currency unit', text('attributes.per_currency_unit', earning.per_currency_unit,
        { inputmode: 'decimal' })),
      field('Expires after (days)', text('attributes.expires_in_days', earning.expires_in_days,
        { inputmode: 'numeric' }), { hint: 'Empty: never.' }),
      field('At most per customer and day', text('attributes.max_per_day', earning.max_per_day,
        { inputmode: 'numeric' }), { hint: 'Empty: no limit.' }), conditions.node));
  const codes = h('textarea', { name: 'codes', rows: 3, spellcheck: 'false', placeholder: 'SPRING-001\nSPRING-002' });
  const coupons = h('fieldset', { class: 'coupons' }, h('legend', {}, 'Coupon codes'),
    field('New codes', codes, { wide: true, hint: campaign
      ? 'One per line, added to the codes already issued (which stay as they are).'
      : 'One per line; each is available until a customer reserves it.' }));
  const save = h('button', { type: 'submit', class: 'primary' }, campaign ? 'Save campaign' : 'Create campaign');
  form.append(
    h('div', { class: 'grid' },
      field('Name', text('name', current.name, { maxlength: 200 })),
      field('Type', typeSelect),
      field('Brand', choice('brand_id', brands.map((b) => [b.id, b.name]), current.brand_id, { none: '— none —' })),
      field('Funded by', text('funded_by', current.funded_by, { maxlength: 100 }), { hint: 'Optional.' }),
      field('Starts', h('input', { type: 'datetime-local', name: 'starts_at', step: 1,
        value: localValue(current.starts_at) }), { hint: 'Empty: at once.' }),
      field('Ends', h('input', { type: 'datetime-local', name: 'ends_at', step: 1, value: localValue(current.ends_at) }),
        { hint: 'Empty: no end date.' }),
      field('Labels', text('labels', listText(current.labels)), { hint: 'Names separated by commas.' }),
      field('Order', text('order', current.order ?? 0, { inputmode: 'decimal' }),
        { hint: 'Lower first in the storefront\u2019s list.' }),
      field('Stores', text('stores', listText(current.stores)), { hint: 'Separated by commas; empty: every store.' }),
      field('Channels', text('channels', listText(current.channels)), { hint: 'Empty: every channel.' }),
      field('Products', text('products', listText(current.products)), { hint: 'Empty: every product.' })),
    h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'paused', checked: Boolean(current.paused) }),
      ' Paused: customers neither see it nor earn from it until it is resumed'),
    behaviour, coupons, h('div', { class: 'grid content-grid' }, content.node),
    h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }), h('div', { class: 'actions' }, save));
  const showType = () => {
    behaviour.hidden = typeSelect.value !== 'BEHAVIOR';
    coupons.hidden = typeSelect.value !== 'COUPONS';
  };
  typeSelect.addEventListener('change', showType);
  showType();

  const value = (name) => form.elements[name].value.trim();
  const number = (name) => (value(name) === '' ? null : Number.isNaN(Number(value(name))) ? value(name)
    : Number(value(name)));
  function wanted() {
    const body = {
      name: value('name'), type: value('type'), brand_id: value('brand_id') || null,
      funded_by: value('funded_by') || null, starts_at: utcValue(value('starts_at')),
      ends_at: utcValue(value('ends_at')), labels: listOf(value('labels')), order: number('order') ?? 0,
      stores: listOf(value('stores')), channels: listOf(value('channels')), products: listOf(value('products')),
      paused: form.elements.paused.checked,
    };
    for (const name of ['stores', 'channels', 'products']) if (!body[name].length) body[name] = null;
    const written = content.read();
    if (written.error) throw Object.assign(new Error(written.error), { fields: [['content', written.error]],
      text: written.error });
    if (content.changed()) body.content = written.value;
    if (body.type === 'BEHAVIOR') {
      const attributes = { ...(current.attributes || {}) };
      attributes.event_type = value('attributes.event_type') || null;
      attributes.reward_id = value('attributes.reward_id') || null;
      for (const name of EARNING) attributes[name] = number(`attributes.${name}`);
      if (conditions.changed()) attributes.conditions = conditions.read();
      for (const [name, v] of Object.entries(attributes)) if (v === null) delete attributes[name];
      body.attributes = attributes;
    }
    const added = codes.value.split('\n').map((line) => line.trim()).filter(Boolean);
    if (body.type === 'COUPONS' && added.length) {
      body.codes = [...(campaign?.codes || []).map(({ code, status, expires_at: expires }) => ({ code, status,
        expires_at: expires })), ...added.map((code) => ({ code }))];
    }
    return body;
  }
  function changed(body) {
    if (!campaign) return body;
    return Object.fromEntries(Object.entries(body).filter(([name, v]) =>
      JSON.stringify(v ?? null) !== JSON.stringify(campaign[name] ?? null)));
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    let body;
    try {
      body = changed(wanted());
    } catch (error) {
      showErrors(form, error);
      return;
    }
    if (!Object.keys(body).length) {
      toast('Nothing changed.');
      return;
    }
    await submitting(form, save, async () => {
      const path = inAccount(ctx.account, campaign ? `/campaigns/${campaign.id}` : '/campaigns');
      const saved = (await admin(path, { method: campaign ? 'PATCH' : 'POST', body })).data;
      codes.value = '';
      await done(saved);
    });
  });
  return form;
}

// The campaign page's section: the form, read-only for a role that may not change campaigns.
export async function campaignEditSection(ctx, campaign) {
  const form = await campaignForm(ctx, campaign, async (saved) => {
    toast(`${saved.name} saved.`);
    ctx.navigate(`${ctx.base}/campaigns/${saved.id}`, { replace: true });
  });
  return h('section', { class: 'campaign-edit', 'aria-labelledby': 'campaign-edit-title' },
    h('h2', { id: 'campaign-edit-title' }, ctx.can('campaigns:write') ? 'Edit the campaign' : 'Definition'),
    editableIf(ctx.account, 'campaigns:write', form));
}

// /dashboard/{account}/campaigns/new
export async function newCampaignView(ctx) {
  const form = await campaignForm(ctx, null, async (saved) => {
    toast(`Campaign ${saved.name} created.`);
    ctx.navigate(`${ctx.base}/campaigns/${saved.id}`);
  });
  return h('section', {},
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: `${ctx.base}/campaigns` }, 'Campaigns'),
      ' / New'),
    h('h1', { tabindex: -1 }, 'New campaign'), form);
}
