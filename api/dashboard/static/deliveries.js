// Deliveries of forwarded events, per connection: which event types the connection forwards, how many of its
// deliveries are in each state and why the filtered and skipped ones were not sent, each delivery's state
// (delivered, filtered or skipped with its reason, failed, dead, or still pending), a retry for the failed and
// dead ones (one, or all of the connection's at once) and for the filtered ones the connection now lets through,
// a test of the connection, and its replays: "Send again…" a time range's events (vendors deduplicate them),
// and each replay's progress. An error that asks a person to fix the connection links to its edit form. A webhook
// subscribed to clicks also lists its deliveries of clicks (kind link.clicked): how many clicks each carried, of
// which links, and its page (delivery.js) shows those clicks; the list filters by kind.

import { admin, ApiError, inAccount, query } from './api.js';
import { badge, clearErrors, field, h, showErrors, toast, when } from './dom.js';
import { table } from './table.js';
import { count } from './format.js';
import { carried, clicksSheet, KIND_NAMES, kindLabel, kindsOf } from './delivery.js';
import { localValue, utcValue } from './lifecycle.js';
import { refocusSort } from './table.js';

const PAGE = 50;
const STATES = ['pending', 'delivered', 'filtered', 'skipped', 'failed', 'dead'];

function outcome(d) {
  if (d.state === 'filtered' || d.state === 'skipped') return d.reason || d.state;
  const status = d.last_status ? `HTTP ${d.last_status}` : null;
  if (d.last_error && status && d.last_error.includes(String(d.last_status))) return d.last_error;
  if (d.last_error || status) return [status, d.last_error].filter(Boolean).join(': ');
  return '—';
}

// A failed delivery whose error says the connection must be fixed (a new token in its config) links to it.
const FIX_CONNECTION = /connection'?s (config|access_token)|token/i;
function outcomeCell(ctx, d) {
  const text = outcome(d);
  if (!['failed', 'dead', 'skipped'].includes(d.state) || !FIX_CONNECTION.test(text)) return text;
  return h('span', {}, text, ' ', h('a', { href: `${ctx.base}/connections/${d.connection_id}`,
    'data-fix': 'connection' }, 'Edit the connection'));
}

// What a connection's event_types say: every type (["*"]), the types listed, or none at all (a connection
// stored before the choice was required: it forwards no event until it is edited).
export function forwardedTypes(connection) {
  const types = connection.event_types || [];
  if (types.includes('*')) return 'Every event type';
  if (!types.length) return 'No event type: this connection forwards nothing until its event_types are chosen';
  return types.join(', ');
}

// What a webhook's config.clicks says, in words.
export function clicksSent(clicks) {
  const which = (clicks.link_ids || []).length || (clicks.tags || []).length
    ? [(clicks.link_ids || []).length ? `${clicks.link_ids.length} link${clicks.link_ids.length === 1 ? '' : 's'}`
      : null, (clicks.tags || []).length ? `links tagged ${clicks.tags.join(', ')}` : null].filter(Boolean)
      .join(' and ')
    : 'every link';
  const bots = { include: 'bots included', only: 'only bots' }[clicks.bots] || 'bots left out';
  const size = clicks.batch_size || 1;
  return `The clicks of ${which} (${bots}), ${size === 1 ? 'one per webhook' : `up to ${size} per webhook`}`;
}

async function summary(ctx, chosen, onRetried) {
  const counts = (await admin(inAccount(ctx.account, `/connections/${chosen.id}/deliveries/counts`))).data;
  const states = STATES.filter((s) => counts.by_state[s]).map((s) => `${count(counts.by_state[s])} ${s}`).join(', ');
  const sendable = counts.filtered.filter((f) => f.sendable).reduce((n, f) => n + f.deliveries, 0);
  const resend = h('button', { type: 'button', class: 'small' }, `Send the ${sendable} filtered deliveries now allowed`);
  resend.addEventListener('click', async () => {
    resend.disabled = true;
    const answer = (await admin(inAccount(ctx.account, `/connections/${chosen.id}/deliveries/retry-filtered`),
      { method: 'POST' })).data;
    toast(`${answer.retried} filtered deliveries queued again.`);
    onRetried();
  });
  // The API answers the most frequent reasons; the rest come summed in `other` (one line here).
  const reasons = (items, withSendable, rest) => h('ul', { class: 'reasons' }, items.map((f) => h('li',
    { 'data-reason': f.reason }, `${count(f.deliveries)} × ${f.reason}`,
    withSendable && f.sendable ? h('span', { class: 'muted' }, ' (the connection now allows them)') : null)),
    rest ? h('li', { 'data-reason': '(other)', class: 'muted' },
      `${count(rest.deliveries)} × ${count(rest.groups)} other reason${rest.groups === 1 ? '' : 's'}`) : null);
  const other = counts.other || {};
  const failed = (counts.by_state.failed || 0) + (counts.by_state.dead || 0);
  const retryFailed = h('button', { type: 'button', class: 'small' }, `Retry the ${count(failed)} failed and dead`);
  retryFailed.addEventListener('click', async () => {
    retryFailed.disabled = true;
    const answer = (await admin(inAccount(ctx.account, `/connections/${chosen.id}/deliveries/retry-failed`),
      { method: 'POST' })).data;
    toast(`${answer.retried} deliveries queued again.`);
    onRetried();
  });
  return h('dl', { class: 'facts compact', 'aria-label': 'Forwarding summary' },
    h('dt', {}, 'Forwards'), h('dd', { 'data-fact': 'event-types' }, forwardedTypes(chosen)),
    chosen.destination === 'webhook' && chosen.config?.clicks ? [h('dt', { title: 'config.clicks' }, 'Clicks'),
      h('dd', { 'data-fact': 'clicks' }, clicksSent(chosen.config.clicks))] : null,
    h('dt', {}, 'Deliveries'), h('dd', { 'data-fact': 'states' }, states || 'none yet',
      failed > 0 && ctx.can('deliveries:write') ? [' ', retryFailed] : null),
    ...(counts.filtered.length ? [h('dt', {}, 'Filtered, by reason'), h('dd', { 'data-fact': 'filtered' },
      reasons(counts.filtered, true, other.filtered), sendable && ctx.can('deliveries:write') ? resend : null)] : []),
    ...(counts.skipped.length ? [h('dt', {}, 'Skipped, by reason'), h('dd', { 'data-fact': 'skipped' },
      reasons(counts.skipped, false, other.skipped))] : []));
}

function replayProgress(r) {
  const share = `${Math.round(r.progress * 100)}%`;
  return `${share}: ${count(r.events_found)} of ${count(r.events_total)} events; ${count(r.sent)} sent, `
    + `${count(r.skipped)} skipped, ${count(r.failed)} failed, ${count(r.pending)} waiting`;
}

// The connection's replays, newest first, and (for those who may) the form that starts one. While one runs
// the list is read again every two seconds, until the page is left.
async function replaysSection(ctx, chosen) {
  const url = inAccount(ctx.account, `/connections/${chosen.id}/replays`);
  const list = h('div', { class: 'results' });
  let timer = null;
  async function paint() {
    const replays = (await admin(`${url}${query({ limit: 20 })}`)).data;
    list.replaceChildren(table('Replays', [
      { label: 'Started', sort: (r) => r.created_at, cell: (r) => when(r.created_at) },
      { label: 'Range', class: 'wrap', sort: (r) => r.from, cell: (r) => `${when(r.from)} – ${when(r.to)}` },
      { label: 'State', cell: (r) => badge(r.state, r.state === 'failed' ? 'off' : null) },
      { label: 'Progress', class: 'wrap', cell: (r) => r.error ? `${replayProgress(r)} (${r.error})` : replayProgress(r) },
    ], replays.map((item) => ({ item, attrs: { 'data-replay': item.id, 'data-state': item.state } })),
    { empty: 'No replay of this connection yet: Send again… sends a time range\'s events once more.' }));
    clearTimeout(timer);
    if (replays.some((r) => r.state === 'queued' || r.state === 'running')) {
      timer = setTimeout(() => { if (list.isConnected) paint(); }, 2000);
    }
  }
  await paint();
  if (!ctx.can('deliveries:write')) {
    return h('section', { 'aria-labelledby': 'replays-title' }, h('h2', { id: 'replays-title' }, 'Replays'), list);
  }
  const day = 24 * 3600 * 1000;
  const from = h('input', { type: 'datetime-local', name: 'from', required: true, step: 1,
    value: localValue(new Date(Date.now() - day).toISOString()) });
  const to = h('input', { type: 'datetime-local', name: 'to', required: true, step: 1,
    value: localValue(new Date().toISOString()) });
  const send = h('button', { type: 'submit' }, 'Send again');
  const form = h('form', { class: 'toolbar', 'aria-label': 'Send again' },
    field('From', from), field('To', to, { hint: 'at most 92 days; your time zone' }), send,
    h('p', { class: 'form-error', tabindex: -1 }));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    send.disabled = true;
    try {
      const started = (await admin(url, { method: 'POST', body: { from: utcValue(from.value),
        to: utcValue(to.value) } })).data;
      toast(`Replay of ${count(started.events_total)} events queued.`);
      await paint();
    } catch (error) {
      if (!(error instanceof ApiError) || error.status === 401) throw error;
      showErrors(form, error);
    } finally {
      send.disabled = false;
    }
  });
  return h('section', { 'aria-labelledby': 'replays-title' }, h('h2', { id: 'replays-title' }, 'Send again…'),
    h('p', { class: 'muted' }, 'Sends this connection the events accepted in a time range again, or for the first '
      + 'time when it is newer than they are. Each goes with the key the destination deduplicates by (Meta and '
      + 'TikTok event_id, GA4 and Google Ads order id, the webhook-id), so it is counted once. The connection\'s '
      + 'rules apply as they are now.'), form, list);
}

function emptyText(state, kind) {
  const ofKind = kind ? ` of this kind (${KIND_NAMES[kind] || kind})` : '';
  if (state) return `No ${state} deliveries${ofKind} to this connection.`;
  return kind ? `Nothing${ofKind} has been sent to this connection yet.`
    : 'Nothing has been forwarded to this connection yet.';
}

export async function deliveriesView(ctx) {
  clicksSheet();
  const connections = (await admin(inAccount(ctx.account, `/connections${query({ limit: 500 })}`))).data;
  if (!connections.length) {
    return h('section', {}, h('h1', { tabindex: -1 }, 'Deliveries'),
      h('p', { class: 'empty' }, 'This account has no connections, so nothing is forwarded. Add one on the '
        + 'Connections page; its deliveries show here.'));
  }
  const chosen = connections.find((c) => c.id === ctx.search.get('connection')) || connections[0];
  const state = STATES.includes(ctx.search.get('state')) ? ctx.search.get('state') : '';
  const kinds = kindsOf(chosen.destination);
  const kind = kinds.includes(ctx.search.get('kind')) ? ctx.search.get('kind') : '';
  const connection = h('select', { name: 'connection' }, connections.map((c) => h('option',
    { value: c.id, selected: c.id === chosen.id },
    `${c.name || c.destination} (${c.destination}${c.enabled ? '' : ', disabled'})`)));
  const stateSelect = h('select', { name: 'state' }, h('option', { value: '' }, 'All states'),
    STATES.map((s) => h('option', { value: s, selected: s === state }, s)));
  const kindSelect = h('select', { name: 'kind' }, h('option', { value: '' }, 'Everything'),
    kinds.map((k) => h('option', { value: k, selected: k === kind }, KIND_NAMES[k] || k)));
  const form = h('form', { class: 'toolbar filters', 'aria-label': 'Filters' },
    field('Connection', connection), field('State', stateSelect), field('What was sent', kindSelect));
  // Another connection: its own kinds (a kind chosen for the one before may not be one of them).
  form.addEventListener('change', (event) => ctx.navigate(`${ctx.base}/deliveries${query({ connection: connection.value,
    state: stateSelect.value, kind: event.target === connection ? '' : kindSelect.value })}`));

  const testButton = h('button', { type: 'button', class: 'small' }, 'Test connection');
  const testResult = h('p', { class: 'muted', role: 'status' });
  testButton.addEventListener('click', async () => {
    testButton.disabled = true;
    testResult.textContent = 'Sending a test event…';
    try {
      const answer = (await admin(inAccount(ctx.account, `/connections/${chosen.id}/test`), { method: 'POST' })).data;
      testResult.textContent = [answer.outcome, answer.status ? `HTTP ${answer.status}` : null, answer.message]
        .filter(Boolean).join(': ');
    } finally {
      testButton.disabled = false;
    }
  });

  const results = h('div', { class: 'results' });
  const shown = [];
  let sort = '-created';  // the API orders every delivery of the connection (?sort=): newest first unless asked
  const more = h('button', { type: 'button', class: 'quiet' }, 'Show more');

  function retryButton(delivery) {
    if (!['failed', 'dead'].includes(delivery.state)) return null;  // filtered ones: from the summary
    if (!ctx.can('deliveries:write')) return null;
    const button = h('button', { type: 'button', class: 'small', 'aria-label': `Retry delivery ${delivery.id}` }, 'Retry');
    button.addEventListener('click', async () => {
      button.disabled = true;
      const updated = (await admin(inAccount(ctx.account, `/deliveries/${delivery.id}/retry`), { method: 'POST' })).data;
      shown[shown.findIndex((d) => d.id === delivery.id)] = updated;
      paint();
      toast(`Delivery queued again (${updated.state}).`);
      document.querySelector(`tr[data-delivery="${delivery.id}"] td`)?.focus();
    });
    return button;
  }

  function paint() {
    results.replaceChildren(table('Deliveries', [
      { label: 'Created', sortKey: 'created', sortFirst: 'descending', cell: (d) => when(d.created_at) },
      { label: 'Kind', cell: (d) => kindLabel(d) },
      { label: 'State', sortKey: 'state', cell: (d) => badge(d.state) },
      { label: 'Reason or last error', class: 'wrap', cell: (d) => outcomeCell(ctx, d) },
      { label: 'Tries', class: 'num', sortKey: 'tries', sortFirst: 'descending', cell: (d) => count(d.tries) },
      { label: 'What it carried', class: 'wrap', cell: (d) => carried(ctx, d) },
      { label: 'Action', cell: (d) => retryButton(d) || '—' },
    ], shown.map((item) => ({ item, attrs: { 'data-delivery': item.id, 'data-state': item.state,
      'data-kind': item.kind } })),
    { empty: emptyText(state, kind),
      server: { sort, onSort: (next) => { sort = next; shown.length = 0; load().then(() => refocusSort(results, next)); } } }),
    ...(shown.length && shown.length % PAGE === 0 ? [more] : []));
  }

  async function load() {
    const page = (await admin(inAccount(ctx.account, `/connections/${chosen.id}/deliveries${query({ state, kind,
      sort: sort === '-created' ? '' : sort, limit: PAGE, offset: shown.length })}`))).data;
    shown.push(...page);
    paint();
  }
  more.addEventListener('click', load);
  await load();
  const reload = () => ctx.navigate(`${ctx.base}/deliveries${query({ connection: chosen.id, state, kind })}`);
  return h('section', {}, h('h1', { tabindex: -1 }, 'Deliveries'),
    h('p', { class: 'muted' }, 'Events forwarded to each connection, and the clicks a webhook is sent: delivered, '
      + 'filtered (with the reason), failed (refused by the destination), dead (retries exhausted) or pending.'),
    form, h('p', {}, h('a', { href: `${ctx.base}/connections/${chosen.id}` }, 'Edit this connection')),
    await summary(ctx, chosen, reload),
    ctx.can('deliveries:write') ? h('div', { class: 'toolbar' }, testButton, testResult) : null, results,
    await replaysSection(ctx, chosen));
}
