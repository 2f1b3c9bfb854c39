// Every call of the dashboard goes through here: the admin API with the session cookie and the
// dashboard's header (the API accepts the cookie only with it), and the session endpoints.

export const DASHBOARD_HEADER = { 'X-Requested-With': 'linksvc-dashboard' };

export class ApiError extends Error {
  constructor(status, body) {
    super(typeof body?.error === 'string' ? body.error : `The service answered ${status}`);
    this.status = status;
    this.body = body || {};
  }

  // "field: message" pairs of a validation error ({details: {field, message, issues}}).
  get fields() {
    const details = this.body.details;
    if (!details || typeof details !== 'object') return [];
    const issues = Array.isArray(details.issues) && details.issues.length
      ? details.issues.map((i) => [i.path, i.message])
      : (details.field ? [[details.field, details.message]] : []);
    return issues.filter(([path]) => typeof path === 'string');
  }

  get text() {
    const details = this.body.details;
    if (typeof details === 'string' && details !== this.message) return `${this.message}: ${details}`;
    if (details && typeof details === 'object' && details.message) return `${this.message}: ${details.message}`;
    return this.message;
  }
}

export class AuthError extends ApiError {}

// `body` is sent as JSON; `raw`, text sent as it is (a file the API reads itself: an import's export).
async function call(url, { method = 'GET', body, raw, as = 'json' } = {}) {
  const headers = { ...DASHBOARD_HEADER, Accept: as === 'json' ? 'application/json' : '*/*' };
  const init = { method, headers, credentials: 'same-origin', cache: 'no-store' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  } else if (raw !== undefined) {
    headers['Content-Type'] = 'application/octet-stream';
    init.body = raw;
  }
  let response;
  try {
    response = await fetch(url, init);
  } catch {
    throw new ApiError(0, { error: 'The service could not be reached', details: 'check the connection and try again' });
  }
  if (!response.ok) {
    let answer = {};
    try { answer = await response.json(); } catch { answer = {}; }
    throw new (response.status === 401 ? AuthError : ApiError)(response.status, answer);
  }
  if (as === 'blob') return response.blob();
  if (response.status === 204) return null;
  return response.json();
}

export const admin = (path, options) => call(`/api/admin/v1${path}`, options);

// The pages an emailed one-time link opens call the admin API without being signed in: a 401 there is the
// API's answer to show, not an ended session.
export async function anonymous(path, options) {
  try {
    return await admin(path, options);
  } catch (error) {
    if (error instanceof AuthError) throw new ApiError(error.status, error.body);
    throw error;
  }
}

export function inAccount(account, path) {
  return `/accounts/${encodeURIComponent(account)}${path}`;
}

export function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

export const session = {
  state: () => call('/dashboard/session'),
  roles: () => call('/dashboard/roles'),  // each role's permissions: the table the admin API decides by
  totpQr: (uri) => call('/dashboard/totp-qr', { method: 'POST', body: { uri }, as: 'blob' }),  // an SVG
  // { token } (the operator token) or { email, password, code? } (a person)
  signIn: (body) => call('/dashboard/session', { method: 'POST', body }),
  signOut: () => call('/dashboard/session', { method: 'DELETE' }),
};
