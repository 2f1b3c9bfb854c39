// Sign-in with the admin token: the service answers with an HttpOnly session cookie that the page itself
// can never read.

import { AuthError, session } from './api.js';
import { clearErrors, field, h, showErrors } from './dom.js';

export function signInView(onSignedIn) {
  const token = h('input', { name: 'token', type: 'password', autocomplete: 'current-password', required: true,
    spellcheck: 'false' });
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Sign in');
  const form = h('form', { class: 'card narrow', novalidate: true },
    // For password managers: the token belongs to the service's one admin "user".
    h('input', { type: 'text', name: 'username', autocomplete: 'username', value: 'admin', hidden: true }),
    field('Admin token', token, { hint: 'The service\'s admin token (LINKSVC_ADMIN_TOKEN).' }),
    h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }),
    h('div', { class: 'actions' }, submit));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    if (!token.value.trim()) {
      showErrors(form, { fields: [['token', 'Enter the admin token.']] });
      return;
    }
    submit.disabled = true;
    try {
      await session.signIn(token.value.trim());
      token.value = '';
      await onSignedIn();
    } catch (error) {
      if (error instanceof AuthError) showErrors(form, { fields: [['token', 'This is not the admin token.']] });
      else showErrors(form, error);
    } finally {
      submit.disabled = false;
    }
  });
  return h('section', { class: 'sign-in' },
    h('p', { class: 'brand' }, h('span', { 'aria-hidden': 'true' }, '⤳'), ' linksvc'),
    h('h1', { tabindex: -1 }, 'Sign in'),
    h('p', { class: 'muted' }, 'The back office of this service: links, campaigns and deliveries of every account.'),
    form);
}
