// The Live panel: the account's clicks and events as they are stored, newest first, through the live feed
// (GET .../feed, server-sent events). An EventSource cannot send the dashboard's header, so the page first asks
// for a feed ticket with the session (POST .../feed/tickets, as every call) and opens the feed with it as
// ?ticket= (docs/decisions.md, "The dashboard's Live panel"). While the ticket is good the browser reconnects by
// itself, sending Last-Event-ID; when the stream ends for good (the ticket ran out, the service restarted), the
// page asks for a new ticket and opens the feed again after the last message it showed (last_event_id).

import { admin, inAccount, query } from './api.js';
import { badge, field, h } from './dom.js';
import { platformName } from './names.js';

const KEEP = 200; // items shown at most: the oldest go
const RETRY_MS = 1500;

// Its own sheet, once: the shared app.css is left as it is.
if (!document.querySelector('link[data-sheet="live"]')) {
  document.head.append(h('link', { rel: 'stylesheet', href: '/dashboard/static/live.css', 'data-sheet': 'live' }));
}

const clock = (isoText) => {
  const moment = new Date(isoText);
  return Number.isNaN(moment.getTime()) ? String(isoText || '') : moment.toLocaleTimeString();
};

function clickItem(ctx, click) {
  const where = [click.country, click.referrer_host && `from ${click.referrer_host}`].filter(Boolean).join(' · ');
  return h('li', { 'data-kind': 'click', 'data-tracking-id': click.tracking_id },
    h('span', {}, badge('Click', 'click')),
    h('time', { class: 'live-time', datetime: click.time }, clock(click.time)),
    h('span', { class: 'live-what' },
      click.code ? h('a', { href: `${ctx.base}/links/${encodeURIComponent(click.link_id)}` }, click.code)
        : h('span', { class: 'muted' }, 'a deleted link'),
      h('span', {}, platformName(click.platform)),
      click.bot ? badge('bot', 'bot') : null,
      where ? h('span', { class: 'muted' }, where) : null,
      h('span', { class: 'muted' }, `tracking ${click.tracking_id}`)));
}

function eventItem(ctx, event) {
  const campaign = event.attribution?.utm_campaign;
  return h('li', { 'data-kind': 'event', 'data-event': event.id },
    h('span', {}, badge('Event', 'event')),
    h('time', { class: 'live-time', datetime: event.received_at }, clock(event.received_at)),
    h('span', { class: 'live-what' },
      h('a', { href: `${ctx.base}/events/${encodeURIComponent(event.id)}` }, event.type),
      event.customer_id ? h('span', {}, `customer ${event.customer_id}`) : null,
      campaign ? h('span', { class: 'muted' }, `campaign ${campaign}`) : null));
}

export async function liveView(ctx) {
  const kinds = h('select', { name: 'kinds' },
    h('option', { value: '' }, 'Clicks and events'), h('option', { value: 'click' }, 'Clicks'),
    h('option', { value: 'event' }, 'Events'));
  const bots = h('select', { name: 'bots' },
    h('option', { value: 'include' }, 'Shown'), h('option', { value: 'exclude' }, 'Left out'));
  const state = h('span', { class: 'live-state', role: 'status', 'data-state': 'waiting' }, 'Connecting…');
  const list = h('ol', { class: 'live-list', 'aria-label': 'Clicks and events, newest first', 'aria-live': 'polite' },
    h('li', { class: 'live-empty' }, 'Nothing yet: clicks and events appear here as they are stored.'));
  const view = h('section', { class: 'live-page' },
    h('h1', { tabindex: -1 }, 'Live'),
    h('p', { class: 'muted' }, 'Clicks on this account\'s links and the events its storefront sends, as they are ',
      'stored (a click shows a second or two after it was made).'),
    h('div', { class: 'live-bar' },
      h('form', { class: 'toolbar', 'aria-label': 'What to show', onsubmit: (e) => e.preventDefault() },
        field('Show', kinds), field('Bots', bots)),
      state),
    list);

  let source = null;
  let last = null;
  let retry = null;
  let generation = 0;

  // Left: the view was on the page and is no more (it is built before the shell shows it; one never shown, the
  // shell having moved on to another page meanwhile, counts as left after a few seconds).
  let shown = false;
  const born = Date.now();
  const setState = (name, text) => { state.dataset.state = name; state.textContent = text; };
  const gone = () => {
    if (view.isConnected) shown = true;
    return !view.isConnected && (shown || Date.now() - born > 5000);
  };

  function add(item) {
    list.querySelector('.live-empty')?.remove();
    list.prepend(item);
    while (list.children.length > KEEP) list.lastElementChild.remove();
  }

  function stop() {
    if (source) source.close();
    source = null;
    clearTimeout(retry);
  }

  async function open() {
    const mine = ++generation;
    stop();
    if (gone()) return;
    if (state.dataset.state !== 'waiting') setState('waiting', 'Connecting…');
    let ticket;
    try {
      ticket = (await admin(inAccount(ctx.account, '/feed/tickets'), { method: 'POST' })).data.ticket;
    } catch (error) {
      setState('waiting', error.status === 401 ? 'Signed out: sign in again to follow' : 'Reconnecting…');
      if (error.status !== 401 && mine === generation) retry = setTimeout(open, RETRY_MS * 2);
      return;
    }
    if (mine !== generation || gone()) return;
    const url = `/api/admin/v1${inAccount(ctx.account, '/feed')}${query({ ticket, last_event_id: last,
      kinds: kinds.value, bots: bots.value })}`;
    const stream = new EventSource(url);
    source = stream;
    const mark = (event) => { if (event.lastEventId) last = event.lastEventId; };
    const alive = () => {
      if (gone()) { stop(); return false; }
      return stream === source;
    };
    stream.onopen = () => { if (alive()) setState('live', 'Live'); };
    stream.addEventListener('click', (event) => {
      if (!alive()) return;
      mark(event);
      add(clickItem(ctx, JSON.parse(event.data)));
    });
    stream.addEventListener('event', (event) => {
      if (!alive()) return;
      mark(event);
      add(eventItem(ctx, JSON.parse(event.data)));
    });
    stream.addEventListener('gap', () => {
      if (!alive()) return;
      add(h('li', { class: 'gap', role: 'note' },
        'More were stored while this page was away than it shows: the newest are below.'));
    });
    stream.onerror = () => {
      if (!alive()) return;
      if (stream.readyState === EventSource.CLOSED) { // refused (the ticket ran out): a new ticket, then on
        setState('waiting', 'Reconnecting…');
        retry = setTimeout(open, RETRY_MS);
      } else {
        setState('waiting', 'Reconnecting…'); // the browser tries again by itself, with Last-Event-ID
      }
    };
  }

  // A new choice starts afresh: what is shown is what the filters let through from now on.
  const restart = () => {
    last = null;
    list.replaceChildren(h('li', { class: 'live-empty' },
      'Nothing yet: clicks and events appear here as they are stored.'));
    open();
  };
  kinds.addEventListener('change', restart);
  bots.addEventListener('change', restart);
  // The stream is closed once the page is left (the shell replaces the view).
  const watch = setInterval(() => { if (gone()) { stop(); clearInterval(watch); } }, 1000);
  open();
  return view;
}
