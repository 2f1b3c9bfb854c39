// Sign-in: a person's email and password (and the one-time code of their authenticator, when they enrolled a
// second factor), or, as a second choice, the operator token. Either way the service answers with an HttpOnly
// session cookie that the page itself can never read.

import { AuthError, session } from './api.js';
import { clearErrors, field, h, showErrors } from './dom.js';

function personForm(onSignedIn) {
  const email = h('input', { name: 'email', type: 'email', autocomplete: 'username', required: true,
    spellcheck: 'false' });
  const password = h('input', { name: 'password', type: 'password', autocomplete: 'current-password',
    required: true });
  const code = h('input', { name: 'code', type: 'text', inputmode: 'numeric', autocomplete: 'one-time-code',
    pattern: '[0-9]*', maxlength: 10, spellcheck: 'false' });
  const codeField = field('One-time code', code, { hint: 'The 6 digits your authenticator app shows now.' });
  codeField.hidden = true;
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Sign in');
  const form = h('form', { class: 'card narrow', novalidate: true },
    field('Email', email), field('Password', password), codeField,
    h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }),
    h('div', { class: 'actions' }, submit));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    const missing = [];
    if (!email.value.trim()) missing.push(['email', 'Enter your email.']);
    if (!password.value) missing.push(['password', 'Enter your password.']);
    if (!codeField.hidden && !code.value.trim()) missing.push(['code', 'Enter the code of your authenticator.']);
    if (missing.length) {
      showErrors(form, { fields: missing });
      return;
    }
    submit.disabled = true;
    try {
      const body = { email: email.value.trim(), password: password.value };
      if (!codeField.hidden && code.value.trim()) body.code = code.value.trim();
      await session.signIn(body);
      password.value = '';
      code.value = '';
      await onSignedIn();
    } catch (error) {
      if (error instanceof AuthError && error.body?.details?.field === 'code') {
        const first = codeField.hidden;
        codeField.hidden = false;
        if (first && error.message === 'Code required') {
          form.querySelector('.form-error').textContent = 'Your account has a second factor: enter the code of '
            + 'your authenticator.';
          code.focus();
        } else {
          showErrors(form, { fields: [['code', 'This is not the current code.']] });
        }
      } else if (error instanceof AuthError) {
        showErrors(form, { fields: [['password', 'The email or the password is not right.']] });
      } else {
        showErrors(form, error);
      }
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

function tokenForm(onSignedIn) {
  const token = h('input', { name: 'token', type: 'password', autocomplete: 'off', required: true,
    spellcheck: 'false' });
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Sign in with the token');
  const form = h('form', { class: 'card narrow', novalidate: true },
    field('Operator token', token, { hint: 'The service\'s admin token (LINKSVC_ADMIN_TOKEN): every account.' }),
    h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }),
    h('div', { class: 'actions' }, submit));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    if (!token.value.trim()) {
      showErrors(form, { fields: [['token', 'Enter the operator token.']] });
      return;
    }
    submit.disabled = true;
    try {
      await session.signIn({ token: token.value.trim() });
      token.value = '';
      await onSignedIn();
    } catch (error) {
      if (error instanceof AuthError) showErrors(form, { fields: [['token', 'This is not the operator token.']] });
      else showErrors(form, error);
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

export function signInView(onSignedIn) {
  const withToken = tokenForm(onSignedIn);
  withToken.hidden = true;
  const toggle = h('button', { type: 'button', class: 'quiet', 'aria-expanded': 'false',
    'aria-controls': 'operator-sign-in' }, 'Sign in with the operator token');
  withToken.id = 'operator-sign-in';
  toggle.addEventListener('click', () => {
    withToken.hidden = !withToken.hidden;
    toggle.setAttribute('aria-expanded', String(!withToken.hidden));
    if (!withToken.hidden) withToken.querySelector('input').focus();
  });
  return h('section', { class: 'sign-in' },
    h('p', { class: 'brand' }, h('span', { 'aria-hidden': 'true' }, '⤳'), ' linksvc'),
    h('h1', { tabindex: -1 }, 'Sign in'),
    h('p', { class: 'muted' }, 'The back office of this service: links, campaigns and deliveries of your accounts.'),
    personForm(onSignedIn),
    h('p', { class: 'actions narrow' }, toggle),
    withToken);
}
