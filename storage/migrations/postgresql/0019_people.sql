-- 0019 = SQLite's 0034 (issue 35): people, their memberships and personal access tokens, one-time links
-- (invitations, password resets), and the person a dashboard session was opened for.
CREATE TABLE people (
    id             text COLLATE "C" PRIMARY KEY,
    email          text NOT NULL,
    email_key      text NOT NULL UNIQUE,
    name           text NOT NULL,
    password_hash  text COLLATE "C" NOT NULL,
    totp_secret    text COLLATE "C",
    totp_pending   text COLLATE "C",
    totp_last_step bigint NOT NULL DEFAULT 0,
    created_at     text COLLATE "C" NOT NULL,
    updated_at     text COLLATE "C" NOT NULL
);

CREATE TABLE memberships (
    person_id  text COLLATE "C" NOT NULL REFERENCES people(id) ON DELETE CASCADE,
    account_id text COLLATE "C" NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    role       text COLLATE "C" NOT NULL CHECK (role IN ('owner', 'admin', 'marketer', 'analyst', 'developer')),
    created_at text COLLATE "C" NOT NULL,
    PRIMARY KEY (person_id, account_id)
);
CREATE INDEX memberships_account ON memberships(account_id, person_id);

CREATE TABLE personal_tokens (
    id           text COLLATE "C" PRIMARY KEY,
    person_id    text COLLATE "C" NOT NULL REFERENCES people(id) ON DELETE CASCADE,
    account_id   text COLLATE "C" NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    role         text COLLATE "C" NOT NULL,
    name         text NOT NULL,
    token_hash   text COLLATE "C" NOT NULL UNIQUE,
    token_prefix text COLLATE "C" NOT NULL,
    created_at   text COLLATE "C" NOT NULL,
    expires_at   text COLLATE "C" NOT NULL,
    revoked_at   text COLLATE "C",
    last_used_at text COLLATE "C"
);
CREATE INDEX personal_tokens_person ON personal_tokens(person_id, created_at);

CREATE TABLE one_time_links (
    id         text COLLATE "C" PRIMARY KEY,
    purpose    text COLLATE "C" NOT NULL CHECK (purpose IN ('invitation', 'password_reset')),
    token_hash text COLLATE "C" NOT NULL UNIQUE,
    account_id text COLLATE "C" REFERENCES accounts(id) ON DELETE CASCADE,
    person_id  text COLLATE "C" REFERENCES people(id) ON DELETE CASCADE,
    email      text NOT NULL DEFAULT '',
    role       text COLLATE "C" NOT NULL DEFAULT '',
    created_by text COLLATE "C" NOT NULL,
    created_at text COLLATE "C" NOT NULL,
    expires_at text COLLATE "C" NOT NULL,
    used_at    text COLLATE "C"
);
CREATE INDEX one_time_links_account ON one_time_links(account_id, purpose);

ALTER TABLE dashboard_sessions ADD COLUMN person_id text COLLATE "C";
CREATE INDEX dashboard_sessions_person ON dashboard_sessions(person_id);
