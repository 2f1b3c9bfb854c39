// A link's lifecycle and access, on its page: when it opens (and where it leads before), when it expires, its
// click limit with the clicks by people so far (GET .../links/{id}/lifecycle), where it leads once closed, and
// its password (set, changed or removed; never shown: the link only says it is protected). Times are entered and
// shown in the browser's own time zone and stored in UTC. Saving sends one PATCH of the fields that changed;
// the API's refusals are shown beside their fields (the controls are named by the API's fields).

import { editableIf } from './access.js';
import { admin, inAccount } from './api.js';
import { badge, clearErrors, field, h, submitting, toast } from './dom.js';
import { number } from './format.js';

const pad = (n) => String(n).padStart(2, '0');

// An ISO time (UTC) as a datetime-local value in the browser's zone ('' for none): to the minute, or to the
// second when the stored time has seconds (so that an untouched field is not changed by a save).
export function localValue(isoText) {
  if (!isoText) return '';
  const t = new Date(isoText);
  if (Number.isNaN(t.getTime())) return '';
  const minutes = `${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())}T${pad(t.getHours())}:${pad(t.getMinutes())}`;
  return t.getSeconds() ? `${minutes}:${pad(t.getSeconds())}` : minutes;
}

// A datetime-local value (the browser's zone) as an ISO time in UTC; null for an empty field.
export function utcValue(localText) {
  if (!localText) return null;
  const t = new Date(localText);  // a date-time without an offset is read in the local zone
  return Number.isNaN(t.getTime()) ? localText : t.toISOString();
}

const zoneName = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'your time zone';

function stateLine(state) {
  if (!state) return null;
  const count = `${number(state.human_clicks)} click${state.human_clicks === 1 ? '' : 's'} by people so far`;
  const left = state.max_clicks === null ? '' : `; ${number(state.clicks_left)} of ${number(state.max_clicks)} left`;
  const words = {
    'not yet valid': 'Not open yet', expired: 'Expired', 'click limit reached': 'Click limit reached',
    disabled: 'Disabled',
  };
  return [state.open ? badge('Open', 'on') : badge(words[state.reason] || state.reason, 'off'), ' ',
    h('span', { class: 'lifecycle-count' }, `${count}${left}.`),
    state.open || !state.location ? '' : ` Clicks go to ${state.location}.`];
}

export async function lifecycleSection(ctx, link, onSaved = () => {}) {
  const path = inAccount(ctx.account, `/links/${link.id}`);
  const stateOf = async () => (await admin(`${path}/lifecycle`)).data;
  const state = h('p', { class: 'lifecycle-state', 'aria-live': 'polite' });
  const protectedLine = h('p', { class: 'password-state' });

  const input = (name, type, attrs = {}) => h('input', { type, name, ...attrs });
  const validSince = input('valid_since', 'datetime-local', { step: 1 });
  const pendingUrl = input('pending_url', 'url', { placeholder: 'https://shop.example/coming-soon' });
  const expiresAt = input('expires_at', 'datetime-local', { step: 1 });
  const expiredUrl = input('expired_url', 'url', { placeholder: 'https://shop.example/sale-over' });
  const maxClicks = input('max_clicks', 'number', { min: 1, step: 1, inputmode: 'numeric' });
  const password = input('password', 'password', { autocomplete: 'new-password', maxlength: 128 });
  const removePassword = input('remove_password', 'checkbox');
  const removeLabel = h('label', { class: 'check' }, removePassword, ' Remove the password');
  const zone = zoneName();

  let shown = {};
  const fill = (saved) => {
    shown = {
      valid_since: localValue(saved.valid_since), pending_url: saved.pending_url || '',
      expires_at: localValue(saved.expires_at), expired_url: saved.expired_url || '',
      max_clicks: saved.max_clicks == null ? '' : String(saved.max_clicks),
    };
    validSince.value = shown.valid_since;
    pendingUrl.value = shown.pending_url;
    expiresAt.value = shown.expires_at;
    expiredUrl.value = shown.expired_url;
    maxClicks.value = shown.max_clicks;
    password.value = '';
    removePassword.checked = false;
    removeLabel.hidden = !saved.password_protected;
    protectedLine.replaceChildren(...(saved.password_protected
      ? [badge('Protected', 'on'), ' A password is asked before the link leads anywhere. Type a new one to change it.']
      : [badge('No password', 'off'), ' Anyone with the link can follow it.']));
  };
  const paintState = async () => {
    state.replaceChildren(...[stateLine(await stateOf())].flat(Infinity).filter((x) => x !== null));
  };

  // The body of the PATCH: only the fields that changed ('' clears a field); the password only when typed
  // (or null when it is to be removed).
  const changes = () => {
    const now = {
      valid_since: validSince.value, pending_url: pendingUrl.value.trim(), expires_at: expiresAt.value,
      expired_url: expiredUrl.value.trim(), max_clicks: maxClicks.value.trim(),
    };
    const body = {};
    for (const [name, value] of Object.entries(now)) {
      if (value === shown[name]) continue;
      if (name === 'valid_since' || name === 'expires_at') body[name] = utcValue(value);
      else if (name === 'max_clicks') body[name] = value === '' ? null : (/^\d+$/.test(value) ? Number(value) : value);
      else body[name] = value || null;
    }
    if (password.value) body.password = password.value;
    else if (removePassword.checked) body.password = null;
    return body;
  };

  const save = h('button', { type: 'submit', class: 'primary' }, 'Save lifecycle and access');
  const form = h('form', { class: 'lifecycle-form', novalidate: true },
    h('div', { class: 'grid' },
      field(`Opens at (${zone})`, validSince, { hint: 'Empty: open now. Before it, clicks go to the address beside it, '
        + 'or see a "not open yet" page.' }),
      field('Before it opens, send clicks to', pendingUrl),
      field(`Expires at (${zone})`, expiresAt, { hint: 'Empty: never expires.' }),
      field('Click limit (people)', maxClicks, { hint: 'Clicks by people, not bots. Empty: no limit.' }),
      field('Once expired or at its limit, send clicks to', expiredUrl, { wide: true,
        hint: 'Empty: clicks get a "no longer available" page.' })),
    h('fieldset', { class: 'password-fieldset' }, h('legend', {}, 'Password'), protectedLine,
      h('div', { class: 'grid' }, field('New password', password, { hint: 'Never shown again, not even to you.' }),
        h('div', { class: 'field check-slot' }, removeLabel))),
    h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }),
    h('div', { class: 'actions' }, save));
  removePassword.addEventListener('change', () => { if (removePassword.checked) password.value = ''; });
  password.addEventListener('input', () => { if (password.value) removePassword.checked = false; });

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    const body = changes();
    if (!Object.keys(body).length) {
      toast('Nothing to save.');
      return;
    }
    await submitting(form, save, async () => {
      const saved = (await admin(path, { method: 'PATCH', body })).data;
      fill(saved);
      onSaved(saved);
      await paintState();
      toast('Lifecycle and access saved.');
    });
  });

  fill(link);
  await paintState();
  return h('section', { class: 'card lifecycle-section', 'aria-labelledby': 'lifecycle-title' },
    h('h2', { id: 'lifecycle-title' }, 'Lifecycle and access'),
    h('p', { class: 'hint' }, `When the link opens and closes, how many people may follow it, and its password. `
      + `Times are in ${zone}.`),
    state, editableIf(ctx.account, 'links:write', form));
}
