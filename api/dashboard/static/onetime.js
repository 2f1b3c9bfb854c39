// The pages an emailed (or passed on) one-time link opens, signed in or not: accept an invitation (a new person
// sets a name and a password; one who has an account here gives their own password) and set a new password from a
// reset link. The link carries its token in the fragment (#token=...), which no request sends; the page posts it,
// then signs the person in.

import { anonymous, session } from './api.js';
import { clearErrors, field, h, showErrors, toast } from './dom.js';

function tokenOfLink() {
  return new URLSearchParams(location.hash.replace(/^#/, '')).get('token') || '';
}

function page(title, intro, form) {
  return h('section', { class: 'sign-in' },
    h('p', { class: 'brand' }, h('span', { 'aria-hidden': 'true' }, '⤳'), ' linksvc'),
    h('h1', { tabindex: -1 }, title), h('p', { class: 'muted' }, intro), form);
}

function missingToken(title) {
  return page(title, 'This page opens from a one-time link, and this address holds none.',
    h('p', {}, h('a', { href: '/dashboard/' }, 'Go to the sign-in')));
}

async function signInAndGo(ctx, email, password, account) {
  try {
    await session.signIn({ email, password });
  } catch {
    ctx.navigate(`${ctx.base}/sign-in`, { replace: true });  // a second factor, say: the sign-in asks for it
    return;
  }
  await ctx.refreshAccess();
  ctx.navigate(account ? `${ctx.base}/${account}/links` : `${ctx.base}/`, { replace: true });
}

export function acceptInvitationView(ctx) {
  const token = tokenOfLink();
  if (!token) return missingToken('Accept an invitation');
  const name = h('input', { type: 'text', name: 'name', autocomplete: 'name', maxlength: 200 });
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'new-password', minlength: 10 });
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Accept and sign in');
  const form = h('form', { class: 'card narrow', novalidate: true, 'aria-label': 'Invitation' },
    field('Your name', name, { hint: 'Already signing in here? Leave it empty.' }),
    field('Choose a password', password, { hint: 'At least 10 characters. Already signing in here with this '
      + 'email? Your own password.' }),
    h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }),
    h('div', { class: 'actions' }, submit));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    submit.disabled = true;
    try {
      const body = { token };
      if (name.value.trim()) body.name = name.value.trim();
      if (password.value) body.password = password.value;
      const accepted = (await anonymous('/invitations/accept', { method: 'POST', body })).data;
      history.replaceState(null, '', location.pathname);  // the used token leaves the address bar
      toast(`Welcome: you are ${accepted.role} of the account.`);
      await signInAndGo(ctx, accepted.email, body.password, accepted.account_id);
    } catch (error) {
      showErrors(form, error);
    } finally {
      submit.disabled = false;
    }
  });
  return page('Accept an invitation', 'You were invited to an account of this service. Choose your name and a '
    + 'password to sign in with.', form);
}

export function resetPasswordView(ctx) {
  const token = tokenOfLink();
  if (!token) return missingToken('Set a new password');
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', spellcheck: 'false' });
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'new-password', minlength: 10 });
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Set password and sign in');
  const form = h('form', { class: 'card narrow', novalidate: true, 'aria-label': 'Password reset' },
    field('Your email', email, { hint: 'To sign you in afterwards.' }),
    field('New password', password, { hint: 'At least 10 characters. Every session of yours ends.' }),
    h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }),
    h('div', { class: 'actions' }, submit));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    submit.disabled = true;
    try {
      await anonymous('/password-resets/accept', { method: 'POST', body: { token, password: password.value } });
      history.replaceState(null, '', location.pathname);
      toast('Password set.');
      if (email.value.trim()) await signInAndGo(ctx, email.value.trim(), password.value, null);
      else ctx.navigate(`${ctx.base}/sign-in`, { replace: true });
    } catch (error) {
      showErrors(form, error);
    } finally {
      submit.disabled = false;
    }
  });
  return page('Set a new password', 'Choose the password you will sign in with from now on.', form);
}
