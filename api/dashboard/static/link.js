// One link: its short link with a copy button, the QR code (SVG and PNG downloads), disable and enable, its tags
// and folder, its lifecycle and password (lifecycle.js), the UTM editor with a live preview, and the routing rules (rules.js).
// Saving the UTM changes only the utm_* parameters of the destination (PATCH .../utm): its other parameters,
// their order and its #fragment stay. Where it leads (code, destination, deeplink, apps: linkedit.js) is edited
// above the UTM; the one "Where a click goes" preview follows both forms as they are typed.

import { editableIf } from './access.js';
import { admin, inAccount } from './api.js';
import { badge, clearErrors, copyText, field, h, saveBlob, showErrors, submitting, toast, when } from './dom.js';
import { kindLabel, tagBadges } from './links.js';
import { livePreview, previewPanel, utmBuilder } from './utm.js';
import { linkPreviewSection } from './previews.js';
import { rulesSection } from './rules.js';
import { variantSection } from './variants.js';
import { lifecycleSection } from './lifecycle.js';
import { targetSection } from './linkedit.js';

const LINK_FIELDS = ['kind', 'code', 'campaign_id', 'template_id', 'destination_url', 'deeplink', 'android', 'ios',
  'fallback_url', 'domain'];

function previewBody(link, changes) {
  const body = Object.fromEntries(LINK_FIELDS.filter((k) => link[k] !== null && link[k] !== undefined)
    .map((k) => [k, link[k]]));
  return { ...body, utm: changes };
}

function details(link, campaignName, colors) {
  const row = (term, value) => (value ? [h('dt', {}, term), h('dd', {}, value)] : null);
  return h('dl', { class: 'facts' },
    row('Kind', kindLabel(link.kind)),
    row('Campaign', campaignName),
    row('Campaign name for UTM', link.template_id && h('span', { title: 'template_id' }, link.template_id)),
    row('Domain', link.domain),
    row('Tags', (link.tags || []).length && tagBadges(link.tags, colors)),
    row('Folder', link.folder),
    row('Destination', h('code', { class: 'destination' }, link.destination_url)),
    row('Deeplink', link.deeplink && h('code', {}, link.deeplink)),
    row('Android', link.android && [link.android.package, link.android.fallback_url ? ` → ${link.android.fallback_url}` : '']),
    row('iOS', link.ios && [link.ios.app_store_id ? `App Store id ${link.ios.app_store_id}` : 'app settings',
      link.ios.fallback_url ? ` → ${link.ios.fallback_url}` : '']),
    row('Web fallback', link.fallback_url),
    row('Expires', link.expires_at && when(link.expires_at)),
    row('Created', when(link.created_at)),
    row('Changed', when(link.updated_at)));
}

// Tags (names separated by commas) and the folder, saved together (PATCH of the link's tags and folder).
function organiseForm(ctx, link, saved) {
  const tags = h('input', { name: 'tags', type: 'text', autocomplete: 'off', value: (link.tags || []).join(', '),
    placeholder: 'spring, email' });
  const folder = h('input', { name: 'folder', type: 'text', autocomplete: 'off', value: link.folder || '',
    placeholder: 'Campaigns/2026' });
  const save = h('button', { type: 'submit', class: 'primary' }, 'Save tags and folder');
  const form = h('form', { class: 'organise-form', novalidate: true },
    h('div', { class: 'grid' },
      field('Tags', tags, { hint: 'Names separated by commas; a link may have several.' }),
      field('Folder', folder, { hint: 'One folder; empty: none.' })),
    h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }), h('div', { class: 'actions' }, save));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    await submitting(form, save, async () => {
      const body = { tags: tags.value.split(',').map((t) => t.trim()).filter(Boolean),
        folder: folder.value.trim() || null };
      saved((await admin(inAccount(ctx.account, `/links/${link.id}`), { method: 'PATCH', body })).data);
      toast('Tags and folder saved.');
    });
  });
  return h('section', { class: 'card', 'aria-labelledby': 'organise-title' },
    h('h2', { id: 'organise-title' }, 'Tags and folder'), editableIf(ctx.account, 'links:write', form));
}

async function qrSection(ctx, link) {
  const path = inAccount(ctx.account, `/links/${link.id}/qr`);
  const svg = await admin(`${path}?format=svg&scale=6`, { as: 'blob' });
  const image = h('img', { class: 'qr', src: URL.createObjectURL(svg), alt: `QR code of ${link.code}`, width: 180,
    height: 180 });
  const download = (format) => async () => saveBlob(await admin(`${path}?format=${format}&scale=10`, { as: 'blob' }),
    `${link.code}.${format}`);
  return h('section', { class: 'card qr-card', 'aria-labelledby': 'qr-title' },
    h('h2', { id: 'qr-title' }, 'QR code'), image,
    h('div', { class: 'actions' },
      h('button', { type: 'button', class: 'quiet', onclick: download('svg') }, 'Download SVG'),
      h('button', { type: 'button', class: 'quiet', onclick: download('png') }, 'Download PNG')));
}

export async function linkView(ctx) {
  const [linkId] = ctx.params;
  let link = (await admin(inAccount(ctx.account, `/links/${linkId}`))).data;
  let campaignName = link.campaign_id
    ? (await admin(inAccount(ctx.account, `/campaigns/${link.campaign_id}`))).data.name : null;
  const colors = new Map((await admin(inAccount(ctx.account, '/links/tags'))).data.tags
    .filter((t) => t.color).map((t) => [t.name, t.color]));
  // The service's answer for the link as stored: its short URL, the UTM its destination carries (the
  // editor's starting values) and the defaults.
  const first = (await admin(inAccount(ctx.account, '/links/preview'), { method: 'POST', body: previewBody(link, {}) }))
    .data;
  const shortUrl = first.short_url;

  const shortInput = h('input', { type: 'text', readonly: true, value: shortUrl, name: 'short_url' });
  const copy = h('button', { type: 'button', class: 'primary', onclick: async () => {
    toast(await copyText(shortInput.value, shortInput) ? 'Short link copied.' : 'Select the link and copy it.');
  } }, 'Copy');
  const title = h('h1', { tabindex: -1 }, link.code);
  const crumb = h('span', {}, ` / ${link.code}`);
  const status = h('span', { class: 'status-slot' });
  const facts = h('div', { class: 'facts-slot' });
  const toggle = h('button', { type: 'button', class: 'quiet' });
  const paint = () => {
    title.textContent = link.code;
    crumb.textContent = ` / ${link.code}`;
    status.replaceChildren(link.disabled ? badge('Disabled', 'off') : badge('Active', 'on'));
    toggle.textContent = link.disabled ? 'Enable' : 'Disable';
    facts.replaceChildren(details(link, campaignName, colors));
  };
  toggle.addEventListener('click', async () => {
    toggle.disabled = true;
    try {
      link = (await admin(inAccount(ctx.account, `/links/${link.id}`), { method: 'PATCH',
        body: { disabled: !link.disabled } })).data;
      paint();
      toast(link.disabled ? 'Link disabled: clicks now get "no longer available".' : 'Link enabled.');
    } finally {
      toggle.disabled = false;
    }
  });

  // The campaign's id is the default utm_campaign of email, push and WhatsApp links: shown by its name.
  const nameOf = (value) => (value === link.campaign_id ? campaignName : null);
  const utm = utmBuilder({ nameOf });
  const panel = previewPanel({ nameOf });
  const save = h('button', { type: 'submit', class: 'primary' }, 'Save UTM');
  const form = h('form', { class: 'utm-form', novalidate: true }, utm.element,
    h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }), h('div', { class: 'actions' }, save));
  let flagged = [];  // the fields the live preview marked (the save's own errors stay until edited)
  let target = null;
  const clearFlagged = () => {
    clearErrors(form, flagged);
    if (target) clearErrors(target.form, flagged);
    flagged = [];
  };
  const preview = livePreview(ctx.account, () => previewBody(target ? target.edited(link) : link, utm.changes(true)),
    (answer) => {
      clearFlagged();
      utm.showDefaults(answer.defaults);
      panel.show(answer);
    }, (error) => {
      clearFlagged();
      // Each message beside its field, in whichever form holds it.
      const mine = (path) => Boolean(target.form.querySelector(`[name="${CSS.escape(path)}"]`));
      const fields = error.fields || [];
      const own = fields.filter(([path]) => mine(path));
      if (own.length) flagged.push(...showErrors(target.form, { fields: own, text: error.text }, { focus: false }));
      if (!own.length || own.length < fields.length) {
        flagged.push(...showErrors(form, { fields: fields.filter(([path]) => !mine(path)), text: error.text },
          { focus: false }));
      }
      panel.stale('No preview until the errors are fixed.');
    });
  target = await targetSection(ctx, link, { onInput: preview.soon, saved: async (saved) => {
    link = saved;
    campaignName = link.campaign_id
      ? (await admin(inAccount(ctx.account, `/campaigns/${link.campaign_id}`))).data.name : null;
    paint();
    const fresh = (await admin(inAccount(ctx.account, '/links/preview'), { method: 'POST',
      body: previewBody(link, {}) })).data;
    shortInput.value = fresh.short_url;
    utm.fill(fresh.destination_utm);
    await preview.now();
  } });
  form.addEventListener('input', preview.soon);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    await submitting(form, save, async () => {
      link = (await admin(inAccount(ctx.account, `/links/${link.id}/utm`), { method: 'PATCH',
        body: utm.changes(true) })).data;
      target.sync(link);
      paint();
      toast('UTM saved.');
      await preview.now();
    });
  });

  utm.fill(first.destination_utm);
  utm.showDefaults(first.defaults);
  panel.show(first);
  paint();

  return h('section', { class: 'link-page' },
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: `${ctx.base}/links` }, 'Links'), crumb),
    h('div', { class: 'title-row start' }, title, status),
    h('div', { class: 'short-link' }, field('Short link', shortInput, { aside: copy })),
    h('div', { class: 'actions' },
      h('a', { class: 'button', href: `${ctx.base}/links/${link.id}/clicks` }, 'Clicks'),
      ctx.can('links:write') ? toggle : null),
    h('div', { class: 'columns' }, facts, await qrSection(ctx, link)),
    organiseForm(ctx, link, (saved) => { link = saved; paint(); }),
    await lifecycleSection(ctx, link, (saved) => { link = saved; paint(); }),
    await variantSection(ctx, link, (saved) => { link = saved; paint(); }),
    target.element,
    h('h2', {}, ctx.can('links:write') ? 'Edit UTM' : 'UTM'), editableIf(ctx.account, 'links:write', form),
    panel.element,
    rulesSection(ctx, link, () => previewBody(link, {}), (saved) => { link = saved; paint(); }),
    await linkPreviewSection(ctx, link, (saved) => { link = saved; paint(); }));
}
