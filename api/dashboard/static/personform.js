// The form a customer or a contact is created and edited with: labelled fields (a text box, or a choice), each
// sent as its API field. Created, every filled field is sent (POST); edited, one PATCH of the fields whose value
// the person changed (a field left as it was is not sent, so it cannot be refused); emptied, a field is sent as
// null. The API checks everything; its messages stand beside the fields they name.

import { editableIf } from './access.js';
import { clearErrors, field, h, submitting, toast } from './dom.js';

// specs: [{ name, label, type?, options?: [[value, label]], none?, hint?, toApi?, fromApi? }]
function control(spec, value) {
  if (spec.options) {
    const known = spec.options.some(([v]) => v === value);
    return h('select', { name: spec.name },
      spec.none !== undefined ? h('option', { value: '' }, spec.none) : null,
      value && !known ? h('option', { value, selected: true }, value) : null,
      spec.options.map(([v, label]) => h('option', { value: v, selected: v === value }, label)));
  }
  return h('input', { name: spec.name, type: spec.type || 'text', value: value ?? '', autocomplete: 'off',
    spellcheck: 'false', placeholder: spec.placeholder });
}

const shown = (spec, item) => (spec.fromApi ? spec.fromApi(item?.[spec.name]) : item?.[spec.name]) ?? '';

// `item` is null for a new one. `send(body)` saves and returns the saved item; `done(saved)` follows a save.
// `identifies`: the fields of which a new one needs at least one (a person with none of them could not be found).
export function personForm({ account, permission, label, submit, specs, item, send, done, identifies = [] }) {
  const form = h('form', { class: 'person-form card', novalidate: true, 'aria-label': label });
  const button = h('button', { type: 'submit', class: 'primary' }, submit);
  let initial = {};

  function fill(current) {
    initial = Object.fromEntries(specs.map((spec) => [spec.name, String(shown(spec, current))]));
    form.replaceChildren(
      h('div', { class: 'grid' }, specs.map((spec) => field(spec.label, control(spec, shown(spec, current)),
        { hint: spec.hint }))),
      h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }),
      h('div', { class: 'actions' }, button));
  }

  function body() {
    const out = {};
    for (const spec of specs) {
      const value = form.elements[spec.name].value.trim();
      if (item ? value === initial[spec.name].trim() : !value) continue;
      out[spec.name] = value ? (spec.toApi ? spec.toApi(value) : value) : null;
    }
    return out;
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    const changes = body();
    if (item && !Object.keys(changes).length) {
      toast('Nothing changed.');
      return;
    }
    if (!item && identifies.length && !identifies.some((name) => changes[name])) {
      const names = specs.filter((spec) => identifies.includes(spec.name)).map((spec) => spec.label.toLowerCase());
      const line = form.querySelector('.form-error');
      line.textContent = `Fill in at least one of: ${names.join(', ')}.`;
      line.focus();
      return;
    }
    await submitting(form, button, async () => {
      const saved = await send(changes);
      if (item) {
        item = saved;
        fill(saved);
      }
      await done(saved);
    });
  });
  fill(item);
  return editableIf(account, permission, form);
}

export const STATUSES = [['ACTIVE', 'Active'], ['INACTIVE', 'Inactive'], ['BLOCKED', 'Blocked'],
  ['DELETED', 'Deleted']];
