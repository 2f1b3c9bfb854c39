// Campaigns, read-only: the list filtered by type, status and brand (the service filters and computes
// the status), and one campaign's definition.

import { admin, inAccount, query } from './api.js';
import { badge, day, field, h, pager, table, when } from './dom.js';

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

export async function campaignsView(ctx) {
  const brands = await brandsOf(ctx.account);
  const brandName = new Map(brands.map((b) => [b.id, b.name]));
  const filters = { type: ctx.search.get('type') || '', status: ctx.search.get('status') || '',
    brand_id: ctx.search.get('brand_id') || '' };
  let offset = Number(ctx.search.get('offset')) || 0;
  const results = h('div', { class: 'results', 'aria-live': 'polite' });
  const form = h('form', { class: 'toolbar filters', 'aria-label': 'Filters' },
    select('type', 'Type', TYPES.map((t) => [t, words(t)]), filters.type),
    select('status', 'Status', STATUSES.map((t) => [t, words(t)]), filters.status),
    select('brand_id', 'Brand', brands.map((b) => [b.id, b.name]), filters.brand_id));

  async function load() {
    history.replaceState(null, '', `${ctx.base}/campaigns${query({ ...filters, offset: offset || '' })}`);
    const page = await admin(inAccount(ctx.account, `/campaigns/overview${query({ ...filters, limit: PAGE, offset })}`));
    results.replaceChildren(
      table('Campaigns', [
        { label: 'Name', cell: (c) => h('a', { href: `${ctx.base}/campaigns/${c.id}` }, c.name) },
        { label: 'Type', cell: (c) => words(c.type) },
        { label: 'Brand', cell: (c) => brandName.get(c.brand_id) || '—' },
        { label: 'Status', cell: (c) => badge(words(c.status), c.status.toLowerCase()) },
        { label: 'Starts', cell: (c) => day(c.starts_at) },
        { label: 'Ends', cell: (c) => day(c.ends_at) },
      ], page.data.map((item) => ({ item, attrs: { 'data-status': item.status } })),
      { empty: 'No campaign matches these filters.' }),
      pager(offset, PAGE, page.count, page.data.length, (next) => { offset = next; load(); }));
  }

  form.addEventListener('change', (event) => {
    filters[event.target.name] = event.target.value;
    offset = 0;
    load();
  });
  await load();
  return h('section', {}, h('h1', { tabindex: -1 }, 'Campaigns'), form, results);
}

function json(value) {
  return h('pre', { class: 'json' }, JSON.stringify(value, null, 2));
}

export async function campaignView(ctx) {
  const [campaignId] = ctx.params;
  const campaign = (await admin(inAccount(ctx.account, `/campaigns/${campaignId}`))).data;
  const brands = await brandsOf(ctx.account);
  const brand = brands.find((b) => b.id === campaign.brand_id);
  const list = (values) => (values === null || values === undefined ? 'all' : (values.length ? values.join(', ') : 'none'));
  const row = (term, value) => [h('dt', {}, term), h('dd', {}, value)];
  const attributes = Object.keys(campaign.attributes || {}).length ? campaign.attributes : null;
  const content = Object.keys(campaign.content || {}).length ? campaign.content : null;
  return h('section', {},
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: `${ctx.base}/campaigns` }, 'Campaigns'),
      ` / ${campaign.name}`),
    h('div', { class: 'title-row start' }, h('h1', { tabindex: -1 }, campaign.name),
      badge(words(campaign.status), campaign.status.toLowerCase())),
    h('p', { class: 'muted' }, 'Read-only: campaigns are changed through the admin API.'),
    h('dl', { class: 'facts' },
      row('Type', words(campaign.type)),
      row('Brand', brand ? brand.name : '—'),
      row('Status', words(campaign.status)),
      row('Starts', when(campaign.starts_at)),
      row('Ends', when(campaign.ends_at)),
      row('Paused', campaign.paused ? 'yes' : 'no'),
      campaign.finished_at ? row('Finished by hand', when(campaign.finished_at)) : null,
      row('Labels', campaign.labels.length ? campaign.labels.join(', ') : '—'),
      row('Platforms', campaign.platforms.length ? campaign.platforms.join(', ') : 'all'),
      row('Stores', list(campaign.stores)),
      row('Channels', list(campaign.channels)),
      row('Products', list(campaign.products)),
      row('Tiers', campaign.tier_ids ? (campaign.tier_ids.length ? `${campaign.tier_ids.length} tier(s)` : 'none') : 'all'),
      campaign.funded_by ? row('Funded by', campaign.funded_by) : null,
      row('Order', String(campaign.order)),
      row('Id', h('code', {}, campaign.id))),
    attributes ? [h('h2', {}, 'Attributes'), json(attributes)] : null,
    content ? [h('h2', {}, 'Content'), json(content)] : null,
    campaign.codes ? [h('h2', {}, 'Coupon codes'), table('Coupon codes', [
      { label: 'Code', cell: (c) => h('code', {}, c.code) },
      { label: 'Status', cell: (c) => words(c.status) },
      { label: 'Expires', cell: (c) => when(c.expires_at) },
    ], campaign.codes.map((item) => ({ item })), { empty: 'No codes.' })] : null);
}
