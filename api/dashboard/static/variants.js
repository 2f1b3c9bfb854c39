// The variant report of a link's A/B split (GET .../links/{id}/variants): per variant, clicks, visitors,
// purchases, revenue, conversion rate and the z-test against the control, in a table sorted by any column
// (a header's button; again to reverse). The figures are the admin API's; nothing is computed here.

import { admin, inAccount } from './api.js';
import { h } from './dom.js';

const money = (revenue) => Object.entries(revenue).map(([c, a]) => `${a} ${c}`).join(', ') || '—';
const percent = (rate) => (rate === null ? '—' : `${(Number(rate) * 100).toFixed(2)}%`);

const COLUMNS = [
  { label: 'Variant', key: (r) => r.variant, cell: (r) => [r.variant, r.control ? ' (control)' : '',
    r.in_link ? '' : ' (removed)'] },
  { label: 'Weight', num: true, key: (r) => r.weight ?? -1, cell: (r) => (r.weight === null ? '—' : String(r.weight)) },
  { label: 'Clicks', num: true, key: (r) => r.clicks.human, cell: (r) => String(r.clicks.human) },
  { label: 'Visitors', num: true, key: (r) => r.visitors, cell: (r) => String(r.visitors) },
  { label: 'Purchases', num: true, key: (r) => r.purchases, cell: (r) => String(r.purchases) },
  { label: 'Revenue', key: (r) => money(r.revenue), cell: (r) => money(r.revenue) },
  { label: 'Conversion', num: true, key: (r) => (r.conversion_rate === null ? -1 : Number(r.conversion_rate)),
    cell: (r) => percent(r.conversion_rate) },
  { label: 'p-value', num: true, key: (r) => r.significance?.p_value ?? 2,
    cell: (r) => (r.significance?.p_value ?? '—').toString() },
  { label: 'Against the control', key: (r) => r.significance?.verdict ?? '',
    cell: (r) => (r.significance ? r.significance.verdict : '—') },
];

function sortable(rows) {
  let by = null;
  let descending = false;
  const body = h('tbody', {});
  const heads = COLUMNS.map((column, index) => {
    const button = h('button', { type: 'button', class: 'link-button' }, column.label);
    const th = h('th', { scope: 'col', class: column.num ? 'num' : '', 'aria-sort': 'none' }, button);
    button.addEventListener('click', () => {
      descending = by === index ? !descending : Boolean(column.num);
      by = index;
      heads.forEach((other) => other.setAttribute('aria-sort', 'none'));
      th.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
      paint();
    });
    return th;
  });
  const paint = () => {
    const shown = [...rows];
    if (by !== null) {
      const key = COLUMNS[by].key;
      shown.sort((a, b) => {
        const x = key(a);
        const y = key(b);
        const order = typeof x === 'number' ? x - y : String(x).localeCompare(String(y));
        return descending ? -order : order;
      });
    }
    body.replaceChildren(...shown.map((row) => h('tr', {}, COLUMNS.map((c) =>
      h('td', { 'data-label': c.label, class: c.num ? 'num' : '' }, c.cell(row))))));
  };
  paint();
  return h('div', { class: 'table-wrap' }, h('table', { class: 'cards variants' },
    h('caption', { class: 'visually-hidden' }, 'Variants of the A/B split'),
    h('thead', {}, h('tr', {}, heads)), body));
}

export async function variantSection(ctx, link) {
  if (!link.variants || !link.variants.length) return null;
  const report = (await admin(inAccount(ctx.account, `/links/${link.id}/variants`))).data;
  return h('section', { class: 'card', 'aria-labelledby': 'variants-title' },
    h('h2', { id: 'variants-title' }, 'A/B split'),
    h('p', { class: 'hint' }, 'Conversion is purchases per visitor; each variant is tested against the control '
      + '(two-proportion z-test). A purchase counts for the variant its tracking_id\'s click went to.'),
    sortable(report.variants));
}
