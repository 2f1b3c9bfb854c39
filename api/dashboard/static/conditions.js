// When a tier, a reward or a behaviour campaign applies: groups of conditions, any one group holding when all
// its conditions hold (the API's `[[{type, operator, value}]]`). `conditionsEditor` shows them in a
// marketer's words and reads them back in that shape; its controls are named by the API's paths
// ("entry_conditions[0][1].value"), so the API's messages stand beside them. `contentEditor` is a free-form
// JSON object (a reward's or a campaign's `content`) as text. Both tell whether their value was changed, so a
// form PATCHes them only then.

import { field, h } from './dom.js';

const TYPES = ['Order Value', 'Total Order Value', 'Purchase Count', 'Points Balance'];
const OPERATORS = ['greater than', 'greater than or equal', 'less than', 'less than or equal', 'equal'];
// The specification's spelling, accepted by the API: shown (and compared) as the right one, never offered.
const operatorOf = (operator) => (operator === 'grater than' ? 'greater than' : operator);

const numberOr = (raw) => {
  const text = String(raw ?? '').trim();
  return text !== '' && !Number.isNaN(Number(text)) ? Number(text) : text;
};

// The stored conditions in the form the editor returns, so that an untouched editor compares equal.
function normal(groups) {
  return (Array.isArray(groups) ? groups : []).map((group) => (Array.isArray(group) ? group : []).map((c) => ({
    type: c?.type, operator: operatorOf(c?.operator), value: numberOr(c?.value) })));
}

function choice(name, options, current) {
  const known = options.includes(current) ? options : [current, ...options].filter(Boolean);
  return h('select', { name }, known.map((value) => h('option', { value, selected: value === current }, value)));
}

// `name`: the API's member ("conditions", "entry_conditions", "attributes.conditions"); `label`: the legend;
// `none`: what no condition means for this object.
export function conditionsEditor({ name, label, value, none = 'None: always applies.' }) {
  const stored = normal(value);
  let groups = stored.map((group) => group.map((c) => ({ ...c, value: String(c.value) })));
  const body = h('div', { class: 'condition-groups' });
  const box = h('fieldset', { class: 'condition-editor', name, id: `${name.replace(/[^A-Za-z0-9_-]/g, '-')}-editor`,
    'aria-describedby': `${name.replace(/[^A-Za-z0-9_-]/g, '-')}-editor-error` },
  h('legend', {}, label), body);
  const node = h('div', { class: 'field wide conditions-field', 'data-field': name }, box,
    h('p', { class: 'field-error', id: `${box.id}-error`, 'aria-live': 'polite' }));

  // What the controls hold now (kept when a row or a group is added or removed).
  function current() {
    return [...body.querySelectorAll('.condition-group')].map((group) => [...group.querySelectorAll('.condition')]
      .map((row) => ({ type: row.querySelector('[data-part="type"]').value,
        operator: row.querySelector('[data-part="operator"]').value,
        value: row.querySelector('[data-part="value"]').value })));
  }
  const blank = () => ({ type: TYPES[0], operator: OPERATORS[0], value: '' });
  function change(edit) {
    groups = current();
    edit();
    groups = groups.filter((group) => group.length);
    paint();
  }

  function row(condition, g, c) {
    const path = `${name}[${g}][${c}]`;
    const where = `condition ${c + 1} of group ${g + 1}`;
    const type = choice(`${path}.type`, TYPES, condition.type);
    const operator = choice(`${path}.operator`, OPERATORS, operatorOf(condition.operator));
    const amount = h('input', { type: 'text', name: `${path}.value`, value: condition.value, inputmode: 'decimal',
      autocomplete: 'off', 'aria-label': `Number of ${where}` });
    type.dataset.part = 'type';
    type.setAttribute('aria-label', `What of ${where}`);
    operator.dataset.part = 'operator';
    operator.setAttribute('aria-label', `Comparison of ${where}`);
    amount.dataset.part = 'value';
    const remove = h('button', { type: 'button', class: 'small quiet', 'aria-label': `Remove ${where}`,
      onclick: () => change(() => groups[g].splice(c, 1)) }, 'Remove');
    return h('div', { class: 'condition' }, field('What', type), field('Comparison', operator),
      field('Number', amount), h('div', { class: 'condition-remove' }, remove));
  }

  function paint() {
    const parts = [h('p', { class: 'hint' }, groups.length ? 'Qualifies when any of these groups holds.' : none)];
    groups.forEach((group, g) => {
      if (g) parts.push(h('p', { class: 'condition-or' }, 'or'));
      parts.push(h('div', { class: 'condition-group', role: 'group', 'aria-label': `Group ${g + 1}` },
        h('p', { class: 'condition-all' }, `Group ${g + 1}, all of:`),
        group.map((condition, c) => row(condition, g, c)),
        h('button', { type: 'button', class: 'small quiet', 'aria-label': `Add a condition to group ${g + 1}`,
          onclick: () => change(() => groups[g].push(blank())) }, 'Add a condition')));
    });
    parts.push(h('button', { type: 'button', class: 'small', onclick: () => change(() => groups.push([blank()])) },
      groups.length ? 'Add another group (or)' : 'Add a condition'));
    body.replaceChildren(...parts);
  }
  paint();

  const read = () => current().map((group) => group.map((c) => ({ type: c.type, operator: c.operator,
    value: numberOr(c.value) })));
  return { node, read, changed: () => JSON.stringify(read()) !== JSON.stringify(stored) };
}

// A free-form JSON object as text. `read()` gives {value} or {error} (a message for the field).
export function contentEditor({ name = 'content', value }) {
  const stored = value && typeof value === 'object' && !Array.isArray(value) ? value : {};
  const area = h('textarea', { name, rows: 4, spellcheck: 'false', class: 'mono',
    placeholder: '{"headline": "Spring sale"}' });
  area.value = Object.keys(stored).length ? JSON.stringify(stored, null, 2) : '';
  const node = field('Content (JSON)', area, { wide: true,
    hint: 'What the storefront shows, as a JSON object such as {"headline": "Spring sale"}; empty: none.' });
  function read() {
    const text = area.value.trim();
    if (!text) return { value: {} };
    let parsed;
    try {
      parsed = JSON.parse(text);
    } catch {
      return { error: 'This is not valid JSON: write an object such as {"headline": "Spring sale"}.' };
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
      return { error: 'Write a JSON object, between { and }, such as {"headline": "Spring sale"}.' };
    }
    return { value: parsed };
  }
  const changed = () => {
    const { value: now } = read();
    return now !== undefined && JSON.stringify(now) !== JSON.stringify(stored);
  };
  return { node, read, changed };
}
