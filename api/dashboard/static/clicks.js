// Clicks of one link: a bar chart by day (people and bots apart), the counts by platform and by
// utm_source, by browser, operating system and device (the user agent's full parse), and the bots by name
// on their own. The counts are the admin API's (GET .../links/{id}/clicks); the chart only draws them. The breakdowns by
// values a click chooses (utm_source, browser, OS, device) show their LIMIT most clicked and one row for the rest.

import { admin, inAccount, query } from './api.js';
import { field, h, s, table } from './dom.js';
import { deviceName, platformName } from './names.js';

const RANGES = [7, 30, 90];

// Every UTC day from the day of `since` to today, so days without clicks show as empty bars.
function daysSince(since, today) {
  const days = [];
  const cursor = new Date(`${since.slice(0, 10)}T00:00:00Z`);
  while (cursor.toISOString().slice(0, 10) <= today) {
    days.push(cursor.toISOString().slice(0, 10));
    cursor.setUTCDate(cursor.getUTCDate() + 1);
  }
  return days;
}

// A step of 1, 2 or 5 times a power of ten that cuts the axis into at most four parts, and the top.
function axis(value) {
  const top = Math.max(value, 4);
  const power = 10 ** Math.floor(Math.log10(top / 4));
  const step = [1, 2, 5, 10].map((m) => m * power).find((m) => top / m <= 4);
  return { step, top: Math.ceil(top / step) * step };
}

const clicksWord = (n) => (n === 1 ? 'click' : 'clicks');

export function barChart(byDay, since, width) {
  const today = new Date().toISOString().slice(0, 10);
  const counts = new Map(byDay.map((d) => [d.date, d]));
  const days = daysSince(since, today);
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
    s('text', { x: pad.left - 6, y: y(n) + 4, 'text-anchor': 'end' }, String(n))));
  const bars = days.map((date, i) => {
    const c = counts.get(date) || { human: 0, bot: 0 };
    const x = pad.left + i * slot + (slot - bar) / 2;
    const title = `${date}: ${c.human} human, ${c.bot} bot`;
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
const LIMIT = 20;
const otherName = (other) => `Other (${other.groups} more)`;

function breakdown(caption, rows, key, label, other) {
  const items = rows.map((item) => ({ item }));
  if (other) items.push({ item: { ...other, other: true } });
  return table(caption, [
    { label: caption, cell: (r) => (r.other ? otherName(r) : label(r[key])) },
    { label: 'Human', class: 'num', cell: (r) => String(r.human) },
    { label: 'Bot', class: 'num', cell: (r) => String(r.bot) },
  ], items, { empty: 'No clicks in this period.', cards: false });
}

// "Chrome Mobile 120", "Samsung SM-S918B"; null parts are unknown (or clicks recorded before the parse).
const named = (first, second) => (first ? [first, second].filter(Boolean).join(' ') : 'Unknown');

function bots(byBrowser, other) {
  const rows = byBrowser.filter((r) => r.bot > 0);
  if (other && other.bot > 0) rows.push({ ...other, other: true });
  return table('Bots', [
    { label: 'Bot', cell: (r) => (r.other ? otherName(r) : named(r.browser, r.major)) },
    { label: 'Clicks', class: 'num', cell: (r) => String(r.bot) },
  ], rows.map((item) => ({ item })), { empty: 'No bot clicks in this period.', cards: false });
}

export async function clicksView(ctx) {
  const [linkId] = ctx.params;
  const days = RANGES.includes(Number(ctx.search.get('days'))) ? Number(ctx.search.get('days')) : 30;
  const link = (await admin(inAccount(ctx.account, `/links/${linkId}`))).data;
  const stats = (await admin(inAccount(ctx.account, `/links/${linkId}/clicks${query({ days, limit: LIMIT })}`))).data;
  const other = stats.other || {};
  const range = h('select', { name: 'days' }, RANGES.map((n) => h('option', { value: n, selected: n === days },
    `Last ${n} days`)));
  range.addEventListener('change', () => ctx.navigate(`${ctx.base}/links/${linkId}/clicks?days=${range.value}`));
  const holder = h('div', { class: 'chart-holder' });
  const draw = () => {
    const width = Math.min(Math.max(holder.clientWidth || document.getElementById('main').clientWidth - 40, 280), 1100);
    holder.replaceChildren(barChart(stats.by_day, stats.since, width));
  };
  let timer;
  const onResize = () => {
    if (!holder.isConnected) { window.removeEventListener('resize', onResize); return; }
    clearTimeout(timer);
    timer = setTimeout(draw, 150);
  };
  window.addEventListener('resize', onResize);
  draw();
  requestAnimationFrame(draw);  // again once attached, at the real width
  const byDay = stats.by_day.filter((d) => d.human || d.bot);
  return h('section', {},
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: `${ctx.base}/links` }, 'Links'), ' / ',
      h('a', { href: `${ctx.base}/links/${link.id}` }, link.code), ' / Clicks'),
    h('div', { class: 'title-row' }, h('h1', { tabindex: -1 }, `Clicks of ${link.code}`)),
    h('div', { class: 'toolbar' }, field('Period', range)),
    h('p', { class: 'totals' }, h('strong', { 'data-total': 'human' }, String(stats.human)),
      ` human ${clicksWord(stats.human)} and `, h('strong', { 'data-total': 'bot' }, String(stats.bot)),
      ` bot ${clicksWord(stats.bot)} (crawlers and link previews) in the last ${days} days.`),
    h('div', { class: 'legend', 'aria-hidden': 'true' }, h('span', { class: 'key human' }, 'Human'),
      h('span', { class: 'key bot' }, 'Bot')),
    holder,
    h('details', {}, h('summary', {}, 'Clicks by day as a table'),
      table('By day', [
        { label: 'Day', cell: (d) => d.date },
        { label: 'Human', class: 'num', cell: (d) => String(d.human) },
        { label: 'Bot', class: 'num', cell: (d) => String(d.bot) },
      ], byDay.map((item) => ({ item })), { empty: 'No clicks in this period.', cards: false })),
    h('div', { class: 'columns even' },
      h('section', {}, h('h2', {}, 'By platform'),
        breakdown('Platform', stats.by_platform, 'platform', platformName)),
      h('section', {}, h('h2', {}, 'By country'),
        breakdown('Country', stats.by_country, 'country', (c) => c || '(unknown)', other.by_country)),
      h('section', {}, h('h2', {}, 'By referrer'),
        breakdown('Referrer host', stats.by_referrer_host, 'host', (r) => r || '(none)', other.by_referrer_host)),
      h('section', {}, h('h2', {}, 'By rule'),
        breakdown('Rule', stats.by_rule, 'rule', (r) => r || '(no rule: the link\'s own target)', other.by_rule)),
      h('section', {}, h('h2', {}, 'By utm_source'),
        breakdown('utm_source', stats.by_utm_source, 'utm_source', (u) => u || '(none)', other.by_utm_source)),
      h('section', {}, h('h2', {}, 'By browser'),
        breakdown('Browser', stats.by_browser.map((r) => ({ ...r, name: named(r.browser, r.major) })), 'name', (n) => n,
          other.by_browser)),
      h('section', {}, h('h2', {}, 'By operating system'),
        breakdown('Operating system', stats.by_os.map((r) => ({ ...r, name: named(r.os, r.major) })), 'name', (n) => n, other.by_os)),
      h('section', {}, h('h2', {}, 'By device'),
        breakdown('Device', stats.by_device.map((r) => ({ ...r, name: deviceName(r.brand, r.model) })), 'name', (n) => n,
          other.by_device)),
      h('section', { 'data-section': 'bots' }, h('h2', {}, 'Bots (crawlers and link previews)'),
        bots(stats.by_browser, other.by_browser))));
}
