-- Dashboard sign-ins, kept server-side so that signing out ends a session at once on every worker.
-- The cookie holds a random session id; only its SHA-256 is stored. token_fingerprint is derived from the
-- admin token the session was opened under (never the token itself): a session under another token is void.
CREATE TABLE dashboard_sessions (
    id_hash           TEXT PRIMARY KEY,
    token_fingerprint TEXT NOT NULL,
    created_at        TEXT NOT NULL,
    expires_at        TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions(expires_at);
