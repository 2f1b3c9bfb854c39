// Every table of the dashboard: sortable by any column (its header is a button; again reverses; aria-sort says
// which) and filtered by a box over the rows (the rows holding the typed words, in any column). A table turns
// into labelled cards on a narrow screen (each cell carries its column's name).
//
// A column is { label, cell(item), class, sort, title }: `sort(item)` gives the value it sorts by, a number (sorted
// as a number), an ISO date or time (sorted as one, which its text order is) or text (compared as words, "a2"
// before "a10"); without it a column of class "num" sorts by the number its text shows, any other by its text.
// A column whose label is empty, or with `sort: false`, does not sort. Missing values (null, "", "—") go last
// whichever the direction. A row is { item, attrs, pinned }: pinned rows (a sum of the rest, "Other") stay at
// the end; `foot` is one more item shown in the table's footer (a totals row), never sorted or filtered.
//
// A paged list (links, campaigns, deliveries) sorts on the server: `server: { sort, onSort }` orders nothing here.
// Its columns sort when they name the API's key (`sortKey: 'clicks'`, with `sortFirst: 'descending'` for those
// whose first click should put the most or the newest first); the others are plain headers, since ordering one
// page of a list would not order the list. `sort` is the API's sort as it stands ("-clicks"): aria-sort shows
// it; a click calls `onSort("clicks")` or `onSort("-clicks")`, and the page asks the API for page 1 in that
// order and builds the table again (its header button keeps the focus).

import { h } from './dom.js';

const MISSING = new Set(['', '—', '-']);
const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

function numberIn(text) {
  const match = /-?\d[\d,]*(\.\d+)?/.exec(text.replace(/\u00a0/g, ' '));
  return match ? Number(match[0].replace(/,/g, '')) : null;
}

function keyOf(column, item, cell) {
  if (column.sort) return column.sort(item);
  const text = cell.textContent.trim();
  if (MISSING.has(text)) return null;
  return (column.class || '').split(/\s+/).includes('num') ? numberIn(text) : text;
}

function compare(x, y) {
  if (typeof x === 'number' && typeof y === 'number') return x - y;
  return collator.compare(String(x), String(y));
}

const missing = (value) => value === null || value === undefined || (typeof value === 'number' && Number.isNaN(value))
  || (typeof value === 'string' && MISSING.has(value.trim()));

let uid = 0;

// The API's sort ("-clicks") as the column's key and its direction.
export function sortOf(sort) {
  const text = String(sort || '');
  return text.startsWith('-') ? { key: text.slice(1), descending: true } : { key: text, descending: false };
}

function serverHead(column, server) {
  const th = h('th', { scope: 'col', class: column.class, title: column.title });
  if (!column.sortKey) {
    th.append(column.label || '');
    return th;
  }
  const now = sortOf(server.sort);
  const button = h('button', { type: 'button', class: 'sort', 'data-column': column.label,
    'data-sort-key': column.sortKey }, column.label, h('span', { class: 'sort-mark', 'aria-hidden': 'true' }));
  th.setAttribute('aria-sort', now.key !== column.sortKey ? 'none' : (now.descending ? 'descending' : 'ascending'));
  button.addEventListener('click', () => {
    const descending = now.key === column.sortKey ? !now.descending : column.sortFirst === 'descending';
    server.onSort(`${descending ? '-' : ''}${column.sortKey}`);
  });
  th.append(button);
  return th;
}

// After a page built its table again in the order asked: the focus back on the header button that asked it.
export function refocusSort(container, sort) {
  container.querySelector(`button.sort[data-sort-key="${sortOf(sort).key}"]`)?.focus();
}

export function table(caption, columns, rows, {
  empty = 'Nothing to show.', cards = true, foot = null, filter = true, sorted = null, className = '', server = null,
} = {}) {
  if (!rows.length) return h('p', { class: 'empty' }, empty);
  const id = `table-${++uid}`;
  const built = rows.map((row) => {
    const cells = columns.map((c) => h('td', { 'data-label': c.label, class: c.class }, c.cell(row.item)));
    const tr = h('tr', row.attrs || {}, cells);
    return { row, tr, keys: columns.map((c, i) => keyOf(c, row.item, cells[i])), text: tr.textContent.toLowerCase() };
  });
  const body = h('tbody', {});
  const state = { by: null, descending: false, words: [] };
  const count = h('span', { class: 'muted filter-count', 'aria-live': 'polite' });
  const noMatch = h('p', { class: 'empty filter-empty', hidden: true }, 'No row holds these words. Clear the filter '
    + 'to see every row.');

  const heads = columns.map((column, index) => {
    if (server) return serverHead(column, server);
    const th = h('th', { scope: 'col', class: column.class, title: column.title });
    if (!column.label || column.sort === false) {
      th.append(column.label || '');
      return th;
    }
    const button = h('button', { type: 'button', class: 'sort', 'data-column': column.label }, column.label,
      h('span', { class: 'sort-mark', 'aria-hidden': 'true' }));
    th.setAttribute('aria-sort', 'none');
    button.addEventListener('click', () => {
      // the first click of a column of numbers puts the largest first; of words, A first
      const numeric = built.some((b) => typeof b.keys[index] === 'number');
      state.descending = state.by === index ? !state.descending : numeric;
      state.by = index;
      for (const other of heads) if (other.hasAttribute('aria-sort')) other.setAttribute('aria-sort', 'none');
      th.setAttribute('aria-sort', state.descending ? 'descending' : 'ascending');
      paint();
    });
    th.append(button);
    return th;
  });

  function paint() {
    const shown = built.filter((b) => state.words.every((word) => b.text.includes(word)));
    const free = shown.filter((b) => !b.row.pinned);
    const pinned = shown.filter((b) => b.row.pinned);
    if (state.by !== null) {
      const i = state.by;
      free.sort((a, b) => {
        const x = a.keys[i];
        const y = b.keys[i];
        if (missing(x) || missing(y)) return Number(missing(x)) - Number(missing(y));
        const order = compare(x, y);
        return state.descending ? -order : order;
      });
    }
    body.replaceChildren(...[...free, ...pinned].map((b) => b.tr));
    count.textContent = state.words.length ? `${shown.length} of ${built.length} rows` : '';
    noMatch.hidden = Boolean(shown.length);
  }

  let box = null;
  if (filter && rows.length > 1) {
    const input = h('input', { type: 'search', id: `${id}-filter`, class: 'table-filter', autocomplete: 'off',
      'aria-controls': id, placeholder: 'Words in any column' });
    input.addEventListener('input', () => {
      state.words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      paint();
    });
    box = h('div', { class: 'table-tools' },
      h('label', { for: input.id, title: caption }, 'Filter rows'), input, count);
  }
  const cellsOf = (item) => columns.map((c) => h('td', { 'data-label': c.label, class: c.class }, c.cell(item)));
  const element = h('div', { class: 'table-block' }, box,
    h('div', { class: 'table-wrap' },
      h('table', { class: `${cards ? 'cards' : 'plain'} ${className}`.trim(), id },
        h('caption', { class: 'visually-hidden' }, caption),
        h('thead', {}, h('tr', {}, heads)),
        body,
        foot ? h('tfoot', {}, h('tr', { class: 'total-row' }, cellsOf(foot))) : null)),
    noMatch);
  if (sorted) {
    const index = columns.findIndex((c) => c.label === sorted.by);
    if (index >= 0) {
      state.by = index;
      state.descending = Boolean(sorted.descending);
      heads[index].setAttribute('aria-sort', state.descending ? 'descending' : 'ascending');
    }
  }
  paint();
  return element;
}
