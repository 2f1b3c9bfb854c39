// The Import page: another link service's export (a file picked here) in. "Check" sends it as a dry run and
// shows what would happen to each row; "Import" sends the same file for real and shows what happened. The
// file is the request's body, as the admin API takes it (POST .../imports?vendor=...&dry_run=...).

import { admin, inAccount, query } from './api.js';
import { badge, field, h, toast } from './dom.js';
import { table } from './table.js';
import { count } from './format.js';

const VENDORS = [['bitly', 'Bitly'], ['rebrandly', 'Rebrandly'], ['shortio', 'Short.io'], ['shlink', 'Shlink'],
  ['yourls', 'YOURLS'], ['kutt', 'Kutt']];
const TONES = { created: 'on', skipped: 'finished', error: 'failed', pending: 'pending' };
const LABELS = { skipped: 'Skipped', error: 'Error', pending: 'Not reached' };

function why(row) {
  if (row.status !== 'error') return row.reason || '';
  const details = row.details;
  const said = details && typeof details === 'object' ? [details.field, details.message].filter(Boolean).join(': ')
    : (details || '');
  return said ? `${row.error}: ${said}` : row.error;
}

function resultView(result) {
  const { summary } = result;
  const words = result.dry_run
    ? `${count(summary.rows)} rows: ${count(summary.created)} to create, ${count(summary.skipped)} skipped, `
      + `${count(summary.failed)} failed.`
    : `${count(summary.rows)} rows: ${count(summary.created)} created, ${count(summary.skipped)} skipped, `
      + `${count(summary.failed)} failed.`;
  const created = result.dry_run ? 'Would be created' : 'Created';
  const pending = summary.pending
    ? ` ${summary.pending} not reached in time: import the same file again to go on.` : '';
  return h('div', { class: 'import-result' },
    h('p', { class: 'import-summary', role: 'status' }, words + pending),
    table(result.dry_run ? 'What the import would do' : 'What the import did', [
      { label: 'Row', class: 'num', sort: (r) => r.row, cell: (r) => count(r.row) },
      { label: 'Status', cell: (r) => badge(r.status === 'created' ? created : LABELS[r.status], TONES[r.status]) },
      { label: 'Code', cell: (r) => r.code || (r.original_code ? `${r.original_code} → new code` : 'new code') },
      { label: 'Destination', class: 'url', cell: (r) => h('span', { title: r.destination_url }, r.destination_url) },
      { label: 'Why', cell: why },
    ], result.rows.map((row) => ({ item: row, attrs: { 'data-row': String(row.row), 'data-status': row.status } })),
    { empty: 'The file holds no links.' }));
}

export async function importView(ctx) {
  const file = h('input', { type: 'file', name: 'file', accept: '.json,.csv,application/json,text/csv' });
  const vendor = h('select', { name: 'vendor' }, VENDORS.map(([value, label]) => h('option', { value }, label)));
  const newCodes = h('input', { type: 'checkbox', name: 'new_codes' });
  const results = h('div', { class: 'results', 'aria-live': 'polite' });
  const problem = h('p', { class: 'field-error', role: 'alert' });
  const importButton = h('button', { type: 'button', class: 'primary', disabled: true }, 'Import');

  async function send(dryRun) {
    problem.textContent = '';
    const chosen = file.files[0];
    if (!chosen) {
      problem.textContent = 'Choose the export file first.';
      return;
    }
    const path = inAccount(ctx.account, `/imports${query({ vendor: vendor.value, dry_run: dryRun ? 'true' : '',
      new_codes: newCodes.checked ? 'true' : '' })}`);
    try {
      const answer = await admin(path, { method: 'POST', raw: await chosen.text() });
      results.replaceChildren(resultView(answer.data));
      importButton.disabled = !dryRun;
      if (!dryRun) toast(`${count(answer.data.summary.created)} links imported.`);
    } catch (error) {
      problem.textContent = error.text || String(error);
      results.replaceChildren();
    }
  }

  const reset = () => { importButton.disabled = true; results.replaceChildren(); };
  for (const control of [file, vendor, newCodes]) control.addEventListener('change', reset);
  importButton.addEventListener('click', () => send(false));
  const form = h('form', { class: 'import-form', onsubmit: (e) => { e.preventDefault(); send(true); } },
    field('Export file', file, { hint: 'The file as the other service gave it: JSON (Bitly: JSON or CSV).' }),
    field('From', vendor),
    field('Codes taken elsewhere', newCodes, { hint: 'Give a fresh code to a link whose code another account has, '
      + 'or that is not a code here, instead of leaving it out.' }),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Check'), importButton),
    problem);
  return h('section', {},
    h('h1', { tabindex: -1 }, 'Import links'),
    h('p', {}, 'Bring in the links of a Bitly, Rebrandly, Short.io, Shlink, YOURLS or Kutt export. Check the file '
      + 'first: the table says what will happen to each row; nothing is written until you import.'),
    form, results);
}
