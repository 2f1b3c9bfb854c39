// An account's members (GET .../members) and their roles; for an owner (members:write): invite by email (the
// one-time link shown to pass on), change a role, remove, transfer ownership, a password-reset link for a
// member, and the pending invitations (cancel).

import { signedPerson } from './access.js';
import { admin, inAccount } from './api.js';
import { badge, clearErrors, field, h, shownOnce, submitting, toast, when } from './dom.js';
import { table } from './table.js';

const INVITED_ROLES = ['admin', 'marketer', 'analyst', 'developer'];
const ROLE_WORDS = {
  owner: 'members, keys, domains, connections: everything',
  admin: 'all but members and ownership',
  marketer: 'links, rules, previews; reads the rest',
  analyst: 'reads everything, changes nothing',
  developer: 'API keys, connections, deliveries; reads the rest',
};

const roleOptions = (chosen) => INVITED_ROLES.map((r) => h('option', { value: r, selected: r === chosen }, r));

export async function membersView(ctx) {
  const editable = ctx.can('members:write');
  let members = (await admin(inAccount(ctx.account, '/members'))).data;
  let invitations = (await admin(inAccount(ctx.account, '/invitations'))).data;
  const me = signedPerson()?.id;
  const memberList = h('div', {});
  const invitationList = h('div', {});
  const shown = h('div', { class: 'shown-holder', 'aria-live': 'polite' });

  const reload = async () => {
    members = (await admin(inAccount(ctx.account, '/members'))).data;
    invitations = (await admin(inAccount(ctx.account, '/invitations'))).data;
    paint();
  };

  const show = (label, answer, what) => {
    const letter = answer.letter && answer.letter.sent
      ? `A letter with the link was sent to ${answer.email}.`
      : `No letter was sent: ${answer.letter ? answer.letter.detail : 'no mail server is configured'}. Pass the `
        + `link on to ${answer.email} yourself.`;
    shown.replaceChildren(shownOnce(label, answer.link, { name: 'one-time-link',
      note: `${what} It is shown only now and lapses on ${when(answer.expires_at)}. ${letter}` }));
    shown.querySelector('input').focus();
  };

  const roleControl = (member) => {
    if (!editable || member.role === 'owner') return badge(member.role, 'role');
    const select = h('select', { name: 'role', 'aria-label': `Role of ${member.email}` }, roleOptions(member.role));
    select.addEventListener('change', async () => {
      select.disabled = true;
      try {
        await admin(inAccount(ctx.account, `/members/${member.person_id}`), { method: 'PATCH',
          body: { role: select.value } });
        member.role = select.value;
        toast(`${member.email} is now ${select.value}.`);
      } catch (error) {
        select.value = member.role;
        throw error;
      } finally {
        select.disabled = false;
      }
    });
    return select;
  };

  const actions = (member) => {
    if (!editable) return null;
    const buttons = [];
    buttons.push(h('button', { type: 'button', class: 'small quiet', 'aria-label': `Password reset link for ${member.email}`,
      onclick: async () => {
        const answer = (await admin(inAccount(ctx.account, `/members/${member.person_id}/password-reset`),
          { method: 'POST' })).data;
        show(`Password reset link for ${member.email}`, answer, 'With it they set a new password.');
      } }, 'Reset link'));
    if (member.role !== 'owner') {
      buttons.push(h('button', { type: 'button', class: 'small quiet', 'aria-label': `Make ${member.email} the owner`,
        onclick: async () => {
          if (!window.confirm(`Make ${member.email} the owner? Every other owner becomes an admin.`)) return;
          members = (await admin(inAccount(ctx.account, '/transfer-ownership'), { method: 'POST',
            body: { person_id: member.person_id } })).data;
          toast(`${member.email} is the owner now.`);
          await ctx.refreshAccess();  // your own role may have changed
          ctx.navigate(location.pathname, { replace: true });
        } }, 'Make owner'));
      buttons.push(h('button', { type: 'button', class: 'small quiet danger', 'aria-label': `Remove ${member.email}`,
        onclick: async () => {
          if (!window.confirm(`Remove ${member.email} from this account? Their tokens here stop working.`)) return;
          await admin(inAccount(ctx.account, `/members/${member.person_id}`), { method: 'DELETE' });
          toast(`${member.email} removed.`);
          await reload();
        } }, 'Remove'));
    }
    return h('div', { class: 'row-actions' }, buttons);
  };

  const cancelButton = (invitation) => h('button', { type: 'button', class: 'small quiet danger',
    'aria-label': `Cancel the invitation of ${invitation.email}`, onclick: async () => {
      await admin(inAccount(ctx.account, `/invitations/${invitation.id}`), { method: 'DELETE' });
      toast(`The invitation of ${invitation.email} is cancelled.`);
      await reload();
    } }, 'Cancel');

  function paint() {
    const columns = [
      { label: 'Name', cell: (m) => [m.name, m.person_id === me ? ' (you)' : ''] },
      { label: 'Email', cell: (m) => m.email },
      { label: 'Role', cell: roleControl },
      { label: 'Since', sort: (m) => m.since, cell: (m) => when(m.since) },
    ];
    if (editable) columns.push({ label: 'Actions', cell: actions });
    memberList.replaceChildren(table('Members', columns,
      members.map((m) => ({ item: m, attrs: { 'data-email': m.email } })), { empty: 'No members yet: invite a colleague by e-mail.' }));
    const pending = invitations.filter((i) => i.status === 'pending');
    const invitationColumns = [
      { label: 'Email', cell: (i) => i.email },
      { label: 'Role', cell: (i) => i.role },
      { label: 'Status', cell: (i) => badge(i.status) },
      { label: 'Expires', sort: (i) => i.expires_at, cell: (i) => when(i.expires_at) },
    ];
    if (editable) invitationColumns.push({ label: 'Actions', cell: (i) => (i.status === 'pending' ? cancelButton(i) : null) });
    invitationList.replaceChildren(
      h('h2', { id: 'invitations-title' }, `Invitations (${pending.length} pending)`),
      table('Invitations', invitationColumns,
        invitations.map((i) => ({ item: i, attrs: { 'data-email': i.email, 'data-status': i.status } })),
        { empty: 'No invitations waiting.' }));
  }

  function inviteForm() {
    const email = h('input', { type: 'email', name: 'email', required: true, spellcheck: 'false' });
    const role = h('select', { name: 'role' }, roleOptions('marketer'));
    const submit = h('button', { type: 'submit', class: 'primary' }, 'Invite');
    const form = h('form', { class: 'card toolbar', 'aria-label': 'Invite a person', novalidate: true },
      field('Email', email), field('Role', role, { hint: ROLE_WORDS.marketer }),
      h('div', { class: 'actions' }, submit), h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }));
    role.addEventListener('change', () => { form.querySelector(`#${role.id}-hint`).textContent = ROLE_WORDS[role.value]; });
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      clearErrors(form);
      await submitting(form, submit, async () => {
        const answer = (await admin(inAccount(ctx.account, '/invitations'), { method: 'POST',
          body: { email: email.value.trim(), role: role.value } })).data;
        email.value = '';
        show(`Invitation link for ${answer.email}`, answer, `With it ${answer.email} joins as ${answer.role}.`);
        invitations = (await admin(inAccount(ctx.account, '/invitations'))).data;
        paint();
      });
    });
    return form;
  }

  paint();
  return h('section', { class: 'members' },
    h('div', { class: 'title-row' }, h('h1', { tabindex: -1 }, 'Members'),
      h('a', { class: 'button', href: `${ctx.base}/account` }, 'Account name and environment')),
    h('p', { class: 'muted' }, editable
      ? 'People of this account and their roles. Invite by email; the owner alone manages members.'
      : 'People of this account and their roles. The owner manages members.'),
    editable ? inviteForm() : null,
    shown,
    memberList,
    invitationList);
}
