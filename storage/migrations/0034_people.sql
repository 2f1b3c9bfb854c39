-- Issue 35, people and roles: a person signs in with an email and a password (an argon2id hash), optionally with
-- a one-time code (RFC 6238); belongs to accounts with a role each; holds personal access tokens scoped to one
-- account and a role (the SHA-256 of the token, never the token). Invitations and password resets are one-time
-- links: only the SHA-256 of their token is kept. A dashboard session names the person it was opened for (NULL:
-- opened with the admin token).
CREATE TABLE people (
    id             TEXT PRIMARY KEY,
    email          TEXT NOT NULL,
    email_key      TEXT NOT NULL UNIQUE, -- the email in lower case: one person per email, whatever its case
    name           TEXT NOT NULL,
    password_hash  TEXT NOT NULL,
    totp_secret    TEXT,
    totp_pending   TEXT,
    totp_last_step INTEGER NOT NULL DEFAULT 0,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);

CREATE TABLE memberships (
    person_id  TEXT NOT NULL REFERENCES people(id) ON DELETE CASCADE,
    account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    role       TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'marketer', 'analyst', 'developer')),
    created_at TEXT NOT NULL,
    PRIMARY KEY (person_id, account_id)
) WITHOUT ROWID;
CREATE INDEX memberships_account ON memberships(account_id, person_id);

CREATE TABLE personal_tokens (
    id           TEXT PRIMARY KEY,
    person_id    TEXT NOT NULL REFERENCES people(id) ON DELETE CASCADE,
    account_id   TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    role         TEXT NOT NULL,
    name         TEXT NOT NULL,
    token_hash   TEXT NOT NULL UNIQUE,
    token_prefix TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    expires_at   TEXT NOT NULL,
    revoked_at   TEXT,
    last_used_at TEXT
);
CREATE INDEX personal_tokens_person ON personal_tokens(person_id, created_at);

-- purpose: 'invitation' (account_id, email, role) or 'password_reset' (person_id).
CREATE TABLE one_time_links (
    id         TEXT PRIMARY KEY,
    purpose    TEXT NOT NULL CHECK (purpose IN ('invitation', 'password_reset')),
    token_hash TEXT NOT NULL UNIQUE,
    account_id TEXT REFERENCES accounts(id) ON DELETE CASCADE,
    person_id  TEXT REFERENCES people(id) ON DELETE CASCADE,
    email      TEXT NOT NULL DEFAULT '',
    role       TEXT NOT NULL DEFAULT '',
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at    TEXT
);
CREATE INDEX one_time_links_account ON one_time_links(account_id, purpose);

ALTER TABLE dashboard_sessions ADD COLUMN person_id TEXT;
CREATE INDEX dashboard_sessions_person ON dashboard_sessions(person_id);
