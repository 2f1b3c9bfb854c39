// A webhook connection's clicks (its config.clicks, the link.clicked webhook): on or off, which links (every link,
// or those picked by code and those carrying a tag), bots left out, included or alone, and how many clicks a
// webhook carries and how long a webhook that is not full waits for more. The fields are named after the config's
// members, so that the API's messages (config.clicks.batch_size, config.clicks.link_ids[2]) stand beside them.

import { admin, inAccount, query } from './api.js';
import { debounce, h } from './dom.js';
import { clicksSheet } from './delivery.js';

const FIND_LIMIT = 8;
const BOTS = [['exclude', 'Leave bots out', 'The reports count people: crawlers and link previews are not sent.'],
  ['include', 'Include bots', 'Clicks by bots are sent with the people\'s.'],
  ['only', 'Only bots', 'Only the clicks of crawlers and link previews are sent.']];

let uid = 0;

// The API's paths of one link or one tag (config.clicks.link_ids[3]) are shown at their picker.
export const clickErrorPath = (path) => path.replace(/^(config\.clicks\.(link_ids|tags))\[\d+\]$/, '$1');

async function codeOf(ctx, id) {
  try {
    return (await admin(inAccount(ctx.account, `/links/${encodeURIComponent(id)}`))).data.code;
  } catch (error) {
    if (error.status === 404) return null;  // deleted since: the save names it
    throw error;
  }
}

// A number typed is sent as a number; anything else as typed, for the API to say what is wrong with it.
function numberOf(input) {
  const text = input.value.trim();
  if (!text) return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : text;
}

function errorLine(id) {
  return h('p', { class: 'field-error', id: `${id}-error`, 'aria-live': 'polite' });
}

// The links picked: found by code (GET .../links/overview?q=), each shown by its code with a button to take it off.
function linkPicker(ctx, chosen, editable, onChange) {
  const id = `f-click-links-${++uid}`;
  const picked = h('ul', { class: 'picked-links', 'aria-label': 'Links picked' });
  const found = h('ul', { class: 'found-links', 'aria-label': 'Links found' });
  const search = h('input', { type: 'search', id, name: 'config.clicks.link_ids', autocomplete: 'off',
    spellcheck: 'false', placeholder: 'a code, a destination or a tag', 'aria-describedby': `${id}-hint ${id}-error`,
    title: 'config.clicks.link_ids' });

  function paintPicked() {
    picked.replaceChildren(...[...chosen].map(([linkId, code]) => {
      const remove = editable ? h('button', { type: 'button', class: 'small quiet',
        'aria-label': `Take ${code || 'the deleted link'} off` }, '×') : null;
      remove?.addEventListener('click', () => {
        chosen.delete(linkId);
        paintPicked();
        onChange();
        search.focus();
      });
      return h('li', { 'data-link-id': linkId, 'data-code': code || '' },
        code ? h('code', {}, code) : h('span', { class: 'muted', title: linkId }, 'a deleted link'), remove);
    }));
    if (!chosen.size) picked.append(h('li', { class: 'muted none' }, 'No link picked.'));
  }

  let asked = 0;
  const find = debounce(async () => {
    const text = search.value.trim();
    const mine = ++asked;
    if (!text) { found.replaceChildren(); return; }
    const links = (await admin(inAccount(ctx.account, `/links/overview${query({ q: text, limit: FIND_LIMIT })}`))).data;
    if (mine !== asked) return;  // a later search answered first
    found.replaceChildren(...links.filter((link) => !chosen.has(link.id)).map((link) => {
      const add = h('button', { type: 'button', class: 'small', 'aria-label': `Add ${link.code}` }, 'Add');
      add.addEventListener('click', () => {
        chosen.set(link.id, link.code);
        add.closest('li').remove();
        paintPicked();
        onChange();
        search.focus();  // the button is gone: the next code is typed where the last was
      });
      return h('li', { 'data-code': link.code }, add, h('code', {}, link.code),
        h('span', { class: 'muted' }, link.destination_url));
    }));
    if (!found.children.length) found.append(h('li', { class: 'muted none' }, `No other link matches “${text}”.`));
  }, 250);
  search.addEventListener('input', find);
  search.addEventListener('keydown', (event) => { if (event.key === 'Enter') event.preventDefault(); });
  paintPicked();
  if (!editable) {
    return h('div', { class: 'field wide', 'data-field': 'config.clicks.link_ids' },
      h('p', { class: 'hint' }, 'The links whose clicks are sent:'), picked);
  }
  return h('div', { class: 'field wide', 'data-field': 'config.clicks.link_ids' },
    h('label', { for: id }, 'Find a link by its code'), picked, search, found,
    h('p', { class: 'hint', id: `${id}-hint` }, 'Type part of a code, then add each link whose clicks are sent.'),
    errorLine(id));
}

// The account's tags, each a box to check, and a field for tags no link carries yet.
function tagPicker(known, stored) {
  const id = `f-click-tags-${++uid}`;
  const names = [...new Set([...known.map((t) => t.name), ...stored])];
  const boxes = names.map((name) => h('input', { type: 'checkbox', name: 'click_tag', value: name,
    checked: stored.includes(name) }));
  const counts = new Map(known.map((t) => [t.name, t.links]));
  const more = h('input', { type: 'text', id, name: 'config.clicks.tags', autocomplete: 'off', spellcheck: 'false',
    placeholder: 'summer, launch', 'aria-describedby': `${id}-hint ${id}-error`, title: 'config.clicks.tags' });
  const node = h('fieldset', { class: 'field wide click-tags', 'data-field': 'config.clicks.tags' },
    h('legend', {}, 'And the links tagged'),
    boxes.length ? h('div', { class: 'tag-boxes' }, boxes.map((box) => h('label', { class: 'check' }, box, ' ',
      box.value, counts.has(box.value) ? h('span', { class: 'muted' }, ` (${counts.get(box.value)})`) : null)))
      : null,
    h('label', { for: id }, boxes.length ? 'Other tags' : 'Tags'), more,
    h('p', { class: 'hint', id: `${id}-hint` }, 'Separated by commas; a tag counts from the moment a link carries it.'),
    errorLine(id));
  node.value = () => [...new Set([...boxes.filter((b) => b.checked).map((b) => b.value),
    ...more.value.split(',').map((t) => t.trim()).filter(Boolean)])];
  return node;
}

function botsChoice(chosen) {
  const id = `f-click-bots-${++uid}`;
  const radios = BOTS.map(([value], i) => h('input', { type: 'radio', name: 'config.clicks.bots', value,
    id: i ? null : id, checked: value === chosen, 'aria-describedby': i ? null : `${id}-error` }));
  const node = h('fieldset', { class: 'field wide click-bots', 'data-field': 'config.clicks.bots',
    title: 'config.clicks.bots' },
  h('legend', {}, 'Bots'),
  BOTS.map(([, label, hint], i) => h('label', { class: 'check' }, radios[i],
    h('span', {}, label, h('span', { class: 'muted' }, ` — ${hint}`)))),
  errorLine(id));
  node.value = () => radios.find((r) => r.checked)?.value || 'exclude';
  return node;
}

function numberField(name, label, value, hint) {
  const id = `f-${name.replace(/\./g, '-')}-${++uid}`;
  const input = h('input', { type: 'text', inputmode: 'decimal', id, name, value: value ?? '', autocomplete: 'off',
    title: name, 'aria-describedby': `${id}-hint ${id}-error` });
  return [input, h('div', { class: 'field', 'data-field': name }, h('label', { for: id }, label),
    h('div', { class: 'control-row' }, input), h('p', { class: 'hint', id: `${id}-hint` }, hint), errorLine(id))];
}

// The section of the connection's form; `stored` is its config.clicks (null: not subscribed). The node's value()
// is the config.clicks to save (null: no clicks); it shows only for a webhook (`node.shownFor(destination)`).
export async function clickSettings(ctx, stored, { editable }) {
  clicksSheet();
  const settings = stored && typeof stored === 'object' ? stored : null;
  const linkIds = Array.isArray(settings?.link_ids) ? settings.link_ids : [];
  const storedTags = Array.isArray(settings?.tags) ? settings.tags : [];
  const [codes, known] = await Promise.all([Promise.all(linkIds.map((id) => codeOf(ctx, id))),
    admin(inAccount(ctx.account, '/links/tags')).then((answer) => answer.data.tags)]);
  const chosen = new Map(linkIds.map((id, i) => [id, codes[i]]));

  const onId = `f-click-on-${++uid}`;
  const on = h('input', { type: 'checkbox', id: onId, name: 'config.clicks', checked: Boolean(settings),
    'aria-describedby': `${onId}-hint ${onId}-error`, title: 'config.clicks (link.clicked)' });
  const every = h('input', { type: 'radio', name: 'click_links', value: 'every',
    checked: !linkIds.length && !storedTags.length });
  const only = h('input', { type: 'radio', name: 'click_links', value: 'only',
    checked: Boolean(linkIds.length || storedTags.length) });
  const note = h('p', { class: 'hint picked-note', role: 'status' });
  const tags = tagPicker(known, storedTags);
  const paintNote = () => {
    note.textContent = only.checked && !chosen.size && !tags.value().length
      ? 'No link or tag picked yet: every link\'s clicks are sent.' : '';
  };
  const picker = h('div', { class: 'click-links' }, linkPicker(ctx, chosen, editable, paintNote), tags, note);
  tags.addEventListener('change', paintNote);
  tags.addEventListener('input', paintNote);
  const [size, sizeField] = numberField('config.clicks.batch_size', 'Clicks per webhook', settings?.batch_size ?? 1,
    '1 sends a webhook for each click; up to 100 sends them together.');
  const [wait, waitField] = numberField('config.clicks.batch_seconds', 'Wait for more clicks (seconds)',
    settings?.batch_seconds ?? 10, 'How long a webhook that is not full waits for more clicks before it goes '
      + '(0 to 300).');
  const bots = botsChoice(settings?.bots || 'exclude');
  const details = h('div', { class: 'click-settings' },
    h('fieldset', { class: 'field wide click-which', 'data-field': 'click_links' },
      h('legend', {}, 'Which clicks'),
      h('label', { class: 'check' }, every, ' Every link\'s clicks'),
      h('label', { class: 'check' }, only, ' Only these links'),
      picker),
    bots, h('div', { class: 'grid' }, sizeField, waitField));
  const paint = () => {
    details.hidden = !on.checked;
    picker.hidden = !only.checked;
    paintNote();
  };
  for (const control of [on, every, only]) control.addEventListener('change', paint);
  paint();

  const node = h('section', { class: 'click-hook', 'aria-labelledby': `${onId}-title` },
    h('h2', { id: `${onId}-title` }, 'Clicks'),
    h('div', { class: 'field', 'data-field': 'config.clicks' },
      h('label', { class: 'check' }, on, ' Send clicks to this webhook'),
      h('p', { class: 'hint', id: `${onId}-hint` }, 'Each click on the account\'s links goes to the endpoint as it '
        + 'is stored, signed like the events, a few seconds after it happens. Clicks from before are not sent.'),
      errorLine(onId)),
    details);
  node.value = () => {
    if (!on.checked) return null;
    const value = { bots: bots.value(), batch_size: numberOf(size), batch_seconds: numberOf(wait) };
    if (only.checked) {
      value.link_ids = [...chosen.keys()];
      value.tags = tags.value();
    }
    return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
  };
  node.shownFor = (destination) => { node.hidden = destination !== 'webhook'; };
  return node;
}
