// One event and where its attribution came from (its lineage, recorded when the event was written): the
// click behind its tracking_id, then for each field the event's value, which part of the event it was read
// from and by which rule, the click's value and where the click got it, and whether the two agree. And a
// customer's path (shown on their page): their events, newest first, each with the click that led to it.

import { admin, inAccount, query } from './api.js';
import { badge, h, pager, when } from './dom.js';
import { table } from './table.js';
import { count, money } from './format.js';
import { platformName } from './names.js';

const LINEAGE_FIELDS = ['tracking_id', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'];
const EVENT_SOURCES = {
  'event.top_level': 'the event’s top level',
  'event.attribution': 'the event’s attribution object',
  'event.properties': 'the event’s properties',
};
const CLICK_ORIGINS = {
  query: 'from the address the visitor clicked',
  destination: 'from the link’s destination',
  fallback: 'from the link’s fallback URL',
  defaults: 'from the defaults of this kind of link',
  unknown: 'origin not recorded: a click stored before clicks kept it',
};
const ROUTES = {
  destination: 'the destination', fallback: 'the fallback URL', intent: 'the app (intent URL)',
  deeplink: 'the app (deeplink)', play: 'Google Play', app_store: 'the App Store', broken: 'nothing (broken link)',
};

const shownValue = (value) => (value === null || value === undefined || value === ''
  ? h('span', { class: 'muted' }, 'none') : h('code', {}, value));

async function campaignName(ctx, campaignId) {
  if (!campaignId) return null;
  try {
    return (await admin(inAccount(ctx.account, `/campaigns/${campaignId}`))).data.name;
  } catch (error) {
    if (error.status === 404) return null;  // a campaign removed since: its id stays
    throw error;
  }
}

// A customer's name (their id when they have none, or were removed since).
export async function nameOfCustomer(ctx, customerId) {
  try {
    const customer = (await admin(inAccount(ctx.account, `/customers/${encodeURIComponent(customerId)}`))).data;
    return customer.name || customer.email || customerId;
  } catch (error) {
    if (error.status === 404) return customerId;
    throw error;
  }
}

function agreement(agrees, click) {
  if (agrees === true) return badge('Agrees', 'agrees');
  if (agrees === false) return badge('Differs', 'differs');
  return click ? badge('Neither has one', 'none') : badge('No click to compare', 'none');
}

function clickNode(ctx, click, name) {
  if (!click) {
    return h('li', { class: 'node click none', 'data-node': 'click' },
      h('h3', {}, 'No click behind this event'),
      h('p', { class: 'muted' }, 'Its tracking id matches no click of this account (or it sent none), so the '
        + 'event is not in the conversion report.'));
  }
  const row = (term, value) => [h('dt', {}, term), h('dd', {}, value)];
  return h('li', { class: 'node click', 'data-node': 'click' },
    h('h3', {}, 'Click'),
    h('dl', { class: 'facts compact' },
      row('Link', click.link_id ? h('a', { href: `${ctx.base}/links/${click.link_id}` }, click.link_code || click.link_id)
        : '—'),
      row('Campaign', click.campaign_id ? h('a', { href: `${ctx.base}/campaigns/${click.campaign_id}` },
        name || click.campaign_id) : '—'),
      row('Clicked', when(click.clicked_at)),
      row('Platform', platformName(click.platform)),
      row('Went to', ROUTES[click.answer] || click.answer || '—'),
      row('Tracking id', h('code', {}, click.tracking_id))));
}

function fieldStep(name, step) {
  const click = step.click;
  return h('li', { class: 'field-path', 'data-field': name },
    h('div', { class: 'field-head' }, h('h3', {}, name), agreement(step.agrees, step.click)),
    h('div', { class: 'path' },
      h('div', { class: 'node from-click', 'data-side': 'click' },
        h('p', { class: 'side' }, 'The click'),
        click ? [h('p', {}, shownValue(click.value)),
          click.origin ? h('p', { class: 'origin' }, CLICK_ORIGINS[click.origin] || `from ${click.origin}`) : null,
          click.rule ? h('p', { class: 'rule' }, click.rule) : null]
          : h('p', { class: 'muted' }, 'no click')),
      h('span', { class: 'arrow', 'aria-hidden': 'true' }, '→'),
      h('div', { class: 'node to-event', 'data-side': 'event' },
        h('p', { class: 'side' }, 'The event'),
        h('p', {}, shownValue(step.value)),
        h('p', { class: 'origin' }, step.source ? ['from ', EVENT_SOURCES[step.source] || step.source] : 'not sent'),
        step.rule ? h('p', { class: 'rule' }, step.rule) : null)));
}

function lineageSection(ctx, lineage, name) {
  if (!lineage) {
    return h('p', { class: 'empty', 'data-lineage': 'none' }, 'This event was recorded before lineage existed: '
      + 'where its values came from was not kept.');
  }
  return [
    h('ol', { class: 'lineage', 'aria-label': 'From click to event' },
      clickNode(ctx, lineage.click, name),
      h('li', { class: 'node event', 'data-node': 'fields' },
        h('h3', {}, 'The event’s attribution, field by field'),
        h('ul', { class: 'fields' }, LINEAGE_FIELDS.filter((f) => lineage[f]).map((f) => fieldStep(f, lineage[f]))))),
  ];
}

export async function eventView(ctx) {
  const [eventId] = ctx.params;
  const event = (await admin(inAccount(ctx.account, `/events/${eventId}`))).data;
  const lineage = event.lineage || null;
  const name = await campaignName(ctx, lineage?.click?.campaign_id);
  const row = (term, value) => (value ? [h('dt', {}, term), h('dd', {}, value)] : null);
  const customerHref = event.customer_id ? `${ctx.base}/customers/${encodeURIComponent(event.customer_id)}` : null;
  const customerName = event.customer_id ? await nameOfCustomer(ctx, event.customer_id) : null;
  const customer = customerHref ? h('a', { href: customerHref, title: 'The customer’s page' }, customerName) : null;
  return h('section', { class: 'event-page' },
    customerHref ? h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' },
      h('a', { href: customerHref }, customerName), ` / ${event.type}`) : null,
    h('div', { class: 'title-row start' }, h('h1', { tabindex: -1 }, `${event.type} event`),
      event.reversed_at ? badge('Reversed', 'off') : null),
    h('dl', { class: 'facts' },
      row('Type', event.type),
      row('Customer', customer),
      row('Order id', event.order_id),
      row('Value', event.value !== null && event.value !== undefined ? money(event.value, event.currency) : null),
      row('Issued', when(event.issued_at)),
      row('Received', when(event.received_at)),
      row('Reversed', event.reversed_at && when(event.reversed_at)),
      row('Id', h('code', {}, event.id))),
    h('h2', {}, 'From click to event'),
    h('p', { class: 'muted' }, 'Recorded when the event was written. The event’s values are what the client sent; '
      + 'the click’s are what the link gave it.'),
    lineageSection(ctx, lineage, name));
}

const utmText = (utm) => {
  const parts = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content']
    .filter((k) => utm && utm[k]).map((k) => h('span', { class: 'line' }, `${k}=${utm[k]}`));
  return parts.length ? h('div', {}, parts) : '—';
};

const PATH_PAGE = 50;

// A customer's path: their events, newest first, each with the click that led to it; paged. The customer's own
// page (customers.js) shows it under their name, wallet and tier.
export async function customerPath(ctx, customerId) {
  const eventHref = (e) => `${ctx.base}/events/${e.id}`;
  const base = `${ctx.base}/customers/${encodeURIComponent(customerId)}`;
  let offset = Number(ctx.search.get('offset')) || 0;
  const intro = h('p', {});
  const results = h('div', { class: 'results', 'aria-live': 'polite' });

  async function load() {
    history.replaceState(null, '', `${base}${query({ offset: offset || '' })}`);
    const path = await admin(inAccount(ctx.account,
      `/customers/${encodeURIComponent(customerId)}/path${query({ limit: PATH_PAGE, offset })}`));
    intro.replaceChildren(`${path.count === 1 ? '1 event' : `${count(path.count)} events`}, newest first, each with the `
      + 'click that led to it (the click behind its tracking id).');
    results.replaceChildren(...[table('Events of the customer and their clicks', [
      { label: 'Event', cell: (r) => h('span', {}, h('a', { href: eventHref(r.event) }, r.event.type),
        r.event.reversed_at ? [' ', badge('Reversed', 'off')] : null) },
      { label: 'When', sort: (r) => r.event.issued_at, cell: (r) => when(r.event.issued_at) },
      { label: 'Value', class: 'num', sort: (r) => (r.event.value === null || r.event.value === undefined ? null
        : Number(r.event.value)), cell: (r) => money(r.event.value, r.event.currency) },
      { label: 'Link', cell: (r) => (r.click ? (r.click.link_id
        ? h('a', { href: `${ctx.base}/links/${r.click.link_id}` }, r.click.link_code || r.click.link_id) : '—')
        : h('span', { class: 'muted' }, 'no click')) },
      { label: 'Campaign', cell: (r) => (r.click && r.click.campaign_id ? h('a',
        { href: `${ctx.base}/campaigns/${r.click.campaign_id}` }, r.click.campaign_name || r.click.campaign_id) : '—') },
      { label: 'Clicked', sort: (r) => r.click?.clicked_at ?? null, cell: (r) => (r.click ? when(r.click.clicked_at) : '—') },
      { label: 'Platform', cell: (r) => (r.click ? platformName(r.click.platform) : '—') },
      { label: 'UTM', class: 'wrap', cell: (r) => (r.click ? utmText(r.click.utm) : '—') },
    ], path.data.map((item) => ({ item, attrs: { 'data-event': item.event.id } })),
    { empty: 'No events of this customer yet: they show here once the shop sends them (the storefront API\'s '
      + 'POST /behavior/events).' }),
    path.count > PATH_PAGE ? pager(offset, PATH_PAGE, path.count, path.data.length,
      (next) => { offset = next; load(); }) : null].filter(Boolean));
  }

  await load();
  return h('div', { class: 'customer-path' }, intro, results);
}
