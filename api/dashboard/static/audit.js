// The account's audit log (GET .../audit-log): who changed what, when and from where, the newest first, with
// filters (who, object kind, action, period) and pages. The fields are those the change sent, with secrets
// masked as the API gives them; nothing here edits an entry (the API has no route for it).

import { admin, inAccount, query } from './api.js';
import { clearErrors, field, h, pager, showErrors, when } from './dom.js';
import { table } from './table.js';

const LIMIT = 25;
const KINDS = ['accounts', 'api-keys', 'campaigns', 'connections', 'deliveries', 'domains', 'links', 'members'];
const ACTIONS = ['create', 'replace', 'update', 'delete'];

function fieldsOf(fields) {
  if (fields === null || fields === undefined || (typeof fields === 'object' && !Object.keys(fields).length)) {
    return h('span', { class: 'muted' }, '—');
  }
  if (typeof fields !== 'object') return String(fields);
  return h('dl', { class: 'changed-fields' }, Object.entries(fields).map(([key, value]) => [
    h('dt', {}, key), h('dd', {}, h('code', {}, typeof value === 'string' ? value : JSON.stringify(value)))]));
}

// A day picked in the form as the start (or the end) of that day, UTC.
const dayBound = (value, end) => (value ? `${value}T${end ? '23:59:59.999' : '00:00:00'}Z` : undefined);

export async function auditView(ctx) {
  const members = ctx.can('members:read') ? (await admin(inAccount(ctx.account, '/members'))).data : [];
  const people = new Map(members.map((m) => [m.person_id, m.name || m.email]));
  const who = (actor) => {
    if (actor.kind === 'operator') return 'the operator';
    const person = people.get(actor.person_id) || actor.person_id;
    return actor.kind === 'token' ? `${person} (token ${actor.id.slice(0, 8)})` : person;
  };

  const actor = h('select', { name: 'actor' }, h('option', { value: '' }, 'Anyone'),
    h('option', { value: 'operator' }, 'The operator'),
    members.map((m) => h('option', { value: m.person_id }, `${m.name} (${m.email})`)));
  const kind = h('input', { type: 'text', name: 'object_kind', list: 'audit-kinds', spellcheck: 'false' });
  const action = h('input', { type: 'text', name: 'action', list: 'audit-actions', spellcheck: 'false' });
  const since = h('input', { type: 'date', name: 'since' });
  const until = h('input', { type: 'date', name: 'until' });
  const apply = h('button', { type: 'submit', class: 'primary' }, 'Filter');
  const form = h('form', { class: 'toolbar filters', 'aria-label': 'Filters', novalidate: true },
    field('Who', actor), field('Object kind', kind), field('Action', action), field('From', since),
    field('To', until), h('div', { class: 'actions' }, apply),
    h('datalist', { id: 'audit-kinds' }, KINDS.map((k) => h('option', { value: k }))),
    h('datalist', { id: 'audit-actions' }, ACTIONS.map((a) => h('option', { value: a }))),
    h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }));
  const results = h('div', { 'aria-live': 'polite' });

  async function load(offset) {
    clearErrors(form);
    let answer;
    try {
      answer = await admin(inAccount(ctx.account, `/audit-log${query({ limit: LIMIT, offset,
        actor: actor.value, object_kind: kind.value.trim(), action: action.value.trim(),
        since: dayBound(since.value, false), until: dayBound(until.value, true) })}`));
    } catch (error) {
      if (error.status === 401) throw error;
      showErrors(form, error);
      return;
    }
    results.replaceChildren(
      table('Audit log', [
        { label: 'When', cell: (e) => when(e.at) },
        { label: 'Who', cell: (e) => who(e.actor) },
        { label: 'Object', cell: (e) => [e.object.kind, e.object.id ? [' ', h('code', {}, e.object.id)] : null] },
        { label: 'Action', cell: (e) => e.action },
        { label: 'Fields', cell: (e) => fieldsOf(e.fields) },
        { label: 'From', cell: (e) => e.client || '—' },
      ], answer.data.map((e) => ({ item: e, attrs: { 'data-kind': e.object.kind, 'data-action': e.action,
        'data-object': e.object.id } })), { empty: 'No entry matches.', server: { sort: '', onSort: () => {} } }),
      pager(offset, LIMIT, answer.count, answer.data.length, load));
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    load(0);
  });
  await load(0);
  return h('section', { class: 'audit' },
    h('h1', { tabindex: -1 }, 'Audit log'),
    h('p', { class: 'muted' }, 'Every change made to this account through the admin API and this dashboard, '
      + 'the newest first. Secrets are masked; no one can edit an entry.'),
    h('p', { class: 'muted sort-note' }, 'The log is kept in the order things happened, so it is not sorted by '
      + 'other columns: narrow it with the filters (who, object, action, days) instead.'),
    form, results);
}
