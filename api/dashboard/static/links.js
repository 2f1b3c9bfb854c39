// The list of links (searchable, paged, with the clicks of the last 7 days) and the form that creates one.

import { admin, inAccount, query } from './api.js';
import { badge, clearErrors, day, debounce, field, h, pager, saveBlob, showErrors, submitting, toast, when } from './dom.js';
import { table } from './table.js';
import { count, number } from './format.js';
import { refocusSort } from './table.js';
import { livePreview, previewPanel, utmBuilder } from './utm.js';

const PAGE = 20;
// The orders the API sorts the whole list by (GET .../links/overview?sort=): newest first unless asked.
const SORTS = ['created', 'updated', 'code', 'clicks', 'last_clicked'];
const DEFAULT_SORT = '-created';
export const KINDS = [
  ['campaign', 'Campaign'], ['email', 'Email'], ['push', 'Push'], ['whatsapp', 'WhatsApp'], ['in_app', 'In-app'],
  ['news_feed', 'News feed'], ['external', 'External'],
];
export const kindLabel = (kind) => (KINDS.find(([k]) => k === kind) || [kind, kind])[1];

// A link's tags as small badges (the list and the link's page), each in its colour when the account gave it one.
export function tagBadges(tags, colors = new Map()) {
  return (tags || []).length
    ? h('span', { class: 'tags' }, tags.map((t) => badge(t, `tag${colors.get(t) ? ` tag-${colors.get(t)}` : ''}`)))
    : '—';
}

// A day in the list (the time in full on hover), or "—".
const dated = (name) => (l) => (l[name] ? h('span', { title: when(l[name]) }, day(l[name])) : '—');

export async function linksView(ctx) {
  const results = h('div', { class: 'results', 'aria-live': 'polite' });
  const search = h('input', { type: 'search', name: 'q', value: ctx.search.get('q') || '', autocomplete: 'off',
    placeholder: 'code, destination, tag, folder or UTM value' });
  const tag = h('select', { name: 'tag' });
  let colors = new Map();
  const folder = h('select', { name: 'folder' });
  // The account's tags and folders with their links, as options (again after a bulk action changed them).
  async function choices(wanted = {}) {
    const names = (await admin(inAccount(ctx.account, '/links/tags'))).data;
    colors = new Map(names.tags.filter((t) => t.color).map((t) => [t.name, t.color]));
    const fill = (select, items, all, chosen) => select.replaceChildren(h('option', { value: '' }, all),
      ...items.map((item) => h('option', { value: item.name, selected: chosen === item.name },
        `${item.name} (${item.links})`)));
    fill(tag, names.tags, 'Every tag', wanted.tag ?? tag.value);
    fill(folder, names.folders, 'Every folder', wanted.folder ?? folder.value);
  }
  await choices({ tag: ctx.search.get('tag') || '', folder: ctx.search.get('folder') || '' });
  let offset = Number(ctx.search.get('offset')) || 0;
  let sort = SORTS.includes((ctx.search.get('sort') || '').replace(/^-/, '')) ? ctx.search.get('sort') : DEFAULT_SORT;
  const selected = new Set();
  const bar = bulkBar(ctx, selected, async () => { await choices(); await load(); });

  let asked = 0;  // the latest load: an earlier search answered late does not replace a later one's
  async function load() {
    const q = search.value.trim();
    const filters = { q, tag: tag.value, folder: folder.value };
    const ordered = sort === DEFAULT_SORT ? '' : sort;
    history.replaceState(null, '', `${ctx.base}/links${query({ ...filters, sort: ordered, offset: offset || '' })}`);
    const mine = ++asked;
    const page = await admin(inAccount(ctx.account, `/links/overview${query({ ...filters, sort: ordered, limit: PAGE,
      offset })}`));
    if (mine !== asked) return;
    const rows = page.data.map((link) => ({ item: link, attrs: { 'data-code': link.code } }));
    const boxes = [];
    const pick = (l) => {
      const box = h('input', { type: 'checkbox', name: 'select', value: l.id, checked: selected.has(l.id),
        'aria-label': `Select ${l.code}` });
      box.addEventListener('change', () => { if (box.checked) selected.add(l.id); else selected.delete(l.id); bar.update(); });
      boxes.push(box);
      return box;
    };
    const all = h('input', { type: 'checkbox', name: 'select-page', 'aria-label': 'Select every link of this page' });
    all.addEventListener('change', () => {
      for (const box of boxes) {
        box.checked = all.checked;
        if (all.checked) selected.add(box.value); else selected.delete(box.value);
      }
      bar.update();
    });
    const filtered = q || tag.value || folder.value;
    results.replaceChildren(
      table('Links', [
        { label: 'Select', class: 'pick', cell: pick },
        { label: 'Code', sortKey: 'code', cell: (l) => [h('a', { href: `${ctx.base}/links/${l.id}` }, l.code),
          h('span', { class: 'muted link-kind' }, kindLabel(l.kind))] },
        { label: 'Campaign', cell: (l) => l.campaign_name || (l.campaign_id ? l.campaign_id : '—') },
        { label: 'Destination', class: 'url', cell: (l) => h('span', { title: l.destination_url }, l.destination_url) },
        { label: 'Tags', cell: (l) => tagBadges(l.tags, colors) },
        { label: 'Folder', cell: (l) => l.folder || '—' },
        { label: 'Clicks (7 days)', class: 'num', cell: (l) => count(l.clicks_7d) },
        { label: 'Clicks', class: 'num', sortKey: 'clicks', sortFirst: 'descending',
          title: 'Clicks by people since the link was made', cell: (l) => count(l.clicks) },
        { label: 'Last clicked', sortKey: 'last_clicked', sortFirst: 'descending', cell: dated('last_clicked_at') },
        { label: 'Created', sortKey: 'created', sortFirst: 'descending', cell: dated('created_at') },
        { label: 'Status', cell: (l) => (l.disabled ? badge('Disabled', 'off') : badge('Active', 'on')) },
      ], rows, { empty: filtered ? 'No link matches this search.' : 'No links yet: create the first one.',
        className: 'links-list',
        server: { sort, onSort: (next) => { sort = next; offset = 0; load().then(() => refocusSort(results, next)); } } }),
      rows.length ? h('p', { class: 'muted sort-note' }, 'Code, Clicks, Last clicked and Created sort every link '
        + 'found, not only this page; the filter box looks within this page.') : null,
      rows.length ? h('label', { class: 'select-page' }, all, ' Select every link of this page') : null,
      pager(offset, PAGE, page.count, page.data.length, (next) => { offset = next; load(); }));
    bar.update();
  }

  const reload = debounce(() => { offset = 0; load(); }, 250);
  search.addEventListener('input', reload);
  tag.addEventListener('change', reload);
  folder.addEventListener('change', reload);
  const form = h('form', { role: 'search', class: 'toolbar', onsubmit: (e) => { e.preventDefault(); reload(); } },
    field('Search links', search), field('Tag', tag), field('Folder', folder));
  await load();
  return h('section', {},
    h('div', { class: 'title-row' },
      h('h1', { tabindex: -1 }, 'Links'),
      ctx.can('links:write') ? h('div', { class: 'actions' },
        h('a', { class: 'button', href: `${ctx.base}/links/import` }, 'Import'),
        h('a', { class: 'button primary', href: `${ctx.base}/links/new` }, 'New link')) : null),
    form, bar.element, results);
}

// The actions on the selected links: add or remove a tag, move to a folder, disable or enable (for those who may
// change links), export as CSV (for everyone who sees them). Each is all or nothing: the API names any link it
// refused, and nothing changes then.
function bulkBar(ctx, selected, reload) {
  const count = h('strong', { class: 'selected-count' });
  const error = h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' });
  const tagName = h('input', { name: 'bulk-tag', type: 'text', autocomplete: 'off', placeholder: 'tag name',
    maxlength: 50 });
  const folderName = h('input', { name: 'bulk-folder', type: 'text', autocomplete: 'off',
    placeholder: 'folder (empty: none)', maxlength: 100 });
  const run = async (action, body, done) => {
    error.textContent = '';
    try {
      const answer = await admin(inAccount(ctx.account, `/links/bulk/${action}`),
        { method: 'POST', body: { link_ids: [...selected], ...body } });
      toast(done(answer.data));
      await reload();
    } catch (failure) {
      if (failure.status === 401) throw failure;
      error.textContent = (failure.fields || []).length
        ? failure.fields.map(([path, message]) => `${path}: ${message}`).join('; ') : failure.text;
      error.focus();
    }
  };
  const changed = (verb) => (data) => `${verb}: ${number(data.changed)} of ${number(data.selected)} link(s) changed.`;
  const button = (label, onclick, attrs = {}) => h('button', { type: 'button', class: 'quiet', onclick, ...attrs }, label);
  const writes = ctx.can('links:write') ? [
    h('span', { class: 'bulk-group' }, tagName,
      button('Add tag', () => tagName.value.trim() && run('tags', { add: [tagName.value.trim()] }, changed('Tagged'))),
      button('Remove tag', () => tagName.value.trim()
        && run('tags', { remove: [tagName.value.trim()] }, changed('Untagged')))),
    h('span', { class: 'bulk-group' }, folderName,
      button('Move', () => run('folder', { folder: folderName.value.trim() || null }, changed('Moved')))),
    button('Disable', () => run('disable', { disabled: true }, changed('Disabled'))),
    button('Enable', () => run('disable', { disabled: false }, changed('Enabled'))),
  ] : [];
  const exportCsv = button('Export CSV', async () => {
    error.textContent = '';
    try {
      saveBlob(await admin(inAccount(ctx.account, '/links/bulk/export'),
        { method: 'POST', body: { link_ids: [...selected] }, as: 'blob' }), 'links.csv');
    } catch (failure) {
      if (failure.status === 401) throw failure;
      error.textContent = failure.text;
    }
  });
  const clear = button('Clear selection', () => { selected.clear(); reload(); });
  const element = h('div', { class: 'bulk-bar card', role: 'region', 'aria-label': 'Selected links', hidden: true },
    h('div', { class: 'actions' }, count, ...writes, exportCsv, clear), error);
  return {
    element,
    update() {
      element.hidden = selected.size === 0;
      count.textContent = `${selected.size} selected`;
    },
  };
}

function optional(name, label, options = {}) {
  const { type = 'text', hint, placeholder } = options;
  return field(label, h('input', { name, type, autocomplete: 'off', spellcheck: 'false', placeholder }), { hint });
}

// The link fields of the form as the admin API takes them (empty fields left out).
function linkBody(form) {
  const value = (name) => form.elements[name].value.trim() || null;
  const body = {
    kind: value('kind'), code: value('code'), campaign_id: value('campaign_id'), template_id: value('template_id'),
    destination_url: value('destination_url') || '', deeplink: value('deeplink'), fallback_url: value('fallback_url'),
    domain: form.elements.domain ? value('domain') : null,
  };
  if (value('android.package') || value('android.fallback_url')) {
    body.android = { package: value('android.package') || '', fallback_url: value('android.fallback_url') };
  }
  if (value('ios.app_store_id') || value('ios.fallback_url')) {
    body.ios = { app_store_id: value('ios.app_store_id'), fallback_url: value('ios.fallback_url') };
  }
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== null));
}

export async function newLinkView(ctx) {
  const campaigns = (await admin(inAccount(ctx.account, `/campaigns/overview${query({ limit: 500 })}`))).data;
  const domains = (await admin(inAccount(ctx.account, '/domains'))).data;
  const domain = h('select', { name: 'domain' }, h('option', { value: '' }, '— the shared host and every live domain —'),
    domains.map((d) => h('option', { value: d.host }, `${d.host}${d.status === 'live' ? '' : ' (pending)'}`)));
  const kind = h('select', { name: 'kind' }, KINDS.map(([value, label]) => h('option', { value }, label)));
  const campaign = h('select', { name: 'campaign_id' }, h('option', { value: '' }, '— none —'),
    campaigns.map((c) => h('option', { value: c.id }, `${c.name} (${c.status.toLowerCase()})`)));
  const destination = h('input', { name: 'destination_url', type: 'url', required: true, autocomplete: 'off',
    spellcheck: 'false', placeholder: 'https://shop.example.com/page?x=1#section' });
  const names = new Map(campaigns.map((c) => [c.id, c.name]));
  const nameOf = (value) => names.get(value) || null;
  const utm = utmBuilder({ nameOf });
  const panel = previewPanel({ nameOf });
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Create link');
  const form = h('form', { class: 'link-form', novalidate: true },
    h('div', { class: 'grid' },
      field('Kind', kind, { hint: 'Email, push and WhatsApp links get default UTM values.' }),
      optional('code', 'Code', { hint: 'Optional: leave empty for a random 7-character code.', placeholder: 'summer-menu' }),
      field('Campaign', campaign),
      field('Domain', domain, { hint: 'Optional: the link then resolves only on this custom domain.' }),
      optional('template_id', 'Campaign name for UTM', { hint: 'Optional: the utm_campaign the link gets when it '
        + 'belongs to no campaign.' }),
      field('Destination URL', destination, { wide: true, hint: 'An https address; its parameters and #fragment stay.' }),
      optional('deeplink', 'Deeplink', { placeholder: 'myapp://path', hint: 'Optional: the app\'s URI.' })),
    h('details', { class: 'apps' }, h('summary', {}, 'App and fallback settings (optional)'),
      h('div', { class: 'grid' },
        optional('android.package', 'Android package', { placeholder: 'com.example.app' }),
        optional('android.fallback_url', 'Android fallback URL', { type: 'url' }),
        optional('ios.app_store_id', 'App Store id', { placeholder: '123456789' }),
        optional('ios.fallback_url', 'iOS fallback URL', { type: 'url' }),
        optional('fallback_url', 'Web fallback URL', { type: 'url', hint: 'For desktop and bots, when set.' }))),
    utm.element,
    panel.element,
    h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }),
    h('div', { class: 'actions' }, submit, h('a', { class: 'button quiet', href: `${ctx.base}/links` }, 'Cancel')));

  const touched = new Set();
  let submitted = false;
  let flagged = [];  // the fields the live preview marked (the create call's own errors stay until edited)
  form.addEventListener('focusout', (event) => { if (event.target.name) touched.add(event.target.name); });
  const preview = livePreview(ctx.account, () => {
    const body = linkBody(form);
    if (!body.destination_url) {
      panel.stale('The preview appears once the destination is a valid https URL.');
      return null;
    }
    return { ...body, utm: utm.changes(false) };
  }, (answer) => {
    clearErrors(form, flagged);
    flagged = [];
    utm.showDefaults(answer.defaults);
    panel.show(answer);
  }, (error) => {
    clearErrors(form, flagged);
    const fields = error.fields.filter(([path]) => submitted || touched.has(path) || touched.has(path.replace(/^utm\./, '')));
    flagged = fields.length ? showErrors(form, { fields, text: error.text }, { focus: false }) : [];
    panel.stale('No preview until the errors are fixed.');
  });
  form.addEventListener('input', preview.soon);
  form.addEventListener('change', preview.soon);
  form.addEventListener('focusout', preview.soon);
  utm.showDefaults({});

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    submitted = true;
    clearErrors(form);
    flagged = [];
    await submitting(form, submit, async () => {
      const body = linkBody(form);
      const answer = await admin(inAccount(ctx.account, '/links/preview'), { method: 'POST',
        body: { ...body, utm: utm.changes(false) } });
      const created = await admin(inAccount(ctx.account, '/links'), { method: 'POST',
        body: { ...body, destination_url: answer.data.destination_url } });
      toast(`Link ${created.data.code} created.`);
      ctx.navigate(`${ctx.base}/links/${created.data.id}`);
    });
  });
  return h('section', {},
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: `${ctx.base}/links` }, 'Links'), ' / New'),
    h('h1', { tabindex: -1 }, 'New link'), form);
}
