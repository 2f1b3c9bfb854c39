// One delivery (GET .../deliveries/{id}): its state, tries and outcome, and what it carried. A delivery of clicks
// (a webhook subscribed to clicks, kind link.clicked) reads as clicks: how many, of which links, and each click as
// the webhook sent it; an event's delivery leads to the event and its lineage. Also the words the Deliveries page
// shares with it: each kind's name and what a delivery carried, in a line.

import { admin, inAccount, query } from './api.js';
import { badge, h, toast, when } from './dom.js';
import { table } from './table.js';
import { deviceName, platformName } from './names.js';

export const CLICKS_KIND = 'link.clicked';

// The sheet of the pages about clicks sent out (this page, the Deliveries page's click rows, the connection's
// click settings): loaded once, so the shared app.css stays as it is.
export function clicksSheet() {
  if (!document.querySelector('link[data-sheet="clickhooks"]')) {
    document.head.append(h('link', { rel: 'stylesheet', href: '/dashboard/static/clickhooks.css',
      'data-sheet': 'clickhooks' }));
  }
}

// Each kind in a person's words (the kind itself in a tooltip). A webhook's kinds, then the other destinations'.
export const KIND_NAMES = {
  'link.clicked': 'Clicks',
  'event.accepted': 'Accepted event',
  'reward.issued': 'Rewards issued',
  'purchase.reversed': 'Reversed purchase',
  'reward.reversed': 'Rewards taken back',
  'tier.changed': 'Tier change',
  event: 'Event',
  reversal: 'Reversal',
};
export const kindsOf = (destination) => (destination === 'webhook'
  ? ['link.clicked', 'event.accepted', 'reward.issued', 'purchase.reversed', 'reward.reversed', 'tier.changed']
  : ['event', 'reversal']);

export function kindLabel(d) {
  const name = KIND_NAMES[d.kind] || d.kind;
  return d.kind === CLICKS_KIND ? h('span', { title: d.kind }, badge(name, 'click'))
    : h('span', { title: d.kind }, name);
}

export const clicksText = (n) => `${n} click${n === 1 ? '' : 's'}`;

// "2 clicks" linking to the delivery, then the links they are of and the first tracking id, each labelled; for an
// event's delivery, the event (linking to the delivery too).
export function carried(ctx, d) {
  const href = `${ctx.base}/deliveries/${encodeURIComponent(d.id)}`;
  if (d.kind !== CLICKS_KIND) {
    return h('span', { class: 'carried' }, h('a', { href, title: `event ${d.event_id}` }, 'Event ',
      h('code', {}, d.event_id.slice(0, 8))));
  }
  const codes = d.link_codes || [];
  return h('span', { class: 'carried', 'data-clicks': String(d.click_count ?? '') },
    h('a', { href, 'data-clicks-link': 'yes' }, clicksText(d.click_count ?? 0)),
    h('span', { class: 'carried-part' }, h('span', { class: 'muted' }, codes.length > 1 ? 'Links ' : 'Link '),
      codes.length ? codes.map((code, i) => [i ? ', ' : '', h('code', {}, code)])
        : h('span', { class: 'muted' }, 'deleted')),
    h('span', { class: 'carried-part' }, h('span', { class: 'muted', title: 'tracking_id' }, 'First tracking id '),
      h('code', {}, d.event_id)));
}

function outcomeText(d) {
  if (d.state === 'filtered' || d.state === 'skipped') return d.reason || d.state;
  const status = d.last_status ? `HTTP ${d.last_status}` : null;
  if (d.last_error && status && d.last_error.includes(String(d.last_status))) return d.last_error;
  return [status, d.last_error].filter(Boolean).join(': ') || null;
}

const place = (c) => [c.city, c.region, c.country].filter(Boolean).join(', ') || '—';
const device = (c) => [platformName(c.platform), c.os && [c.os, c.os_version].filter(Boolean).join(' '),
  c.browser, c.device_brand ? deviceName(c.device_brand, c.device_model) : null].filter(Boolean).join(' · ');
const ROUTES = { web: 'the web page', app: 'the app', store: 'the app store' };

function clicksTable(ctx, clicks) {
  return table('The clicks it carried', [
    { label: 'Clicked', cell: (c) => when(c.clicked_at) },
    { label: 'Link', cell: (c) => (c.code ? h('a', { href: `${ctx.base}/links/${encodeURIComponent(c.link_id)}` },
      c.code) : h('span', { class: 'muted' }, 'a deleted link')) },
    { label: 'Tracking id', cell: (c) => h('code', { title: 'tracking_id' }, c.tracking_id) },
    { label: 'Device', class: 'wrap', cell: (c) => [device(c), c.bot ? [' ', badge('bot', 'bot')] : null] },
    { label: 'Place', cell: place },
    { label: 'Came from', cell: (c) => c.referrer_host || '—' },
    { label: 'Campaign', class: 'wrap', cell: (c) => (c.utm_campaign || c.utm_source ? [c.utm_campaign,
      c.utm_source ? h('span', { class: 'muted', title: 'utm_source' },
        `${c.utm_campaign ? ', ' : ''}source ${c.utm_source}`) : null] : '—') },
    { label: 'Sent to', cell: (c) => ROUTES[c.route] || '—' },
  ], clicks.map((item) => ({ item, attrs: { 'data-click': item.tracking_id } })),
  { empty: 'None of its clicks is stored any more: their link was deleted.' });
}

async function connectionOf(ctx, id) {
  try {
    return (await admin(inAccount(ctx.account, `/connections/${encodeURIComponent(id)}`))).data;
  } catch (error) {
    if (error.status === 404) return null;  // deleted since: its deliveries stay
    throw error;
  }
}

export async function deliveryView(ctx) {
  clicksSheet();
  const [deliveryId] = ctx.params;
  const d = (await admin(inAccount(ctx.account, `/deliveries/${encodeURIComponent(deliveryId)}`))).data;
  const connection = await connectionOf(ctx, d.connection_id);
  const name = connection ? connection.name || connection.destination : 'a deleted connection';
  const list = `${ctx.base}/deliveries${query({ connection: d.connection_id })}`;
  const isClicks = d.kind === CLICKS_KIND;
  const outcome = outcomeText(d);

  const retry = h('button', { type: 'button', class: 'small' }, 'Retry');
  retry.addEventListener('click', async () => {
    retry.disabled = true;
    const updated = (await admin(inAccount(ctx.account, `/deliveries/${encodeURIComponent(d.id)}/retry`),
      { method: 'POST' })).data;
    toast(`Delivery queued again (${updated.state}).`);
    ctx.navigate(`${ctx.base}/deliveries/${encodeURIComponent(d.id)}`, { replace: true });
  });
  const retryable = ['failed', 'dead'].includes(d.state) && ctx.can('deliveries:write');

  const facts = h('dl', { class: 'facts', 'aria-label': 'Delivery' },
    h('dt', {}, 'Sent to'), h('dd', {}, connection ? h('a', { href: list }, name) : name,
      h('span', { class: 'muted' }, ` (${d.destination})`)),
    h('dt', {}, 'What'), h('dd', { 'data-fact': 'what' }, isClicks
      ? [clicksText(d.click_count ?? 0), (d.link_codes || []).length ? [' of ', d.link_codes.map((code, i) =>
        [i ? ', ' : '', h('code', {}, code)])] : null]
      : [kindLabel(d), ' · ', h('a', { href: `${ctx.base}/events/${encodeURIComponent(d.event_id)}` },
        'the event and where its attribution came from')]),
    isClicks ? [h('dt', { title: 'tracking_id' }, 'First tracking id'), h('dd', {}, h('code', {}, d.event_id))] : null,
    h('dt', {}, 'State'), h('dd', { 'data-fact': 'state' }, badge(d.state), outcome ? ` ${outcome}` : null,
      retryable ? [' ', retry] : null),
    h('dt', {}, 'Tries'), h('dd', {}, String(d.tries)),
    h('dt', {}, 'Made'), h('dd', {}, when(d.created_at)),
    d.delivered_at ? [h('dt', {}, 'Delivered'), h('dd', {}, when(d.delivered_at))] : null,
    d.state === 'pending' ? [h('dt', {}, 'Next try'), h('dd', {}, when(d.next_attempt_at))] : null,
    h('dt', { title: 'webhook-id: what the receiver drops repeats by' }, 'Message id'),
    h('dd', {}, h('code', {}, d.message_id)),
    d.replay_id ? [h('dt', {}, 'Made by'), h('dd', {}, 'a replay (Send again…)')] : null);

  const gone = isClicks ? (d.click_count || 0) - d.clicks.length : 0;
  return h('section', { class: 'delivery-page', 'data-delivery': d.id, 'data-kind': d.kind },
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: list }, 'Deliveries'), ` / ${name}`),
    h('div', { class: 'title-row start' }, h('h1', { tabindex: -1 }, isClicks ? `${clicksText(d.click_count ?? 0)} sent`
      : `${KIND_NAMES[d.kind] || d.kind} sent`), badge(d.state)),
    facts,
    isClicks ? h('section', { 'aria-labelledby': 'carried-title' },
      h('h2', { id: 'carried-title' }, 'The clicks it carried'),
      h('p', { class: 'muted' }, 'Oldest first, as the webhook sends them: never the visitor\'s address or browser '
        + 'string.'),
      gone > 0 ? h('p', { class: 'muted', 'data-gone': String(gone) },
        `${clicksText(gone)} of it ${gone === 1 ? 'is' : 'are'} no longer stored: their link was deleted.`) : null,
      clicksTable(ctx, d.clicks)) : null);
}
