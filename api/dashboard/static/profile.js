// Your profile (GET /people/me): name and email, a new password (every session of yours ends with it: sign in
// again), and the second factor: enrol (the secret and its otpauth:// URI to enter in an authenticator app),
// confirm with a code, or turn off with a code. The URI is drawn as a QR code by the service (POST
// /dashboard/totp-qr), for the app to scan; the secret and the URI stay as text to type or paste.

import { admin, session } from './api.js';
import { clearErrors, field, h, showErrors, shownOnce, toast } from './dom.js';

function handled(form, submit, work) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    submit.disabled = true;
    try {
      await work();
    } catch (error) {
      if (error.status === 401 && !error.fields.length) throw error;
      showErrors(form, error);
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

const formError = () => h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' });

export async function profileView(ctx) {
  let me = (await admin('/people/me')).data;

  const name = h('input', { type: 'text', name: 'name', value: me.name, maxlength: 200, autocomplete: 'name' });
  const email = h('input', { type: 'email', name: 'email', value: me.email, autocomplete: 'email',
    spellcheck: 'false' });
  const saveProfile = h('button', { type: 'submit', class: 'primary' }, 'Save profile');
  const profile = handled(h('form', { class: 'card narrow', 'aria-label': 'Name and email', novalidate: true },
    h('h2', {}, 'Name and email'), field('Name', name), field('Email', email), formError(),
    h('div', { class: 'actions' }, saveProfile)), saveProfile, async () => {
    me = (await admin('/people/me', { method: 'PATCH', body: { name: name.value.trim(), email: email.value.trim() } }))
      .data;
    await ctx.refreshAccess();
    toast('Profile saved.');
  });

  const current = h('input', { type: 'password', name: 'current_password', autocomplete: 'current-password' });
  const fresh = h('input', { type: 'password', name: 'new_password', autocomplete: 'new-password', minlength: 10 });
  const savePassword = h('button', { type: 'submit', class: 'primary' }, 'Change password');
  const password = handled(h('form', { class: 'card narrow', 'aria-label': 'Password', novalidate: true },
    h('h2', {}, 'Password'), field('Current password', current),
    field('New password', fresh, { hint: 'At least 10 characters. Every session of yours ends: sign in again.' }),
    formError(), h('div', { class: 'actions' }, savePassword)), savePassword, async () => {
    await admin('/people/me/password', { method: 'POST',
      body: { current_password: current.value, new_password: fresh.value } });
    await ctx.signOut('Password changed. Sign in with the new one.');
  });

  const factor = h('section', { class: 'card narrow', 'aria-labelledby': 'factor-title' });
  const paintFactor = () => {
    const code = h('input', { type: 'text', name: 'code', inputmode: 'numeric', autocomplete: 'one-time-code',
      maxlength: 10, spellcheck: 'false' });
    if (me.totp_enabled) {
      const off = h('button', { type: 'submit', class: 'danger' }, 'Turn off');
      factor.replaceChildren(h('h2', { id: 'factor-title' }, 'Second factor'),
        h('p', {}, 'On: sign-in asks for the code of your authenticator app.'),
        handled(h('form', { novalidate: true, 'aria-label': 'Turn the second factor off' },
          field('Current code', code), formError(), h('div', { class: 'actions' }, off)), off, async () => {
          me = (await admin('/people/me/totp/disable', { method: 'POST', body: { code: code.value.trim() } })).data;
          toast('Second factor off.');
          paintFactor();
        }));
      return;
    }
    const enrol = h('button', { type: 'button', class: 'primary' }, 'Set up a second factor');
    enrol.addEventListener('click', async () => {
      const answer = (await admin('/people/me/totp', { method: 'POST' })).data;
      const qr = h('img', { class: 'totp-qr', width: 200, height: 200, alt: 'QR code of the authenticator URI',
        src: URL.createObjectURL(await session.totpQr(answer.otpauth_uri)) });
      const confirm = h('button', { type: 'submit', class: 'primary' }, 'Confirm');
      factor.replaceChildren(h('h2', { id: 'factor-title' }, 'Second factor'),
        h('p', {}, 'Scan the QR code with your authenticator app (or enter the secret, or paste the URI), then '
          + 'enter the code it shows.'),
        qr,
        shownOnce('Secret', answer.secret, { name: 'totp-secret' }),
        shownOnce('Authenticator URI', answer.otpauth_uri, { name: 'otpauth-uri' }),
        handled(h('form', { novalidate: true, 'aria-label': 'Confirm the second factor' },
          field('Code from the app', code), formError(), h('div', { class: 'actions' }, confirm)), confirm, async () => {
          me = (await admin('/people/me/totp/confirm', { method: 'POST', body: { code: code.value.trim() } })).data;
          toast('Second factor on.');
          paintFactor();
        }));
      code.focus();
    });
    factor.replaceChildren(h('h2', { id: 'factor-title' }, 'Second factor'),
      h('p', {}, 'Off. With it, sign-in also asks for a code from an authenticator app.'),
      h('div', { class: 'actions' }, enrol));
  };
  paintFactor();

  return h('section', { class: 'profile' },
    h('h1', { tabindex: -1 }, 'Your profile'),
    h('p', { class: 'muted' }, 'Your roles: ', (me.accounts || []).map((m) => {
      const account = ctx.accounts.find((a) => a.id === m.account_id);
      return `${account ? account.name : m.account_id}: ${m.role}`;
    }).join('; ') || 'none'),
    h('div', { class: 'stack' }, profile, password, factor));
}
