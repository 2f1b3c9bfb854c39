// The UTM builder (the five fields, with the defaults the resolver adds shown beside them) and the live
// preview of where a click goes from a desktop, an Android phone and an iPhone. The preview is the
// service's own answer (POST .../links/preview runs the resolver's rules); nothing is computed here.
// A utm_campaign that is a campaign's id (the default of email, push and WhatsApp links) is shown by the
// campaign's name (`nameOf`); the URLs keep the id, which is what the click carries.

import { admin, inAccount } from './api.js';
import { debounce, field, h } from './dom.js';
import { deviceSentence, platformName } from './names.js';

export const UTM_FIELDS = [
  ['utm_source', 'utm_source', 'newsletter'],
  ['utm_medium', 'utm_medium', 'email'],
  ['utm_campaign', 'utm_campaign', 'summer-sale'],
  ['utm_term', 'utm_term', 'cold brew'],
  ['utm_content', 'utm_content', 'header-button'],
];

const ANSWERS = {
  destination: 'Redirects to the destination',
  intent: 'Opens the app (intent URL); without the app, the fallback',
  fallback: 'Redirects to the fallback URL',
  play: 'Redirects to Google Play with the install referrer',
  app_store: 'Redirects to the App Store',
  deeplink: 'Opens the deeplink',
};
const noNames = () => null;

export function utmBuilder({ nameOf = noNames } = {}) {
  const inputs = {};
  const defaults = {};
  const fields = UTM_FIELDS.map(([name, label, hint]) => {
    const input = h('input', { name, type: 'text', autocomplete: 'off', spellcheck: 'false', maxlength: 200,
      placeholder: `e.g. ${hint}` });
    inputs[name] = input;
    defaults[name] = h('span', { class: 'default', 'data-default-for': name });
    return field(label, input, { aside: defaults[name] });
  });
  const element = h('fieldset', { class: 'utm' },
    h('legend', {}, 'UTM parameters'),
    h('p', { class: 'hint' }, 'Set, change or clear the utm_* parameters of the destination; its other parameters '
      + 'and its #fragment stay as they are. Beside each field: what the resolver adds when no one sets it.'),
    h('div', { class: 'utm-grid' }, fields));
  return {
    element,
    inputs,
    // Every field that has a value; with `all`, the empty ones too as null (removed from the destination).
    changes(all) {
      const found = {};
      for (const [name] of UTM_FIELDS) {
        const value = inputs[name].value.trim();
        if (value) found[name] = value;
        else if (all) found[name] = null;
      }
      return found;
    },
    fill(values) {
      for (const [name] of UTM_FIELDS) inputs[name].value = values[name] || '';
    },
    showDefaults(values) {
      for (const [name] of UTM_FIELDS) {
        const value = values[name];
        const campaign = name === 'utm_campaign' && value ? nameOf(value) : null;
        defaults[name].textContent = value ? `default: ${campaign || value}` : 'no default';
        defaults[name].title = !value ? '' : campaign
          ? `When no one sets ${name}, the resolver adds ${value}, the id of the campaign “${campaign}”`
          : `When no one sets ${name}, the resolver adds ${value}`;
        defaults[name].dataset.value = value || '';
        defaults[name].classList.toggle('none', !value);
      }
    },
  };
}

// A URL with the tracking id placeholder marked, wherever (and however deeply encoded) it stands.
function marked(url, placeholder) {
  const parts = url.split(placeholder);
  const out = [];
  parts.forEach((part, i) => {
    if (i) out.push(h('mark', { title: 'a new tracking id for each click' }, '‹click id›'));
    out.push(part);
  });
  return out;
}

// One step of the explanation in words: the device in people's names, a campaign id by its campaign's name.
function stepText(step, nameOf) {
  if (step.step === 'device') return deviceSentence(step);
  const campaign = step.step === 'utm' && step.field === 'utm_campaign' && step.value ? nameOf(step.value) : null;
  return campaign ? step.text.replace(`=${step.value}`, ` = the id of the campaign “${campaign}”`) : step.text;
}

// Why the resolver answers a device so: its own explanation steps, UTM fields no source has left out.
function whyList(steps, nameOf) {
  const shown = steps.filter((step) => step.step !== 'utm' || step.value != null);
  return h('ul', { class: 'why', 'aria-label': 'why' },
    ...shown.map((step) => h('li', { 'data-step': step.step, title: step.step === 'utm' ? step.value : null },
      stepText(step, nameOf))));
}

// What the installed app makes of the click (the service's answer to the app's own request): shown first, as
// it is what a person with the app sees.
function appAnswer(app, placeholder) {
  const apps = app.apps.join(', ');
  return h('div', { class: 'app-answer', 'data-app': apps },
    h('p', { class: 'answer' }, `With the app installed: opens ${apps}`,
      app.answer === 'deeplink' ? ' at the deeplink' : ' at the destination'),
    h('code', { class: 'location' }, marked(app.location || '', placeholder)));
}

export function previewPanel({ nameOf = noNames } = {}) {
  const status = h('p', { class: 'muted preview-status', 'aria-live': 'polite' }, 'The preview appears once the '
    + 'destination is a valid https URL.');
  const list = h('div', { class: 'devices' });
  const element = h('section', { class: 'preview', 'aria-labelledby': 'preview-title' },
    h('h2', { id: 'preview-title' }, 'Where a click goes'), status, list);
  return {
    element,
    show(preview) {
      status.textContent = 'Each click gets its own tracking_id, marked ‹click id› below.';
      list.replaceChildren(...preview.devices.map((d) => h('article', { class: 'device', 'data-device': d.device },
        h('h3', {}, platformName(d.device), ' ', h('span', { class: 'muted' }, `(${d.label})`)),
        d.app ? appAnswer(d.app, preview.tracking_id) : null,
        h('p', { class: 'answer' }, d.app ? 'Without the app: ' : '', ANSWERS[d.answer] || d.answer),
        h('code', { class: 'location' }, marked(d.location || '', preview.tracking_id)),
        whyList(d.explanation || [], nameOf))));
    },
    stale(message) {
      status.textContent = message;
      list.replaceChildren();
    },
  };
}

// Asks for a preview whenever `read()` changes, at most once per pause in typing; `onResult(preview)` or
// `onError(error)` gets the answer of the latest request only.
export function livePreview(account, read, onResult, onError) {
  let asked = 0;
  const run = async () => {
    const mine = ++asked;
    const body = read();
    if (!body) return;
    try {
      const answer = await admin(inAccount(account, '/links/preview'), { method: 'POST', body });
      if (mine === asked) onResult(answer.data);
    } catch (error) {
      if (mine === asked) onError(error);
    }
  };
  return { now: run, soon: debounce(run, 300) };
}
