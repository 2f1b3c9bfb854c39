// The list of links (searchable, paged, with the clicks of the last 7 days) and the form that creates one.

import { admin, inAccount, query } from './api.js';
import { badge, clearErrors, debounce, field, h, pager, showErrors, table, toast } from './dom.js';
import { livePreview, previewPanel, utmBuilder } from './utm.js';

const PAGE = 20;
export const KINDS = [
  ['campaign', 'Campaign'], ['email', 'Email'], ['push', 'Push'], ['whatsapp', 'WhatsApp'], ['in_app', 'In-app'],
  ['news_feed', 'News feed'], ['external', 'External'],
];
export const kindLabel = (kind) => (KINDS.find(([k]) => k === kind) || [kind, kind])[1];

export async function linksView(ctx) {
  const results = h('div', { class: 'results', 'aria-live': 'polite' });
  const search = h('input', { type: 'search', name: 'q', value: ctx.search.get('q') || '', autocomplete: 'off',
    placeholder: 'code or destination' });
  let offset = Number(ctx.search.get('offset')) || 0;

  async function load() {
    const q = search.value.trim();
    history.replaceState(null, '', `${ctx.base}/links${query({ q, offset: offset || '' })}`);
    const page = await admin(inAccount(ctx.account, `/links/overview${query({ q, limit: PAGE, offset })}`));
    const rows = page.data.map((link) => ({ item: link, attrs: { 'data-code': link.code } }));
    results.replaceChildren(
      table('Links', [
        { label: 'Code', cell: (l) => h('a', { href: `${ctx.base}/links/${l.id}` }, l.code) },
        { label: 'Kind', cell: (l) => kindLabel(l.kind) },
        { label: 'Campaign', cell: (l) => l.campaign_name || (l.campaign_id ? l.campaign_id : '—') },
        { label: 'Destination', class: 'url', cell: (l) => h('span', { title: l.destination_url }, l.destination_url) },
        { label: 'Clicks (7 days)', class: 'num', cell: (l) => String(l.clicks_7d) },
        { label: 'Status', cell: (l) => (l.disabled ? badge('Disabled', 'off') : badge('Active', 'on')) },
      ], rows, { empty: q ? `No link matches “${q}”.` : 'No links yet: create the first one.' }),
      pager(offset, PAGE, page.count, page.data.length, (next) => { offset = next; load(); }));
  }

  const reload = debounce(() => { offset = 0; load(); }, 250);
  search.addEventListener('input', reload);
  const form = h('form', { role: 'search', class: 'toolbar', onsubmit: (e) => { e.preventDefault(); reload(); } },
    field('Search links', search));
  await load();
  return h('section', {},
    h('div', { class: 'title-row' },
      h('h1', { tabindex: -1 }, 'Links'),
      ctx.can('links:write') ? h('div', { class: 'actions' },
        h('a', { class: 'button', href: `${ctx.base}/links/import` }, 'Import'),
        h('a', { class: 'button primary', href: `${ctx.base}/links/new` }, 'New link')) : null),
    form, results);
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
      optional('template_id', 'Template id', { hint: 'Optional: the default utm_campaign when there is no campaign.' }),
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
    submit.disabled = true;
    try {
      const body = linkBody(form);
      const answer = await admin(inAccount(ctx.account, '/links/preview'), { method: 'POST',
        body: { ...body, utm: utm.changes(false) } });
      const created = await admin(inAccount(ctx.account, '/links'), { method: 'POST',
        body: { ...body, destination_url: answer.data.destination_url } });
      toast(`Link ${created.data.code} created.`);
      ctx.navigate(`${ctx.base}/links/${created.data.id}`);
    } catch (error) {
      if (error.status === 401) throw error;
      showErrors(form, error);
    } finally {
      submit.disabled = false;
    }
  });
  return h('section', {},
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: `${ctx.base}/links` }, 'Links'), ' / New'),
    h('h1', { tabindex: -1 }, 'New link'), form);
}
