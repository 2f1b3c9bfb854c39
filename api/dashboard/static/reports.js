// The conversion report: for a range of UTC days, clicks (people and bots apart), visitors, routes, the
// events attributed to those clicks, purchases, revenue per currency, conversion rate and the time from click
// to purchase, grouped by one or two dimensions, with a totals row and the same table as CSV. The figures
// are the admin API's (GET .../reports/conversions); nothing is computed here but their wording. Grouped by a
// UTM field, events count under the UTM of the click behind them unless asked for their own (utm_from), and
// the page says which; past the API's limit of groups, one row sums the groups left out. The click behind a row
// gives four more dimensions (country, referrer, rule, variant), grouped only as the API keeps them (PAIRS).

import { admin, inAccount, query } from './api.js';
import { clearErrors, day, field, h, saveBlob, showErrors } from './dom.js';
import { table } from './table.js';
import { barsChart, daysBetween, daysChart, fitted } from './chart.js';
import { count, money as moneyOf, moneyText, moneyValue, percent } from './format.js';
import { platformName } from './names.js';

export const DIMENSIONS = [
  ['campaign', 'Campaign'], ['link', 'Link'], ['utm_source', 'utm_source'], ['utm_medium', 'utm_medium'],
  ['utm_campaign', 'utm_campaign'], ['platform', 'Platform'], ['day', 'Day'], ['country', 'Country'],
  ['referrer_host', 'Referrer'], ['rule', 'Rule'], ['variant', 'A/B variant'],
  ['tag', 'Tag (each link in every tag it has)'], ['folder', 'Folder'],
];
// A link's tag and folder (as they are now): not with the link itself, nor with each other, nor with a click's.
const ORGANISING = ['tag', 'folder'];
// What each dimension of the click goes with (the API refuses other pairs): a variant is named per link.
export const PAIRS = {
  country: ['day'], referrer_host: ['day'], rule: ['day', 'link', 'campaign'], variant: ['link'],
};
// A click dimension's missing value, as the CSV names it.
export const UNKNOWN = {
  country: '(unknown)', referrer_host: '(no referrer)', rule: '(no rule)', variant: '(no variant)',
  tag: '(no tag)', folder: '(no folder)',
};
// Whether the API groups by these two (or by the first alone, when second is '').
export function allowedPair(first, second) {
  if (!second) return first !== 'variant';
  if (first === second) return false;
  const organising = [first, second].filter((key) => ORGANISING.includes(key));
  if (organising.length === 2) return false;
  if (organising.length) {
    const other = ORGANISING.includes(first) ? second : first;
    return other !== 'link' && !PAIRS[other];
  }
  if (PAIRS[first] && PAIRS[second]) return false;
  if (PAIRS[first]) return PAIRS[first].includes(second);
  if (PAIRS[second]) return PAIRS[second].includes(first);
  return true;
}
const DIMENSION_KEYS = DIMENSIONS.map(([key]) => key);
const DEFAULT_GROUP = ['campaign'];
export const UTM_FROM = [['click', 'the click behind them'], ['event', 'their own, as sent']];

// Dates as the API takes them: YYYY-MM-DD, UTC.
const isoDay = (date) => date.toISOString().slice(0, 10);
const daysBefore = (date, n) => new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() - n));

// The presets, computed from today (UTC): the last n days end today; last week is Monday to Sunday before
// the current week.
export function presetRange(preset, now = new Date()) {
  if (preset === 'last-week') {
    const monday = daysBefore(now, (now.getUTCDay() + 6) % 7);
    return { from: isoDay(daysBefore(monday, 7)), to: isoDay(daysBefore(monday, 1)) };
  }
  const days = preset === 'last-30-days' ? 30 : 7;
  return { from: isoDay(daysBefore(now, days - 1)), to: isoDay(now) };
}

const PRESETS = [['last-7-days', 'Last 7 days'], ['last-week', 'Last week'], ['last-30-days', 'Last 30 days']];

// A bucket's upper bound in seconds as people say it: "5 min", "1 h", "2 d"; past the last bound (the API says
// null there when the row has purchases), "over 30 d".
export function duration(seconds) {
  const n = seconds === null || seconds === undefined ? Infinity : Number(seconds);
  if (!Number.isFinite(n) || n > 2592000) return 'over 30 d';
  if (n < 60) return `${n} s`;
  if (n < 3600) return `${Math.round(n / 60)} min`;
  if (n < 86400) return `${Math.round(n / 3600)} h`;
  return `${Math.round(n / 86400)} d`;
}

// Revenue per currency, one line each, by the currency's rules (format.js).
export function money(revenue) {
  const entries = Object.entries(revenue || {});
  if (!entries.length) return '—';
  return h('div', {}, entries.map(([currency, amount]) => h('span', { class: 'line', 'data-currency': currency },
    moneyOf(amount, currency))));
}

const counts = (byType) => {
  const entries = Object.entries(byType || {});
  return entries.length ? h('div', {}, entries.map(([type, n]) => h('span', { class: 'line' }, `${type} ${count(n)}`)))
    : '—';
};

function groupFrom(search) {
  const asked = (search.get('group_by') || '').split(',').filter((key) => DIMENSION_KEYS.includes(key));
  const group = [...new Set(asked)].slice(0, 2);
  return group.length ? group : DEFAULT_GROUP;
}

// A row's value of one dimension, linked to its page where the dashboard has one.
function keyCell(ctx, dimension, key) {
  const value = key[dimension];
  if (dimension === 'link') {
    return value ? h('a', { href: `${ctx.base}/links/${value}` }, key.link_code || value) : '(no link)';
  }
  if (dimension === 'campaign') {
    return value ? h('a', { href: `${ctx.base}/campaigns/${value}` }, key.campaign_name || value) : '(no campaign)';
  }
  if (dimension === 'platform') return platformName(value);
  if (dimension === 'day') return value ? day(value) : '—';
  if (UNKNOWN[dimension]) return value || h('em', {}, UNKNOWN[dimension]);
  return value || '(none)';
}

// What a row sorts by in a dimension's column: the name shown (a day as its date).
const dimensionSort = (dimension) => (row) => {
  const key = row.key || {};
  if (dimension === 'link') return key.link_code || key.link || null;
  if (dimension === 'campaign') return key.campaign_name || key.campaign || null;
  if (dimension === 'platform') return key.platform ? platformName(key.platform) : null;
  return key[dimension] ?? null;
};

function columns(ctx, group) {
  const label = (key) => DIMENSIONS.find(([k]) => k === key)[1];
  return [
    ...group.map((dimension, i) => ({
      label: label(dimension), class: `dim ${dimension}`, sort: dimensionSort(dimension),
      cell: (row) => {
        if (row.other) return i === 0 ? h('em', {}, `Other (${row.groups} more)`) : '';
        return row.key ? keyCell(ctx, dimension, row.key) : (i === 0 ? h('strong', {}, 'Total') : '');
      },
    })),
    { label: 'Clicks', class: 'num', sort: (r) => r.clicks.human, cell: (r) => count(r.clicks.human) },
    { label: 'Bot clicks', class: 'num', sort: (r) => r.clicks.bot, cell: (r) => count(r.clicks.bot) },
    { label: 'Visitors', class: 'num', sort: (r) => r.visitors, cell: (r) => count(r.visitors) },
    { label: 'Routes', class: 'routes', sort: false, cell: (r) => h('div', {}, ['web', 'app', 'store'].map((route) =>
      h('span', { class: 'line', 'data-route': route }, `${route} ${count(r.routes[route] ?? 0)}`))) },
    { label: 'Events', class: 'events', sort: (r) => Object.values(r.events || {}).reduce((a, b) => a + b, 0),
      cell: (r) => counts(r.events) },
    { label: 'Purchases', class: 'num', sort: (r) => r.purchases, cell: (r) => count(r.purchases) },
    { label: 'Revenue', class: 'num revenue', sort: (r) => moneyValue(r.revenue), cell: (r) => money(r.revenue) },
    { label: 'Conversion rate', class: 'num', sort: (r) => (r.conversion_rate === null ? null : Number(r.conversion_rate)),
      cell: (r) => percent(r.conversion_rate) },
    { label: 'Click to purchase (median / p90)', class: 'num', sort: (r) => r.click_to_purchase?.median_seconds ?? null,
      cell: (r) => (r.purchases && r.click_to_purchase
      ? `${duration(r.click_to_purchase.median_seconds)} / ${duration(r.click_to_purchase.p90_seconds)}` : '—') },
  ];
}

// Grouped by tag, a link with several tags is in each of their rows: the rows may add up to more than the totals.
function tagLine(report) {
  if (!report.group_by.includes('tag')) return null;
  return h('p', { class: 'muted tag-note' }, 'A link with several tags counts in the row of each of its tags, so '
    + 'the rows may add up to more than the totals, which count each click once. Tags and folders are the links\' '
    + 'as they are now.');
}

// Which UTM the events of the table count under, when it is grouped by a UTM field.
function utmLine(report) {
  if (!report.group_by.some((key) => key.startsWith('utm_'))) return null;
  return h('p', { class: 'muted', 'data-utm-from': report.utm_from }, report.utm_from === 'event'
    ? 'Events are grouped by the UTM they were sent with (an event sent with its tracking id alone is under '
      + '(none)); clicks by their own.'
    : 'Events are grouped by the UTM of the click behind their tracking id, so a click and the purchases it led to '
      + 'share a row.');
}

function unattributedLine(report) {
  const left = report.unattributed;
  if (!left || !left.events) return null;
  const revenue = Object.keys(left.revenue || {}).length ? moneyText(left.revenue) : '';
  return h('p', { class: 'muted', 'data-unattributed': left.events },
    `${left.events} ${left.events === 1 ? 'event' : 'events'} in this range (${left.purchases} `
    + `${left.purchases === 1 ? 'purchase' : 'purchases'}${revenue ? `, ${revenue}` : ''}) had no click behind `
    + 'them and are not in the table.');
}

// The measures a chart can show: the counts, the rate, and the revenue of each currency the totals hold.
function measuresOf(report) {
  const currencies = Object.keys(report.totals?.revenue || {});
  return [
    ...currencies.map((currency) => [`revenue:${currency}`, `Revenue (${currency})`]),
    ['clicks', 'Clicks'], ['visitors', 'Visitors'], ['purchases', 'Purchases'], ['conversion_rate', 'Conversion rate'],
  ];
}

function measureValue(row, measure) {
  if (measure.startsWith('revenue:')) return Number(row.revenue?.[measure.slice(8)] ?? 0) || 0;
  if (measure === 'clicks') return row.clicks.human;
  if (measure === 'conversion_rate') return Number(row.conversion_rate ?? 0) || 0;
  return Number(row[measure] ?? 0);
}

function measureFormat(measure) {
  if (measure.startsWith('revenue:')) return (v) => moneyOf(v, measure.slice(8));
  if (measure === 'conversion_rate') return percent;
  return count;
}

// A row's name in a chart: the words its table cell shows.
function rowName(dimension, key) {
  const value = key[dimension];
  if (dimension === 'link') return key.link_code || value || '(no link)';
  if (dimension === 'campaign') return value ? key.campaign_name || value : '(no campaign)';
  if (dimension === 'platform') return platformName(value);
  if (dimension === 'variant') return `${value || UNKNOWN.variant} · ${key.link_code || key.link || ''}`;
  return value || UNKNOWN[dimension] || '(none)';
}

const CHART_BARS = 12;

// The chosen measure by the first dimension (the largest CHART_BARS groups) and over the range's days. Grouped
// by two, the first dimension's figures are asked of the API grouped by it alone (a visitor or a rate does not
// add up across the second); a variant stays with its link.
async function chartsOf(ctx, params, report, measure) {
  const first = report.group_by[0];
  const ask = async (group) => (await admin(inAccount(ctx.account,
    `/reports/conversions${query({ ...params, group_by: group })}`))).data;
  const alone = report.group_by.length === 1 || first === 'variant';
  const [byFirst, byDay] = await Promise.all([alone ? report : ask(first),
    report.group_by.length === 1 && first === 'day' ? report : ask('day')]);
  const format = measureFormat(measure);
  const name = measuresOf(report).find(([key]) => key === measure)?.[1] || measure;
  const dimensionName = DIMENSIONS.find(([k]) => k === first)[1];
  // the largest first; days stay in their order
  const points = byFirst.rows.map((row) => ({ label: rowName(first, row.key), value: measureValue(row, measure) }))
    .sort((a, b) => (first === 'day' ? 0 : b.value - a.value));
  const shown = points.slice(0, CHART_BARS);
  const days = new Map(byDay.rows.map((row) => [row.key.day, measureValue(row, measure)]));
  const series = daysBetween(report.from, report.to).map((date) => ({ date, value: days.get(date) ?? 0 }));
  const byFirstTitle = `${name} by ${dimensionName.toLowerCase()}`;
  const overTime = `${name} by day`;
  return h('div', { class: 'chart-pair', 'data-measure': measure },
    h('figure', { class: 'chart-holder', 'data-chart': 'by-dimension' },
      h('figcaption', {}, h('h3', {}, byFirstTitle), points.length > CHART_BARS
        ? h('p', { class: 'hint' }, `The ${CHART_BARS} largest of ${count(points.length)}.`) : null),
      shown.length
        ? fitted(h('div', {}), (width) => barsChart(shown, { width, format, label: byFirstTitle }))
        : h('p', { class: 'muted' }, 'Nothing to draw in this range.')),
    h('figure', { class: 'chart-holder', 'data-chart': 'over-time' },
      h('figcaption', {}, h('h3', {}, overTime)),
      fitted(h('div', {}), (width) => daysChart(series, { width, format, label: `${overTime}, ${report.from} – `
        + `${report.to}` }))));
}

export async function reportsView(ctx) {
  const initial = presetRange('last-7-days');
  const chosen = { from: ctx.search.get('from') || initial.from, to: ctx.search.get('to') || initial.to,
    group: groupFrom(ctx.search), utmFrom: ctx.search.get('utm_from') === 'event' ? 'event' : 'click',
    measure: ctx.search.get('measure') || '' };
  const from = h('input', { type: 'date', name: 'from', value: chosen.from, required: true });
  const to = h('input', { type: 'date', name: 'to', value: chosen.to, required: true });
  const first = h('select', { name: 'group_by' }, DIMENSIONS.map(([value, text]) =>
    h('option', { value, selected: value === chosen.group[0] }, text)));
  const second = h('select', { name: 'then_by' }, h('option', { value: '' }, '— nothing —'),
    DIMENSIONS.map(([value, text]) => h('option', { value, selected: value === chosen.group[1] }, text)));
  const utmFrom = h('select', { name: 'utm_from' }, UTM_FROM.map(([value, text]) =>
    h('option', { value, selected: value === chosen.utmFrom }, text)));
  const presets = h('div', { class: 'presets', role: 'group', 'aria-label': 'Date presets' },
    PRESETS.map(([name, text]) => h('button', { type: 'button', class: 'quiet small', 'data-preset': name,
      onclick: () => {
        Object.assign(chosen, presetRange(name));
        from.value = chosen.from;
        to.value = chosen.to;
        load();
      } }, text)));
  const form = h('form', { class: 'report-form', 'aria-label': 'Report settings', novalidate: true },
    h('div', { class: 'toolbar' },
      field('From', from), field('To', to), field('Group by', first), field('Then by', second),
      field('Events’ UTM', utmFrom)),
    presets,
    h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }));
  const results = h('div', { class: 'results', 'aria-live': 'polite' });

  // The second dimension offers what the first goes with; a variant needs its link.
  const syncSecond = () => {
    for (const option of second.options) option.disabled = !allowedPair(first.value, option.value);
    if (!allowedPair(first.value, second.value)) second.value = first.value === 'variant' ? 'link' : '';
  };

  async function load() {
    syncSecond();
    for (const button of presets.querySelectorAll('button')) {  // the preset the range is, if any
      const range = presetRange(button.dataset.preset);
      button.setAttribute('aria-pressed', String(range.from === chosen.from && range.to === chosen.to));
    }
    chosen.group = [first.value, second.value].filter(Boolean);
    chosen.utmFrom = utmFrom.value;
    const params = { from: chosen.from, to: chosen.to, group_by: chosen.group.join(',') };
    if (chosen.utmFrom === 'event') params.utm_from = 'event';
    const shownParams = () => (chosen.measure ? { ...params, measure: chosen.measure } : params);
    history.replaceState(null, '', `${ctx.base}/reports${query(shownParams())}`);
    const path = inAccount(ctx.account, `/reports/conversions${query(params)}`);
    clearErrors(form);
    let report;
    try {
      report = (await admin(path)).data;
    } catch (error) {
      if (error.status === 401 || error.status === 0) throw error;
      showErrors(form, error, { focus: false });
      results.replaceChildren(h('p', { class: 'empty' }, 'No report for these settings.'));
      return;
    }
    const csvPath = inAccount(ctx.account, `/reports/conversions${query({ ...params, format: 'csv' })}`);
    const csvName = `conversions-${report.from}-${report.to}.csv`;
    const download = h('a', { class: 'button small', href: `/api/admin/v1${csvPath}`, download: csvName,
      onclick: async (event) => {  // the admin API takes the session cookie only with the dashboard's header
        event.preventDefault();
        saveBlob(await admin(csvPath, { as: 'blob' }), csvName);
      } }, 'Download CSV');
    // The chart's measure: the one asked for when this report has it, else its first revenue, else clicks.
    const measures = measuresOf(report);
    const measure = measures.some(([key]) => key === chosen.measure) ? chosen.measure : measures[0][0];
    const measureSelect = h('select', { name: 'measure' }, measures.map(([value, text]) =>
      h('option', { value, selected: value === measure }, text)));
    const charts = h('div', { class: 'charts' }, report.rows.length ? await chartsOf(ctx, params, report, measure) : null);
    measureSelect.addEventListener('change', async () => {
      chosen.measure = measureSelect.value;
      history.replaceState(null, '', `${ctx.base}/reports${query(shownParams())}`);
      charts.replaceChildren(await chartsOf(ctx, params, report, measureSelect.value));
    });
    const chartTools = report.rows.length ? h('div', { class: 'measure-choice' }, field('Chart of', measureSelect)) : null;
    const grouped = report.group_by.map((key) => DIMENSIONS.find(([k]) => k === key)[1]).join(' and ');
    const caption = `Conversions by ${grouped}, ${day(report.from)} to ${day(report.to)}`;
    results.replaceChildren(...[
      h('div', { class: 'title-row' }, h('h2', {}, caption), download),
      chartTools, charts,
      table(caption, columns(ctx, report.group_by),
        [...report.rows.map((item) => ({ item, attrs: { 'data-key': report.group_by.map((k) => item.key[k]).join('|') } })),
          ...(report.other ? [{ item: { ...report.other, other: true }, attrs: { 'data-other': report.other.groups },
            pinned: true }]
            : [])],
        { empty: 'No clicks and no attributed events in this range. Try Last 30 days, or share a link to get '
          + 'clicks: purchases sent with a click\'s tracking_id show here.', foot: report.rows.length ? report.totals : null }),
      tagLine(report), utmLine(report), unattributedLine(report)].filter(Boolean));
  }

  const changed = () => {
    chosen.from = from.value;
    chosen.to = to.value;
    load();
  };
  form.addEventListener('change', changed);
  form.addEventListener('submit', (event) => { event.preventDefault(); changed(); });
  await load();
  return h('section', { class: 'reports-page' },
    h('h1', { tabindex: -1 }, 'Conversion report'),
    h('p', { class: 'muted' }, 'Clicks of the range and the events attributed to them (an event whose tracking id '
      + 'matches a click), by day of the click or of the event, UTC. Revenue is net of reversals.'),
    form, results);
}
