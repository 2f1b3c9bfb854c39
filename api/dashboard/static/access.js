// What the signed-in one may do, kept in one place. The operator (signed in with the operator token) may do
// everything but a person's own pages; a person may do in an account what their role there grants. The
// role → permissions table is the service's own (GET /dashboard/roles), the roles are the
// person's (GET /people/me); pages ask `can(account, 'links:write')` and never guess from a role's name.
// The admin API checks every call anyway: hiding a control only spares a refusal.

const current = { operator: false, person: null, grants: {}, roles: new Map() };

export function setAccess({ operator = false, person = null, grants = {} } = {}) {
  current.operator = operator;
  current.person = person;
  current.grants = grants;
  current.roles = new Map((person?.accounts || []).map((m) => [m.account_id, m.role]));
}

export const isOperator = () => current.operator;
export const signedPerson = () => current.person;

export function roleIn(account) {
  return current.operator ? null : current.roles.get(account) || null;
}

export function can(account, permission) {
  if (current.operator) return permission !== 'self';
  if (permission === 'self') return Boolean(current.person);
  const role = current.roles.get(account);
  return Boolean(role && (current.grants[role] || []).includes(permission));
}

// The roles whose grants are all within `role`'s: those a personal token of its person may have there.
export function rolesWithin(role) {
  const cap = new Set(current.grants[role] || []);
  return Object.entries(current.grants).filter(([, grants]) => grants.every((g) => cap.has(g))).map(([r]) => r);
}

// `node` when the permission is granted, else nothing (null is skipped by h()).
export function ifCan(account, permission, node) {
  return can(account, permission) ? node : null;
}

// A form shown to read only: its controls disabled, its buttons gone (a section that edits and shows at once,
// such as a link's rules, stays readable).
export function readOnly(form) {
  for (const control of form.querySelectorAll('input, select, textarea')) control.disabled = true;
  for (const button of form.querySelectorAll('button')) button.remove();
  form.classList.add('read-only');
  return form;
}

export function editableIf(account, permission, form) {
  return can(account, permission) ? form : readOnly(form);
}
