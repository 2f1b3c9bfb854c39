// The variant report of a link's A/B split (GET .../links/{id}/variants): per variant, clicks, visitors,
// purchases, revenue, conversion rate and the z-test against the control, in a table sorted by any column
// (table.js: a header's button; again to reverse). The figures are the admin API's; nothing is computed here. Beside it,
// the split's editor: each variant's name, weight and destination (none: the link's own), saved with one PATCH
// of the link's `variants`; a variant whose target is another link, or has more than a destination, keeps it.
// A period picker above the report: the split's whole life (the default), a preset, or any from/to (UTC days).

import { can } from './access.js';
import { admin, inAccount, query } from './api.js';
import { clearErrors, day, field, h, showErrors, submitting, toast } from './dom.js';
import { count, moneyText, moneyValue, percent } from './format.js';
import { presetRange } from './reports.js';
import { table } from './table.js';

const COLUMNS = [
  { label: 'Variant', sort: (r) => r.variant, cell: (r) => [r.variant, r.control ? ' (control)' : '',
    r.in_link ? '' : ' (removed)'] },
  { label: 'Weight', class: 'num', sort: (r) => r.weight, cell: (r) => (r.weight === null ? '—' : count(r.weight)) },
  { label: 'Clicks', class: 'num', sort: (r) => r.clicks.human, cell: (r) => count(r.clicks.human) },
  { label: 'Visitors', class: 'num', sort: (r) => r.visitors, cell: (r) => count(r.visitors) },
  { label: 'Purchases', class: 'num', sort: (r) => r.purchases, cell: (r) => count(r.purchases) },
  { label: 'Revenue', class: 'num', sort: (r) => moneyValue(r.revenue), cell: (r) => moneyText(r.revenue) },
  { label: 'Conversion', class: 'num', sort: (r) => (r.conversion_rate === null ? null : Number(r.conversion_rate)),
    cell: (r) => percent(r.conversion_rate) },
  { label: 'p-value', class: 'num', sort: (r) => r.significance?.p_value ?? null,
    cell: (r) => (r.significance?.p_value ?? '—').toString() },
  { label: 'Against the control', sort: (r) => r.significance?.verdict ?? null,
    cell: (r) => (r.significance ? r.significance.verdict : '—') },
];

const sortable = (rows) => table('Variants of the A/B split', COLUMNS, rows.map((item) => ({ item })),
  { className: 'variants', filter: false });

function variantRow(variant, index, remove) {
  const at = `variants[${index}]`;
  const target = variant.target || {};
  const name = h('input', { type: 'text', name: `${at}.name`, value: variant.name || '', maxlength: 64 });
  const weight = h('input', { type: 'number', name: `${at}.weight`, value: variant.weight ?? 50, min: 0, step: 1 });
  const destination = h('input', { type: 'url', name: `${at}.target.destination_url`,
    value: target.link ? '' : (target.destination_url || ''), placeholder: 'the link’s own destination',
    disabled: Boolean(target.link) });
  const element = h('fieldset', { class: 'variant-row' },
    h('legend', {}, index === 0 ? 'Control' : `Variant ${index + 1}`),
    h('div', { class: 'grid' }, field('Name', name), field('Weight', weight),
      field(target.link ? `Goes where link ${target.link} goes` : 'Destination', destination)),
    h('div', { class: 'actions' },
      h('button', { type: 'button', class: 'quiet danger', onclick: () => remove(index) }, 'Remove variant')));
  const read = () => {
    const url = destination.value.trim();
    const kept = target.link ? target : (url ? { ...target, destination_url: url } : null);
    return { name: name.value.trim(), weight: Number(weight.value), ...(kept ? { target: kept } : {}) };
  };
  return { element, read };
}

function splitEditor(ctx, link, onSaved) {
  let variants = structuredClone(link.variants || []);
  let rows = [];
  const holder = h('div', { class: 'variants-editor' });
  const save = h('button', { type: 'submit', class: 'primary' }, 'Save split');
  const add = h('button', { type: 'button', class: 'quiet' }, 'Add a variant');
  const form = h('form', { class: 'split-form', novalidate: true }, holder,
    h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }), h('div', { class: 'actions' }, add, save));
  const current = () => rows.map((row) => row.read());
  const paint = () => {
    rows = variants.map((variant, i) => variantRow(variant, i, (at) => {
      variants = current();
      variants.splice(at, 1);
      paint();
    }));
    holder.replaceChildren(...rows.map((row) => row.element));
  };
  add.addEventListener('click', () => {
    variants = current();
    if (!variants.length) variants.push({ name: 'A', weight: 50 });
    variants.push({ name: String.fromCharCode(65 + variants.length), weight: 50 });
    paint();
  });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    await submitting(form, save, async () => {
      const body = { variants: current() };
      if (!body.variants.length) body.variants = null;
      const saved = (await admin(inAccount(ctx.account, `/links/${link.id}`), { method: 'PATCH', body })).data;
      variants = structuredClone(saved.variants || []);
      paint();
      onSaved(saved);
      toast(variants.length ? 'Split saved.' : 'Split removed: every click goes where the link says.');
    });
  });
  paint();
  return form;
}

const PERIODS = [['all', 'All time'], ['last-7-days', 'Last 7 days'], ['last-week', 'Last week'],
  ['last-30-days', 'Last 30 days']];

// The report with its period: From and To (empty: the split's whole life) and presets; a refused range is shown
// beside its field with the API's message.
async function reportPanel(ctx, link) {
  const chosen = { from: '', to: '' };
  const from = h('input', { type: 'date', name: 'from' });
  const to = h('input', { type: 'date', name: 'to' });
  const presets = h('div', { class: 'presets', role: 'group', 'aria-label': 'Periods' },
    PERIODS.map(([name, text]) => h('button', { type: 'button', class: 'quiet small', 'data-period': name,
      onclick: () => {
        Object.assign(chosen, name === 'all' ? { from: '', to: '' } : presetRange(name));
        from.value = chosen.from;
        to.value = chosen.to;
        load();
      } }, text)));
  const form = h('form', { class: 'report-form variant-period', 'aria-label': 'Period of the variant report',
    novalidate: true },
  h('div', { class: 'toolbar' }, field('From (UTC)', from), field('To (UTC)', to)), presets,
  h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }));
  const results = h('div', { class: 'variant-results', 'aria-live': 'polite' });

  async function load() {
    for (const button of presets.querySelectorAll('button')) {
      const name = button.dataset.period;
      const range = name === 'all' ? { from: '', to: '' } : presetRange(name);
      button.setAttribute('aria-pressed', String(range.from === chosen.from && range.to === chosen.to));
    }
    clearErrors(form);
    let report;
    try {
      report = (await admin(inAccount(ctx.account, `/links/${link.id}/variants${query(chosen)}`))).data;
    } catch (error) {
      if (error.status === 401 || error.status === 0) throw error;
      showErrors(form, error, { focus: false });
      results.replaceChildren(h('p', { class: 'empty' }, 'No report for this period.'));
      return;
    }
    const period = report.from === null ? 'all time' : `${day(report.from)} to ${day(report.to)}`;
    results.replaceChildren(h('p', { class: 'muted variant-period-shown' }, `Figures of ${period}: clicks by the day `
      + 'they were taken, purchases by the day they were made (UTC).'), sortable(report.variants));
  }

  const changed = () => {
    chosen.from = from.value;
    chosen.to = to.value;
    load();
  };
  form.addEventListener('change', changed);
  form.addEventListener('submit', (event) => { event.preventDefault(); changed(); });
  await load();
  return h('div', { class: 'variant-report' }, form, results);
}

export async function variantSection(ctx, link, onSaved = () => {}) {
  const report = link.variants && link.variants.length ? await reportPanel(ctx, link) : null;
  return h('section', { class: 'card', 'aria-labelledby': 'variants-title' },
    h('h2', { id: 'variants-title' }, 'A/B split'),
    h('p', { class: 'hint' }, 'Clicks no rule takes are split by weight, each visitor kept on one variant. '
      + 'Conversion is purchases per visitor; each variant is tested against the control '
      + '(two-proportion z-test). A purchase counts for the variant its tracking_id\'s click went to.'),
    report || h('p', { class: 'muted' }, 'No split: add two variants to test a change.'),
    can(ctx.account, 'links:write') ? splitEditor(ctx, link, onSaved) : null);
}
