// Building the page without innerHTML (so no value from the API is ever read as markup), forms whose
// errors stand beside their fields, and the small formatting rules every view shares (numbers and money:
// format.js).

import { number } from './format.js';

const SVG_NS = 'http://www.w3.org/2000/svg';

function assign(node, attrs) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), value);
    else if (key === 'text') node.textContent = value;
    else node.setAttribute(key, value === true ? '' : String(value));
  }
}

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  assign(node, attrs);
  return append(node, children);
}

export function s(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  assign(node, attrs);
  return append(node, children);
}

let toastTimer;
export function toast(message) {
  const box = document.getElementById('toast');
  box.textContent = message;
  box.classList.add('shown');
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => box.classList.remove('shown'), 4000);
}

let uid = 0;
const nextId = (name) => `f-${name.replace(/[^A-Za-z0-9_-]/g, '-')}-${++uid}`;

// A labelled control with its hint and its error line; `control` is an <input>, <select> or <textarea>.
export function field(label, control, { hint, aside, wide } = {}) {
  const id = control.id || nextId(control.name || 'field');
  control.id = id;
  const errorId = `${id}-error`;
  const hintId = hint ? `${id}-hint` : null;
  control.setAttribute('aria-describedby', [hintId, errorId].filter(Boolean).join(' '));
  return h('div', { class: wide ? 'field wide' : 'field', 'data-field': control.name },
    h('label', { for: id }, label),
    h('div', { class: 'control-row' }, control, aside),
    hint ? h('p', { class: 'hint', id: hintId }, hint) : null,
    h('p', { class: 'field-error', id: errorId, 'aria-live': 'polite' }));
}

function controlFor(form, path) {
  return form.querySelector(`[name="${CSS.escape(path)}"]`)
    || form.querySelector(`[name="${CSS.escape(path.replace(/^utm\./, ''))}"]`);
}

// A control's error line, found beside it: also in a form not on the page yet (a view's first load).
const errorLine = (control) => control.closest('.field')?.querySelector(`[id="${CSS.escape(control.id)}-error"]`)
  || document.getElementById(`${control.id}-error`);

function clearControl(control) {
  control.removeAttribute('aria-invalid');
  const line = errorLine(control);
  if (line) line.textContent = '';
}

// Clears the errors of the named fields, or every error of the form (with its own line) when none are named.
export function clearErrors(form, names) {
  if (names) {
    for (const name of names) {
      const control = controlFor(form, name);
      if (control) clearControl(control);
    }
    return;
  }
  for (const control of form.querySelectorAll('[aria-invalid]')) clearControl(control);
  for (const line of form.querySelectorAll('.field-error, .form-error')) line.textContent = '';
}

// A form's submit: `button` disabled while `work` runs, and the API's refusal shown beside the fields it names
// (showErrors). A lost session (401) goes on up, where the app signs out.
export async function submitting(form, button, work) {
  button.disabled = true;
  try {
    await work();
  } catch (error) {
    if (error.status === 401) throw error;
    showErrors(form, error);
  } finally {
    button.disabled = false;
  }
}

// Shows an API error beside the fields it names (paths like "android.package" or "utm.utm_source" match
// the control of that name, or of its last part); what names no field goes to the form's own error line.
// Returns the names of the fields it marked. A field's error goes when the field is edited; other errors
// stay (call clearErrors first for a fresh start).
export function showErrors(form, error, { focus = true } = {}) {
  let first = null;
  const marked = [];
  const unplaced = [];
  for (const [path, message] of error.fields || []) {
    const control = controlFor(form, path);
    if (!control) { unplaced.push(`${path}: ${message}`); continue; }
    control.setAttribute('aria-invalid', 'true');
    control.closest('details')?.setAttribute('open', '');  // a field folded away is shown with its error
    const line = errorLine(control);
    if (line && !marked.includes(control.name)) line.textContent = message;
    marked.push(control.name);
    first = first || control;
  }
  const formLine = form.querySelector('.form-error');
  if (formLine && (!first || unplaced.length)) formLine.textContent = unplaced.length ? unplaced.join('; ') : error.text;
  if (focus) (first || formLine)?.focus?.();
  if (!form.dataset.clearsOnInput) {
    form.dataset.clearsOnInput = 'yes';
    form.addEventListener('input', (event) => { if (event.target.name) clearControl(event.target); });
  }
  return marked;
}

export function debounce(fn, ms) {
  let timer;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

export function when(isoText) {
  if (!isoText) return '—';
  const moment = new Date(isoText);
  if (Number.isNaN(moment.getTime())) return isoText;
  return moment.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit',
    minute: '2-digit' });
}

export function day(isoText) {
  if (!isoText) return '—';
  const moment = new Date(isoText);
  if (Number.isNaN(moment.getTime())) return isoText;
  return moment.toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' });
}

export function badge(text, tone) {
  return h('span', { class: `badge ${tone || String(text).toLowerCase().replace(/\s+/g, '-')}` }, text);
}

// "1–20 of 35" with Previous and Next; `go(offset)` shows another page.
export function pager(offset, limit, count, shown, go) {
  const last = Math.min(offset + shown, count);
  return h('nav', { class: 'pager', 'aria-label': 'Pages' },
    h('span', { class: 'muted' }, count ? `${number(offset + 1)}–${number(last)} of ${number(count)}` : 'None'),
    h('button', { type: 'button', class: 'quiet', disabled: offset <= 0, onclick: () => go(Math.max(0, offset - limit)) },
      'Previous'),
    h('button', { type: 'button', class: 'quiet', disabled: last >= count, onclick: () => go(offset + limit) }, 'Next'));
}


export async function copyText(text, fallbackInput) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // No clipboard API (a page served over plain http to another host): select and copy the old way.
    if (!fallbackInput) return false;
    fallbackInput.focus();
    fallbackInput.select();
    return document.execCommand('copy');
  }
}

export function saveBlob(blob, name) {
  const url = URL.createObjectURL(blob);
  const anchor = h('a', { href: url, download: name, class: 'visually-hidden' });
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// A secret or a one-time link shown once: a read-only field to select, a button that copies it, and a note.
export function shownOnce(label, value, { note, name = 'shown-once' } = {}) {
  const input = h('input', { type: 'text', name, value, readonly: true, spellcheck: 'false', class: 'mono' });
  const copy = h('button', { type: 'button', class: 'quiet', 'aria-label': `Copy the ${label.toLowerCase()}` },
    'Copy');
  copy.addEventListener('click', async () => {
    toast(await copyText(value, input) ? 'Copied.' : 'Select the text and copy it.');
  });
  return h('div', { class: 'card shown-once', role: 'region', 'aria-label': label },
    field(label, input, { aside: copy, hint: note, wide: true }));
}
