// Link previews: what chat apps and social networks show when a short link is pasted (the resolver's preview
// page, docs/decisions.md "Link previews"). The link page gets a form of the link's own preview fields; the
// account's defaults have a page of their own (/dashboard/{account}/link-preview). Both draw a mock of the card
// as it would look, per field the link's value, else the account's default, as the resolver does. The image
// itself is not loaded: the dashboard's Content-Security-Policy allows images of its own origin only, and an
// address typed in should not make the browser call another site; the mock shows where the image comes from.

import { editableIf } from './access.js';
import { admin, inAccount } from './api.js';
import { clearErrors, field, h, submitting, toast } from './dom.js';

const LINK_FIELDS = ['title', 'description', 'image_url'];
const ACCOUNT_FIELDS = ['title', 'description', 'image_url', 'site_name'];
const LIMITS = { title: 200, description: 500, site_name: 100 };
const LABELS = { title: 'Title', description: 'Description', image_url: 'Image URL (https)', site_name: 'Site name' };

function hostOf(url) {
  try { return new URL(url).hostname; } catch { return url; }
}

function control(name, prefix, value) {
  const attrs = { name: `${prefix}${name}`, value: value || '' };
  if (LIMITS[name]) attrs.maxlength = LIMITS[name];
  if (name === 'description') {
    const area = h('textarea', { name: attrs.name, maxlength: LIMITS.description, rows: 3 });
    area.value = value || '';
    return area;
  }
  return h('input', { type: name === 'image_url' ? 'url' : 'text', ...attrs });
}

// The card as the resolver would build it; null when nothing is set (the fetcher then follows the 302).
export function mergedCard(own, defaults, destinationUrl) {
  const pick = (name) => (own && own[name]) || (defaults && defaults[name]) || null;
  const title = pick('title');
  const description = pick('description');
  const image = pick('image_url');
  if (!title && !description && !image) return null;
  const host = hostOf(destinationUrl);
  return { title: title || host, description, image, site: (defaults && defaults.site_name) || host };
}

function mockCard() {
  const element = h('figure', { class: 'preview-card', 'aria-label': 'How the link looks when pasted' });
  const show = (card) => {
    if (!card) {
      element.replaceChildren(h('p', { class: 'hint' },
        'Nothing set: chat apps follow the redirect and show the destination\u2019s own card.'));
      return;
    }
    element.replaceChildren(
      card.image ? h('div', { class: 'preview-image', title: card.image }, h('span', {}, `Image from ${hostOf(card.image)}`))
        : null,
      h('figcaption', {},
        h('span', { class: 'preview-site' }, card.site),
        h('strong', { class: 'preview-title' }, card.title),
        card.description ? h('span', { class: 'preview-description' }, card.description) : null));
  };
  return { element, show };
}

function valuesOf(form, names, prefix) {
  const values = {};
  for (const name of names) {
    const value = form.elements[`${prefix}${name}`].value.trim();
    if (value) values[name] = value;
  }
  return values;
}

// The link page's section: the link's own preview fields, saved with PATCH .../links/{id} {preview}.
export async function linkPreviewSection(ctx, link, onSaved) {
  const defaults = (await admin(inAccount(ctx.account, '/link-preview'))).data;
  const own = link.preview || {};
  const mock = mockCard();
  const save = h('button', { type: 'submit', class: 'primary' }, 'Save preview');
  const fields = LINK_FIELDS.map((name) => field(LABELS[name], control(name, 'preview.', own[name]), {
    hint: defaults[name] ? `Empty: the account's default, \u201c${defaults[name]}\u201d` : null }));
  const form = h('form', { class: 'link-preview-form card', novalidate: true },
    h('div', { class: 'columns' }, h('div', {}, ...fields), mock.element),
    h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }), h('div', { class: 'actions' }, save,
      h('a', { href: `${ctx.base}/link-preview` }, 'Account defaults')));
  const paint = () => mock.show(mergedCard(valuesOf(form, LINK_FIELDS, 'preview.'), defaults, link.destination_url));
  form.addEventListener('input', paint);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    await submitting(form, save, async () => {
      const values = valuesOf(form, LINK_FIELDS, 'preview.');
      const body = { preview: Object.keys(values).length ? values : null };
      const saved = (await admin(inAccount(ctx.account, `/links/${link.id}`), { method: 'PATCH', body })).data;
      onSaved(saved);
      toast('Preview saved.');
    });
  });
  paint();
  return h('section', { class: 'link-preview', 'aria-labelledby': 'link-preview-title' },
    h('h2', { id: 'link-preview-title' }, 'Link preview'),
    h('p', { class: 'hint' }, 'What Facebook, WhatsApp, Slack, X and other apps show when this link is pasted.'),
    editableIf(ctx.account, 'links:write', form));
}

// /dashboard/{account}/link-preview: the account's defaults (PUT replaces them all).
export async function linkPreviewSettingsView(ctx) {
  const path = inAccount(ctx.account, '/link-preview');
  const current = (await admin(path)).data;
  const mock = mockCard();
  const save = h('button', { type: 'submit', class: 'primary' }, 'Save defaults');
  const fields = ACCOUNT_FIELDS.map((name) => field(LABELS[name], control(name, '', current[name]), {
    hint: name === 'site_name' ? 'Empty: the destination\u2019s host' : null }));
  const form = h('form', { class: 'link-preview-form card', novalidate: true },
    h('div', { class: 'columns' }, h('div', {}, ...fields), mock.element),
    h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }), h('div', { class: 'actions' }, save));
  const sample = 'https://www.example.com/your-page';
  const paint = () => mock.show(mergedCard({}, valuesOf(form, ACCOUNT_FIELDS, ''), sample));
  form.addEventListener('input', paint);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    await submitting(form, save, async () => {
      await admin(path, { method: 'PUT', body: valuesOf(form, ACCOUNT_FIELDS, '') });
      toast('Link preview defaults saved.');
    });
  });
  paint();
  return h('section', { class: 'link-preview-settings' },
    h('h1', { tabindex: -1 }, 'Link previews'),
    h('p', {}, 'The card chat apps and social networks show for this account\u2019s links: a link\u2019s own ' +
      'preview fields win, field by field; these fill the rest. Search engines and people still go straight ' +
      'to the destination.'),
    editableIf(ctx.account, 'links:write', form));
}
