// A link's routing rules: an ordered list, each with its conditions and its target, edited in place and saved
// with one PATCH of the link's `rules`. Conditions the editor does not show (regions, OS, browsers, the
// network and more query conditions written through the API) are kept as they are. Beside the editor, a
// preview: for a visitor (country, language, referrer, query) the service says, per device, which rule
// matches and where the click goes, with the rules as edited, before they are saved.

import { editableIf } from './access.js';
import { admin, inAccount } from './api.js';
import { clearErrors, debounce, field, h, showErrors, toast } from './dom.js';
import { table } from './table.js';

const PLATFORMS = [['desktop', 'Desktop'], ['android', 'Android'], ['ios', 'iPhone and iPad']];
const DEVICES = [['mobile', 'Phone'], ['tablet', 'Tablet'], ['desktop', 'Computer']];
const DAYS = [['mon', 'Mon'], ['tue', 'Tue'], ['wed', 'Wed'], ['thu', 'Thu'], ['fri', 'Fri'], ['sat', 'Sat'],
  ['sun', 'Sun']];
const SHOWN = ['countries', 'languages', 'platforms', 'devices', 'bot', 'time', 'query', 'referrer_hosts',
  'networks'];

const list = (text) => text.split(/[\s,]+/).map((item) => item.trim()).filter(Boolean);
const joined = (items) => (items || []).join(', ');

function checkboxes(name, options, chosen, label) {
  const boxes = options.map(([value, text]) => h('label', { class: 'check' },
    h('input', { type: 'checkbox', name, value, checked: (chosen || []).includes(value) }), ` ${text}`));
  return h('fieldset', { class: 'field checks', 'data-field': name }, h('legend', {}, label), ...boxes,
    h('p', { class: 'field-error', id: `${name}-error`, 'aria-live': 'polite' }));
}

const checked = (root, name) => [...root.querySelectorAll(`input[name="${CSS.escape(name)}"]:checked`)]
  .map((box) => box.value);

// One rule's editor: its controls are named by the API's paths (rules[2].conditions.countries), so that the
// save's validation errors land beside them.
function ruleEditor(rule, index, moves) {
  const at = `rules[${index}]`;
  const c = rule.conditions || {};
  const input = (name, value, attrs = {}) => h('input', { type: 'text', name: `${at}.${name}`, value: value ?? '',
    ...attrs });
  const name = input('name', rule.name, { required: true, maxlength: 64 });
  const countries = input('conditions.countries', joined(c.countries), { placeholder: 'US, MX' });
  const languages = input('conditions.languages', joined(c.languages), { placeholder: 'es, pt-BR' });
  const referrers = input('conditions.referrer_hosts', joined(c.referrer_hosts),
    { placeholder: 'instagram.com, *.facebook.com' });
  const networks = input('conditions.networks', joined(c.networks), { placeholder: '203.0.113.0/24' });
  const bot = h('select', { name: `${at}.conditions.bot` },
    h('option', { value: '' }, 'People and bots'), h('option', { value: 'false', selected: c.bot === false }, 'People only'),
    h('option', { value: 'true', selected: c.bot === true }, 'Bots and preview fetchers only'));
  const time = c.time || {};
  const zone = input('conditions.time.timezone', time.timezone, { placeholder: 'Europe/Madrid' });
  const from = h('input', { type: 'time', name: `${at}.conditions.time.from`, value: time.from || '' });
  const to = h('input', { type: 'time', name: `${at}.conditions.time.to`, value: time.to || '' });
  const query = (c.query || [])[0] || {};
  const param = input('conditions.query', query.param, { placeholder: 'src' });
  const test = h('select', { name: `${at}.conditions.query.test` },
    h('option', { value: 'equals', selected: query.equals !== undefined }, 'equals'),
    h('option', { value: 'one_of', selected: query.one_of !== undefined }, 'is one of'),
    h('option', { value: 'present', selected: query.present === true }, 'is present'),
    h('option', { value: 'absent', selected: query.present === false }, 'is absent'));
  const expected = input('conditions.query.value', query.equals ?? joined(query.one_of));
  const target = rule.target || {};
  const kind = h('select', { name: `${at}.target.kind` },
    h('option', { value: 'url', selected: !target.link }, 'a web address'),
    h('option', { value: 'link', selected: Boolean(target.link) }, 'another link (its code)'));
  const destination = input('target.destination_url', target.destination_url, { type: 'url',
    placeholder: 'https://example.com/es' });
  const deeplink = input('target.deeplink', target.deeplink, { placeholder: 'myapp://offers/es' });
  const code = input('target.link', target.link, { placeholder: 'spring-es' });
  const urlFields = h('div', { class: 'grid' }, field('Destination', destination),
    field('Deeplink (optional)', deeplink));
  const linkField = h('div', { class: 'grid' }, field('Link code', code));
  const showTarget = () => {
    urlFields.hidden = kind.value !== 'url';
    linkField.hidden = kind.value === 'url';
  };
  kind.addEventListener('change', showTarget);
  showTarget();

  const element = h('fieldset', { class: 'card rule' },
    h('legend', {}, `Rule ${index + 1}`),
    h('div', { class: 'grid' }, field('Name', name, { hint: 'shown on each click it sends, and in reports' })),
    h('h3', {}, 'When the visitor'),
    h('div', { class: 'grid' },
      field('Is in one of these countries', countries, { hint: 'two-letter codes, e.g. US, MX' }),
      field('Prefers one of these languages', languages, { hint: 'as the browser asks: es matches es-MX' }),
      field('Comes from these sites', referrers, { hint: 'the referrer’s host; *.example.com for every subdomain' }),
      field('Is on these networks', networks, { hint: 'addresses or CIDR ranges' }),
      field('Is', bot)),
    checkboxes(`${at}.conditions.platforms`, PLATFORMS, c.platforms, 'Uses'),
    checkboxes(`${at}.conditions.devices`, DEVICES, c.devices, 'On a'),
    h('details', { open: Boolean(c.time || c.query) },
      h('summary', {}, 'Time and query'),
      h('div', { class: 'grid' }, field('Time zone', zone), field('From', from), field('To', to)),
      checkboxes(`${at}.conditions.time.days`, DAYS, time.days, 'On these days'),
      h('div', { class: 'grid' }, field('Query parameter', param), field('Test', test), field('Value(s)', expected))),
    h('h3', {}, 'Send the click to'),
    h('div', { class: 'grid' }, field('Target', kind)), urlFields, linkField,
    h('div', { class: 'actions' },
      h('button', { type: 'button', class: 'quiet', disabled: index === 0, onclick: () => moves.up(index) }, 'Move up'),
      h('button', { type: 'button', class: 'quiet', disabled: moves.last(index), onclick: () => moves.down(index) },
        'Move down'),
      h('button', { type: 'button', class: 'quiet danger', onclick: () => moves.remove(index) }, 'Remove rule')));

  // The rule as the API takes it, from the controls and what the editor does not show.
  const read = () => {
    const conditions = Object.fromEntries(Object.entries(c).filter(([key]) => !SHOWN.includes(key)));
    const put = (key, value) => { if (value !== undefined && !(Array.isArray(value) && !value.length)) conditions[key] = value; };
    put('countries', list(countries.value));
    put('languages', list(languages.value));
    put('referrer_hosts', list(referrers.value));
    put('networks', list(networks.value));
    put('platforms', checked(element, `${at}.conditions.platforms`));
    put('devices', checked(element, `${at}.conditions.devices`));
    if (bot.value) conditions.bot = bot.value === 'true';
    const days = checked(element, `${at}.conditions.time.days`);
    if (zone.value.trim() || from.value || to.value || days.length) {
      const window = { timezone: zone.value.trim() };
      if (days.length) window.days = days;
      if (from.value) window.from = from.value;
      if (to.value) window.to = to.value;
      conditions.time = window;
    }
    if (param.value.trim()) {
      const one = { param: param.value.trim() };
      if (test.value === 'present' || test.value === 'absent') one.present = test.value === 'present';
      else if (test.value === 'one_of') one.one_of = list(expected.value);
      else one.equals = expected.value;
      conditions.query = [one, ...(c.query || []).slice(1)];
    }
    const chosen = kind.value === 'link' ? { link: code.value.trim() }
      : Object.fromEntries(Object.entries({ ...target, link: undefined, destination_url: destination.value.trim(),
        deeplink: deeplink.value.trim() || undefined }).filter(([, value]) => value !== undefined && value !== ''));
    return { name: name.value.trim(), conditions, target: chosen };
  };
  return { element, read };
}

// The preview of the rules as edited, for one visitor: the service's answer per device.
function visitorPreview(account, linkBody) {
  const country = h('input', { type: 'text', name: 'visitor.country', placeholder: 'MX', maxlength: 2 });
  const language = h('input', { type: 'text', name: 'visitor.language', placeholder: 'es-MX,es;q=0.9,en;q=0.8' });
  const referer = h('input', { type: 'text', name: 'visitor.referer', placeholder: 'https://news.partner.example/' });
  const query = h('input', { type: 'text', name: 'visitor.query', placeholder: 'src=ig' });
  const out = h('div', { class: 'rule-preview', 'aria-live': 'polite' });
  const form = h('form', { class: 'visitor-form', novalidate: true },
    h('div', { class: 'grid' }, field('Country', country), field('Accept-Language', language),
      field('Referrer', referer), field('Query', query, { hint: 'name=value&…' })),
    h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }));
  const visitor = () => Object.fromEntries(Object.entries({ country: country.value.trim().toUpperCase(),
    language: language.value.trim(), referer: referer.value.trim(), query: query.value.trim() })
    .filter(([, value]) => value));
  const run = async () => {
    let body;
    try {
      body = linkBody();
    } catch {
      return;
    }
    clearErrors(form);
    try {
      const answer = (await admin(inAccount(account, '/links/preview'), { method: 'POST',
        body: { ...body, visitor: visitor() } })).data;
      out.replaceChildren(h('p', { class: 'muted' }, 'Where this visitor goes'), table('Where this visitor goes', [
        { label: 'Device', cell: (device) => device.label || device.device },
        { label: 'Rule', cell: (device) => device.rule || 'none: the link’s own' },
        { label: 'Goes to', cell: (device) => h('code', { class: 'destination' }, device.location || device.answer) },
      ], answer.devices.map((item) => ({ item })), { cards: false, className: 'visitor-routes' }));
    } catch (error) {
      if (error.status === 401) throw error;
      out.replaceChildren(h('p', { class: 'muted' }, 'No preview until the errors are fixed.'));
      showErrors(form, error, { focus: false });
    }
  };
  const soon = debounce(run, 300);
  form.addEventListener('input', soon);
  form.addEventListener('submit', (event) => { event.preventDefault(); run(); });
  return { element: h('section', { class: 'card' }, h('h3', {}, 'Try a visitor'), form, out), run: soon };
}

export function rulesSection(ctx, link, previewBody, onSaved) {
  let rules = structuredClone(link.rules || []);
  let editors = [];
  const holder = h('div', { class: 'rules' });
  const empty = h('p', { class: 'muted' }, 'No rules: every click goes where the link says.');
  const save = h('button', { type: 'submit', class: 'primary' }, 'Save rules');
  const add = h('button', { type: 'button', class: 'quiet' }, 'Add a rule');
  const form = h('form', { class: 'rules-form', novalidate: true }, empty, holder,
    h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }), h('div', { class: 'actions' }, add, save));
  const current = () => editors.map((editor) => editor.read());
  const preview = visitorPreview(ctx.account, () => ({ ...previewBody(), rules: current() }));
  const moves = {
    up: (i) => { rules = current(); [rules[i - 1], rules[i]] = [rules[i], rules[i - 1]]; paint(); },
    down: (i) => { rules = current(); [rules[i + 1], rules[i]] = [rules[i], rules[i + 1]]; paint(); },
    remove: (i) => { rules = current(); rules.splice(i, 1); paint(); },
    last: (i) => i === rules.length - 1,
  };
  function paint() {
    editors = rules.map((rule, i) => ruleEditor(rule, i, moves));
    holder.replaceChildren(...editors.map((editor) => editor.element));
    empty.hidden = rules.length > 0;
    preview.run();
  }
  add.addEventListener('click', () => {
    rules = [...current(), { name: `rule ${rules.length + 1}`, conditions: {}, target: {} }];
    paint();
    holder.lastElementChild?.querySelector('input')?.focus();
  });
  form.addEventListener('input', preview.run);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    save.disabled = true;
    try {
      const saved = (await admin(inAccount(ctx.account, `/links/${link.id}`), { method: 'PATCH',
        body: { rules: current() } })).data;
      rules = structuredClone(saved.rules || []);
      paint();
      onSaved(saved);
      toast(rules.length ? 'Rules saved.' : 'Rules removed.');
    } catch (error) {
      if (error.status === 401) throw error;
      // A list's error names its item (countries[1]); the control holds the whole list.
      error.fields.forEach((pair) => { pair[0] = pair[0].replace(/^body\./, ''); });
      const listed = error.fields.map(([path, message]) => [path.replace(/\[\d+\]$/, ''), message]);
      showErrors(form, { fields: listed, text: error.text });
    } finally {
      save.disabled = false;
    }
  });
  paint();
  return h('section', { class: 'rules-section', 'aria-labelledby': 'rules-title' },
    h('h2', { id: 'rules-title' }, 'Routing rules'),
    h('p', {}, 'The first rule whose conditions all hold sends the click to its target; when none holds, the click ',
      'goes where the link says. Conditions left empty do not count.'),
    editableIf(ctx.account, 'links:write', form), preview.element);
}
