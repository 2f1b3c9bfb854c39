// Where a link leads, edited on its page: its code, kind, campaign, custom domain, destination, deeplink, the
// Android app (package and fallback), the iPhone app (App Store id and fallback) and the web fallback, saved with
// one PATCH of the fields that changed. The app settings the form does not show (certificate fingerprints, bundle and team ids, the landing
// page) are kept as stored. The API checks everything; its messages stand beside the fields they name. While
// typing, the page's "Where a click goes" preview follows the form (`edited(link)` is the link as it would be).

import { editableIf } from './access.js';
import { admin, inAccount, query } from './api.js';
import { clearErrors, field, h, submitting, toast } from './dom.js';
import { KINDS } from './links.js';

const TEXT = ['code', 'kind', 'campaign_id', 'domain', 'destination_url', 'deeplink', 'fallback_url'];

function choice(name, options, current, none) {
  const known = options.some(([value]) => value === current);
  return h('select', { name },
    none ? h('option', { value: '' }, none) : null,
    current && !known ? h('option', { value: current, selected: true }, current) : null,
    options.map(([value, label]) => h('option', { value, selected: value === current }, label)));
}

function input(name, value, { type = 'text', placeholder } = {}) {
  return h('input', { name, type, value: value || '', autocomplete: 'off', spellcheck: 'false', placeholder });
}

export async function targetSection(ctx, link, { onInput, saved }) {
  const [campaigns, domains] = await Promise.all([
    admin(inAccount(ctx.account, `/campaigns/overview${query({ limit: 500 })}`)),
    admin(inAccount(ctx.account, '/domains'))]).then((answers) => answers.map((answer) => answer.data));
  const form = h('form', { class: 'target-form card', novalidate: true, 'aria-label': 'Where the link leads' });
  const save = h('button', { type: 'submit', class: 'primary' }, 'Save where it leads');
  const value = (name) => form.elements[name].value.trim();

  function fill(current) {
    form.replaceChildren(
      h('div', { class: 'grid' },
        field('Code', input('code', current.code), { hint: 'The short link\u2019s path. Changing it breaks the old '
          + 'short link and its printed QR codes.' }),
        field('Kind', choice('kind', KINDS, current.kind), { hint: 'Email, push and WhatsApp links get default UTM '
          + 'values.' }),
        field('Campaign', choice('campaign_id', campaigns.map((c) => [c.id, c.name]), current.campaign_id,
          '\u2014 none \u2014')),
        field('Domain', choice('domain', domains.map((d) => [d.host, `${d.host}${d.status === 'live' ? ''
          : ' (pending)'}`]), current.domain, '\u2014 the shared host and every live domain \u2014'),
        { hint: 'A custom domain: the link then resolves only there.' }),
        field('Destination URL', input('destination_url', current.destination_url, { type: 'url' }),
          { wide: true, hint: 'An https address; its parameters and #fragment stay as typed.' }),
        field('Deeplink', input('deeplink', current.deeplink, { placeholder: 'myapp://path' }),
          { hint: 'The app\u2019s own address for this link: where the installed app opens.' }),
        field('Web fallback URL', input('fallback_url', current.fallback_url, { type: 'url' }),
          { hint: 'Optional: where desktops and bots go instead of the destination.' })),
      h('fieldset', { class: 'apps' }, h('legend', {}, 'Apps'),
        h('p', { class: 'hint' }, 'Without an app here, a click goes to the web; with one, Android opens the app '
          + '(else its fallback, else Google Play) and iPhones go to the fallback, else the App Store.'),
        h('div', { class: 'grid' },
          field('Android package', input('android.package', current.android?.package,
            { placeholder: 'com.example.app' })),
          field('Android fallback URL', input('android.fallback_url', current.android?.fallback_url, { type: 'url' })),
          field('App Store id', input('ios.app_store_id', current.ios?.app_store_id, { placeholder: '123456789' })),
          field('iPhone fallback URL', input('ios.fallback_url', current.ios?.fallback_url, { type: 'url' })))),
      h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }),
      h('div', { class: 'actions' }, save));
  }

  // The link with the form's values: what the preview shows and what a save sends.
  function edited(current) {
    const next = { ...current };
    for (const name of TEXT) next[name] = value(name) || null;
    next.destination_url = value('destination_url');
    const pkg = value('android.package');
    const androidFallback = value('android.fallback_url') || null;
    next.android = pkg || androidFallback
      ? { ...(current.android || {}), package: pkg, fallback_url: androidFallback } : null;
    const storeId = value('ios.app_store_id') || null;
    const iosFallback = value('ios.fallback_url') || null;
    const kept = { ...(current.ios || {}), app_store_id: storeId, fallback_url: iosFallback };
    next.ios = storeId || iosFallback || kept.bundle_id || kept.team_id ? kept : null;
    return next;
  }

  // Only what changed goes in the PATCH (a field left as it was is not sent, so it cannot be refused).
  function changes(current) {
    const next = edited(current);
    const body = {};
    for (const name of [...TEXT, 'android', 'ios']) {
      if (JSON.stringify(next[name] ?? null) !== JSON.stringify(current[name] ?? null)) body[name] = next[name];
    }
    return body;
  }

  form.addEventListener('input', () => onInput());
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    const body = changes(link);
    if (!Object.keys(body).length) {
      toast('Nothing changed.');
      return;
    }
    await submitting(form, save, async () => {
      link = (await admin(inAccount(ctx.account, `/links/${link.id}`), { method: 'PATCH', body })).data;
      await saved(link);
      toast('Saved: clicks now go where the preview shows.');
    });
  });
  fill(link);

  return {
    element: h('section', { class: 'target', 'aria-labelledby': 'target-title' },
      h('h2', { id: 'target-title' }, 'Where it leads'), editableIf(ctx.account, 'links:write', form)),
    form,
    edited: (current) => edited(current),
    // Another section saved the link (its UTM, say): the form shows it as stored now.
    sync(current) {
      link = current;
      fill(current);
    },
  };
}
