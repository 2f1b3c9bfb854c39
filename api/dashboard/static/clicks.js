// Clicks of one link: a bar chart by day (people and bots apart), the counts by platform and by
// utm_source, people's browsers and operating systems by family ("Instagram", each family's versions on demand),
// their devices, and the bots by name on their own. The counts are the admin API's (GET .../links/{id}/clicks);
// the chart only draws them. The breakdowns by values a click chooses (utm_source, browser, OS, device) show their
// LIMIT most clicked and one row for the rest.
//
// The period fits the data unless one is chosen: the last 30 days, drawn from the link's creation or its first
// click, whichever came first, when that is within them (a new link's chart is not a month of empty days).

import { admin, inAccount, query } from './api.js';
import { axis, daysBetween, fitted } from './chart.js';
import { field, h, s } from './dom.js';
import { table } from './table.js';
import { count } from './format.js';
import { deviceName, platformName } from './names.js';

const RANGES = [7, 30, 90];
const FIT_WINDOW = 30;  // the days a fitted period looks back

const clicksWord = (n) => (n === 1 ? 'click' : 'clicks');

export function barChart(byDay, since, width) {
  const today = new Date().toISOString().slice(0, 10);
  const counts = new Map(byDay.map((d) => [d.date, d]));
  const days = daysBetween(since, today);
  const { step, top } = axis(Math.max(0, ...byDay.map((d) => d.human + d.bot)));
  const height = 220;
  const pad = { left: 34, right: 20, top: 10, bottom: 28 };
  const plotW = Math.max(width - pad.left - pad.right, 60);
  const plotH = height - pad.top - pad.bottom;
  const slot = plotW / days.length;
  const bar = Math.max(Math.min(slot * 0.7, 28), 2);
  const y = (n) => pad.top + plotH - (n / top) * plotH;
  const labelEvery = Math.ceil(days.length / Math.max(1, Math.floor(plotW / 56)));
  const ticks = Array.from({ length: top / step + 1 }, (_, i) => i * step);
  const grid = ticks.map((n) => s('g', { class: 'grid' },
    s('line', { x1: pad.left, x2: pad.left + plotW, y1: y(n), y2: y(n) }),
    s('text', { x: pad.left - 6, y: y(n) + 4, 'text-anchor': 'end' }, count(n))));
  const bars = days.map((date, i) => {
    const c = counts.get(date) || { human: 0, bot: 0 };
    const x = pad.left + i * slot + (slot - bar) / 2;
    const title = `${date}: ${count(c.human)} by people, ${count(c.bot)} by bots`;
    return s('g', { class: 'day', 'data-date': date, 'data-human': c.human, 'data-bot': c.bot },
      s('title', {}, title),
      s('rect', { class: 'human', 'data-kind': 'human', x, width: bar, y: y(c.human), height: y(0) - y(c.human) }),
      s('rect', { class: 'bot', 'data-kind': 'bot', x, width: bar, y: y(c.human + c.bot), height: y(c.human) - y(c.human + c.bot) }),
      (days.length - 1 - i) % labelEvery === 0
        ? s('text', { class: 'x', x: x + bar / 2, y: height - 8, 'text-anchor': 'middle' }, date.slice(5)) : null);
  });
  return s('svg', { class: 'chart', viewBox: `0 0 ${width} ${height}`, width, height, role: 'img',
    'aria-label': `Clicks by day, ${days[0]} to ${today}` }, grid, bars);
}

// The most clicked groups the answer holds (LIMIT of them), then one row for the groups it left out, summed.
const LIMIT = 50;
const otherName = (other) => `Other (${count(other.groups)} more)`;

function breakdown(caption, rows, key, label, other, { title } = {}) {
  const items = rows.map((item) => ({ item }));
  if (other) items.push({ item: { ...other, other: true }, pinned: true });
  return table(caption, [
    { label: caption, title, sort: (r) => (r.other ? null : label(r[key])),
      cell: (r) => (r.other ? otherName(r) : label(r[key])) },
    { label: 'People', class: 'num', sort: (r) => r.human, cell: (r) => count(r.human) },
    { label: 'Bots', class: 'num', sort: (r) => r.bot, cell: (r) => count(r.bot) },
  ], items, { empty: 'No clicks in this period.', cards: false });
}

// A family of people's browsers or systems ("Instagram"), its clicks by people, and its versions on demand (a
// disclosure in its cell): the versions the answer's by-version breakdown holds, and the clicks of the rest.
function families(caption, byFamily, byVersion, field, other, unknown) {
  const rows = byFamily.filter((r) => r.human > 0).map((item) => ({ item }));
  if (other && other.human > 0) rows.push({ item: { ...other, other: true }, pinned: true });
  const versionsOf = (family) => byVersion.filter((v) => v[field] === family && v.human > 0)
    .sort((a, b) => b.human - a.human);
  const cell = (r) => {
    if (r.other) return otherName(r);
    const name = r[field] || unknown;
    const versions = r[field] ? versionsOf(r[field]) : [];
    if (!versions.length) return name;
    const listed = versions.reduce((sum, v) => sum + v.human, 0);
    return h('details', { class: 'versions', 'data-family': name },
      h('summary', { title: 'Show the versions' }, name),
      h('ul', {}, versions.map((v) => h('li', { 'data-version': v.major ?? '' },
        `${v.major ? `${name} ${v.major}` : `${name}, version unknown`}: ${count(v.human)}`)),
      listed < r.human ? h('li', {}, `Other versions: ${count(r.human - listed)}`) : null));
  };
  return table(caption, [
    { label: caption, sort: (r) => (r.other ? null : r[field] || unknown), cell },
    { label: 'Clicks', class: 'num', sort: (r) => r.human, cell: (r) => count(r.human) },
  ], rows, { empty: 'No clicks by people in this period.', cards: false, sorted: { by: 'Clicks', descending: true } });
}

// The bots by name (the user agent's parse: "Applebot", "FacebookBot"), never among the people's browsers.
function bots(byBot, other) {
  const rows = byBot.map((item) => ({ item }));
  if (other && other.bot > 0) rows.push({ item: { ...other, other: true }, pinned: true });
  return table('Bots', [
    { label: 'Bot', sort: (r) => (r.other ? null : r.name || 'A bot without a name'),
      cell: (r) => (r.other ? otherName(r) : r.name || 'A bot without a name') },
    { label: 'Clicks', class: 'num', sort: (r) => r.bot, cell: (r) => count(r.bot) },
  ], rows, { empty: 'No bot clicks in this period.', cards: false, sorted: { by: 'Clicks', descending: true } });
}

const dayOf = (iso) => (iso || '').slice(0, 10);
const shortDay = (date) => new Date(`${date}T00:00:00Z`).toLocaleDateString(undefined,
  { month: 'short', day: 'numeric', timeZone: 'UTC' });

// The fitted period's first day: the link's creation or its first click in the window, whichever came first,
// when that is inside the window; else the window's own first day.
function fittedStart(link, stats) {
  const since = dayOf(stats.since);
  const firstClick = stats.by_day.find((d) => d.human || d.bot)?.date;
  const created = dayOf(link.created_at);
  const candidates = [firstClick, created].filter((d) => d && d >= since).sort();
  if (!candidates.length || (firstClick && firstClick < since) || (created && created < since)) {
    return { start: since, why: null };
  }
  const start = candidates[0];
  return { start, why: start === created ? 'created' : 'first click' };
}

export async function clicksView(ctx) {
  const [linkId] = ctx.params;
  const asked = Number(ctx.search.get('days'));
  const chosen = RANGES.includes(asked) ? asked : null;
  const days = chosen || FIT_WINDOW;
  const link = (await admin(inAccount(ctx.account, `/links/${linkId}`))).data;
  const stats = (await admin(inAccount(ctx.account, `/links/${linkId}/clicks${query({ days, limit: LIMIT })}`))).data;
  const other = stats.other || {};
  const fit = chosen ? { start: dayOf(stats.since), why: null } : fittedStart(link, stats);
  const fitLabel = fit.why ? `Since ${fit.why === 'created' ? 'it was created' : 'the first click'} `
    + `(${shortDay(fit.start)})` : `Last ${FIT_WINDOW} days`;
  const range = h('select', { name: 'days' },
    h('option', { value: '', selected: !chosen }, fitLabel),
    RANGES.map((n) => h('option', { value: n, selected: n === chosen }, `Last ${n} days`)));
  range.addEventListener('change', () => ctx.navigate(`${ctx.base}/links/${linkId}/clicks${query(
    range.value ? { days: range.value } : {})}`));
  const holder = fitted(h('div', { class: 'chart-holder' }), (width) => barChart(stats.by_day, fit.start, width));
  const byDay = stats.by_day.filter((d) => d.human || d.bot);
  const period = fit.why ? `since ${shortDay(fit.start)}` : `in the last ${days} days`;
  const section = (heading, content, attrs = {}) => h('section', attrs, h('h2', {}, heading), content);
  return h('section', {},
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: `${ctx.base}/links` }, 'Links'), ' / ',
      h('a', { href: `${ctx.base}/links/${link.id}` }, link.code), ' / Clicks'),
    h('div', { class: 'title-row' }, h('h1', { tabindex: -1 }, `Clicks of ${link.code}`)),
    h('div', { class: 'toolbar' }, field('Period', range)),
    h('p', { class: 'totals' }, h('strong', { 'data-total': 'human', 'data-value': stats.human }, count(stats.human)),
      ` ${clicksWord(stats.human)} by people and `,
      h('strong', { 'data-total': 'bot', 'data-value': stats.bot }, count(stats.bot)),
      ` by bots (crawlers and link previews) ${period}.`),
    stats.human + stats.bot === 0
      ? h('p', { class: 'empty' }, 'No clicks yet. Share the short link (copy it from the link\'s page, or download '
        + 'its QR code) and the clicks show here within seconds.') : null,
    h('div', { class: 'legend', 'aria-hidden': 'true' }, h('span', { class: 'key human' }, 'People'),
      h('span', { class: 'key bot' }, 'Bots')),
    holder,
    h('details', {}, h('summary', {}, 'Clicks by day as a table'),
      table('By day', [
        { label: 'Day', sort: (d) => d.date, cell: (d) => d.date },
        { label: 'People', class: 'num', sort: (d) => d.human, cell: (d) => count(d.human) },
        { label: 'Bots', class: 'num', sort: (d) => d.bot, cell: (d) => count(d.bot) },
      ], byDay.map((item) => ({ item })), { empty: 'No clicks in this period.', cards: false })),
    h('div', { class: 'columns even' },
      section('By platform', breakdown('Platform', stats.by_platform, 'platform', platformName)),
      section('By country', breakdown('Country', stats.by_country, 'country', (c) => c || '(unknown)',
        other.by_country)),
      section('By referrer', breakdown('Referring site', stats.by_referrer_host, 'host', (r) => r || '(none: typed '
        + 'or from an app)', other.by_referrer_host, { title: 'The host of the Referer header' })),
      section('By rule', breakdown('Rule', stats.by_rule, 'rule', (r) => r || '(no rule: the link\'s own target)',
        other.by_rule)),
      section('By variant', breakdown('Variant', stats.by_variant, 'variant', (v) => v || '(no A/B split)',
        other.by_variant)),
      section('By source', breakdown('Source', stats.by_utm_source, 'utm_source', (u) => u || '(none)',
        other.by_utm_source, { title: 'utm_source' })),
      section('By browser', families('Browser', stats.by_browser_family, stats.by_browser, 'browser',
        other.by_browser_family, 'Unknown browser'), { 'data-section': 'browsers' }),
      section('By operating system', families('Operating system', stats.by_os_family, stats.by_os, 'os',
        other.by_os_family, 'Unknown system'), { 'data-section': 'systems' }),
      section('By device', table('Device', [
        { label: 'Device', sort: (r) => (r.other ? null : r.name), cell: (r) => (r.other ? otherName(r) : r.name) },
        { label: 'Clicks', class: 'num', sort: (r) => r.human, cell: (r) => count(r.human) },
      ], [...stats.by_device.filter((r) => r.human > 0).map((r) => ({ item: { ...r, name: deviceName(r.brand, r.model) } })),
        ...(other.by_device && other.by_device.human > 0
          ? [{ item: { ...other.by_device, other: true }, pinned: true }] : [])],
      { empty: 'No clicks by people in this period.', cards: false, sorted: { by: 'Clicks', descending: true } })),
      section('Bots (crawlers and link previews)', bots(stats.by_bot, other.by_bot), { 'data-section': 'bots' })));
}
