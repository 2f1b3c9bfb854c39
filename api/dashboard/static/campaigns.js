// Campaigns: the list filtered by type, status and brand (the service filters and computes the status), with a
// link to create one; one campaign's definition, its attributes and content as tables of names and values, and
// its edit form (campaignedit.js).

import { admin, inAccount, query } from './api.js';
import { campaignEditSection } from './campaignedit.js';
import { badge, day, field, h, pager, when } from './dom.js';
import { table } from './table.js';
import { platformsText } from './names.js';
import { refocusSort } from './table.js';

const PAGE = 20;
const TYPES = ['BEHAVIOR', 'COUPONS', 'PUNCH_CARDS', 'REFERRALS', 'SCORE_STREAKS'];
const STATUSES = ['RUNNING', 'SCHEDULED', 'PAUSED', 'FINISHED', 'NOT FINISHED'];
const words = (text) => text.charAt(0) + text.slice(1).toLowerCase().replace(/_/g, ' ');

function select(name, label, options, current) {
  return field(label, h('select', { name },
    h('option', { value: '' }, 'All'),
    options.map(([value, text]) => h('option', { value, selected: value === current }, text))));
}

async function brandsOf(account) {
  return (await admin(inAccount(account, `/brands${query({ limit: 500 })}`))).data;
}

// When a finished campaign ended: FINISHED means ended by hand (finished_at) or past its end date (ends_at),
// so it ended at the earlier of the two; `byHand` when that was finished_at.
export function ended(campaign) {
  if (campaign.status !== 'FINISHED') return null;
  const { finished_at: finished, ends_at: ends } = campaign;
  if (finished && (!ends || new Date(finished) <= new Date(ends))) return { at: finished, byHand: true };
  return { at: ends, byHand: false };
}

function endCell(campaign) {
  const end = ended(campaign);
  if (!end) return day(campaign.ends_at);
  return h('span', { title: end.byHand ? 'Ended by hand' : 'Reached its end date' }, `Ended ${day(end.at)}`);
}

export async function campaignsView(ctx) {
  const brands = await brandsOf(ctx.account);
  const brandName = new Map(brands.map((b) => [b.id, b.name]));
  const filters = { type: ctx.search.get('type') || '', status: ctx.search.get('status') || '',
    brand_id: ctx.search.get('brand_id') || '' };
  let offset = Number(ctx.search.get('offset')) || 0;
  // The API orders the whole list (GET .../campaigns/overview?sort=): the campaigns' own order unless asked.
  const sorts = ['order', 'name', 'created', 'starts', 'ends', 'status'];
  let sort = sorts.includes((ctx.search.get('sort') || '').replace(/^-/, '')) ? ctx.search.get('sort') : 'order';
  const results = h('div', { class: 'results', 'aria-live': 'polite' });
  const form = h('form', { class: 'toolbar filters', 'aria-label': 'Filters' },
    select('type', 'Type', TYPES.map((t) => [t, words(t)]), filters.type),
    select('status', 'Status', STATUSES.map((t) => [t, words(t)]), filters.status),
    select('brand_id', 'Brand', brands.map((b) => [b.id, b.name]), filters.brand_id));

  async function load() {
    const ordered = sort === 'order' ? '' : sort;
    history.replaceState(null, '', `${ctx.base}/campaigns${query({ ...filters, sort: ordered, offset: offset || '' })}`);
    const page = await admin(inAccount(ctx.account, `/campaigns/overview${query({ ...filters, sort: ordered,
      limit: PAGE, offset })}`));
    results.replaceChildren(
      table('Campaigns', [
        { label: 'Name', sortKey: 'name', cell: (c) => h('a', { href: `${ctx.base}/campaigns/${c.id}` }, c.name) },
        { label: 'Type', cell: (c) => words(c.type) },
        { label: 'Brand', cell: (c) => brandName.get(c.brand_id) || '—' },
        { label: 'Status', sortKey: 'status', title: 'Running, scheduled, paused, finished',
          cell: (c) => badge(words(c.status), c.status.toLowerCase()) },
        { label: 'Starts', sortKey: 'starts', cell: (c) => day(c.starts_at) },
        { label: 'Ends', sortKey: 'ends', cell: endCell },
      ], page.data.map((item) => ({ item, attrs: { 'data-status': item.status } })),
      { empty: 'No campaign matches these filters: set a filter back to All to see more.',
        server: { sort, onSort: (next) => { sort = next; offset = 0; load().then(() => refocusSort(results, next)); } } }),
      pager(offset, PAGE, page.count, page.data.length, (next) => { offset = next; load(); }));
  }

  form.addEventListener('change', (event) => {
    filters[event.target.name] = event.target.value;
    offset = 0;
    load();
  });
  await load();
  return h('section', {},
    h('div', { class: 'title-row' }, h('h1', { tabindex: -1 }, 'Campaigns'),
      h('div', { class: 'actions' },
        h('a', { class: 'button', href: `${ctx.base}/campaigns/catalog` }, 'Brands, tiers and rewards'),
        ctx.can('campaigns:write') ? h('a', { class: 'button primary', href: `${ctx.base}/campaigns/new` },
          'New campaign') : null)),
    form, results);
}

const label = (key) => { const text = key.replace(/_/g, ' '); return text.charAt(0).toUpperCase() + text.slice(1); };

// A condition group list (OR of ANDs) as words: "Order Value greater than 10 and Purchase Count ...; or ...".
function isConditions(value) {
  return Array.isArray(value) && value.length > 0 && value.every((group) => Array.isArray(group)
    && group.every((c) => c && typeof c === 'object' && 'type' in c && 'operator' in c));
}

function conditionsText(groups) {
  return h('ul', { class: 'conditions' }, groups.map((group, i) => h('li', {},
    i ? h('span', { class: 'muted' }, 'or ') : null,
    group.map((c) => `${c.type} ${c.operator === 'grater than' ? 'greater than' : c.operator} ${c.value}`).join(' and '))));
}

// A value of an attribute or content member as people read it; `names` gives the name of a known id.
function shown(value, names) {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'string' && names.has(value)) return h('span', { title: value }, names.get(value));
  if (isConditions(value)) return conditionsText(value);
  if (Array.isArray(value)) {
    if (!value.length) return 'none';
    if (value.every((v) => v === null || typeof v !== 'object')) return value.map((v) => (names.get(v) || String(v))).join(', ');
    return value.map((v) => shown(v, names));
  }
  if (typeof value === 'object') return keyValues(value, names);
  return String(value);
}

// An object as a table of its members' names and values (nested objects as tables inside).
function keyValues(object, names) {
  const named = (value) => typeof value === 'string' && names.has(value);
  return h('dl', { class: 'facts nested' }, Object.entries(object).map(([key, value]) => [
    h('dt', {}, label(named(value) ? key.replace(/_id$/, '') : key)),  // "reward_id": "Reward", then its name
    h('dd', { 'data-key': key }, shown(value, names))]));
}

export async function campaignView(ctx) {
  const [campaignId] = ctx.params;
  const campaign = (await admin(inAccount(ctx.account, `/campaigns/${campaignId}`))).data;
  const brands = await brandsOf(ctx.account);
  const brand = brands.find((b) => b.id === campaign.brand_id);
  // Ids an attribute may hold (the reward it issues, a tier): shown by name.
  const [rewards, tiers] = await Promise.all(['rewards', 'tiers'].map(async (kind) =>
    (await admin(inAccount(ctx.account, `/${kind}${query({ limit: 500 })}`))).data));
  const names = new Map([...brands, ...rewards, ...tiers].map((item) => [item.id, item.name]));
  const end = ended(campaign);
  const list = (values) => (values === null || values === undefined ? 'all' : (values.length ? values.join(', ') : 'none'));
  const row = (term, value) => [h('dt', {}, term), h('dd', {}, value)];
  const attributes = Object.keys(campaign.attributes || {}).length ? campaign.attributes : null;
  const content = Object.keys(campaign.content || {}).length ? campaign.content : null;
  return h('section', {},
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: `${ctx.base}/campaigns` }, 'Campaigns'),
      ` / ${campaign.name}`),
    h('div', { class: 'title-row start' }, h('h1', { tabindex: -1 }, campaign.name),
      badge(words(campaign.status), campaign.status.toLowerCase())),
    h('dl', { class: 'facts' },
      row('Type', words(campaign.type)),
      row('Brand', brand ? brand.name : '—'),
      row('Status', words(campaign.status)),
      row('Starts', when(campaign.starts_at)),
      end ? row('Ended', `${when(end.at)}${end.byHand ? ' (finished by hand)' : ' (its end date)'}`)
        : row('Ends', when(campaign.ends_at)),
      end && end.byHand && campaign.ends_at ? row('Planned end', when(campaign.ends_at)) : null,
      row('Paused', campaign.paused ? 'yes' : 'no'),
      row('Labels', campaign.labels.length ? campaign.labels.join(', ') : '—'),
      row('Platforms', campaign.platforms.length ? platformsText(campaign.platforms) : 'all'),
      row('Stores', list(campaign.stores)),
      row('Channels', list(campaign.channels)),
      row('Products', list(campaign.products)),
      row('Tiers', campaign.tier_ids ? (campaign.tier_ids.length ? campaign.tier_ids.map((id) => names.get(id) || id)
        .join(', ') : 'none') : 'all'),
      campaign.funded_by ? row('Funded by', campaign.funded_by) : null,
      row('Order', String(campaign.order)),
      row('Id', h('code', {}, campaign.id))),
    attributes ? [h('h2', {}, 'Attributes'), h('div', { 'data-section': 'attributes' }, keyValues(attributes, names))]
      : null,
    content ? [h('h2', {}, 'Content'), h('div', { 'data-section': 'content' }, keyValues(content, names))] : null,
    campaign.codes ? [h('h2', {}, 'Coupon codes'), table('Coupon codes', [
      { label: 'Code', cell: (c) => h('code', {}, c.code) },
      { label: 'Status', cell: (c) => words(c.status) },
      { label: 'Expires', sort: (c) => c.expires_at || null, cell: (c) => when(c.expires_at) },
    ], campaign.codes.map((item) => ({ item })), { empty: 'No codes.' })] : null,
    await campaignEditSection(ctx, campaign));
}
