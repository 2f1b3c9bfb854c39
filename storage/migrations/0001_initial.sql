-- Accounts, credentials and every resource of the storefront specification and the product decisions.
-- Resources keep their full validated document in `body` (JSON) and copy into columns only what is
-- filtered, joined or indexed on.

CREATE TABLE accounts (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    environment TEXT NOT NULL CHECK (environment IN ('production', 'sandbox')),
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

CREATE TABLE api_keys (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    kind        TEXT NOT NULL CHECK (kind IN ('SERVER', 'CLIENT')),
    name        TEXT NOT NULL DEFAULT '',
    key_hash    TEXT NOT NULL UNIQUE,
    key_prefix  TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    revoked_at  TEXT
);
CREATE INDEX api_keys_account ON api_keys(account_id);

CREATE TABLE access_tokens (
    token_hash  TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    key_id      TEXT NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
    kind        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL
);
CREATE INDEX access_tokens_key ON access_tokens(key_id);
CREATE INDEX access_tokens_expiry ON access_tokens(expires_at);

CREATE TABLE brands (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    body        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX brands_account ON brands(account_id, created_at, id);

CREATE TABLE tiers (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    level       REAL NOT NULL,
    body        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX tiers_account ON tiers(account_id, level, id);

CREATE TABLE rewards (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    body        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX rewards_account ON rewards(account_id, created_at, id);

CREATE TABLE campaigns (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    type         TEXT NOT NULL,
    brand_id     TEXT,
    funded_by    TEXT,
    starts_at    TEXT,
    ends_at      TEXT,
    paused       INTEGER NOT NULL DEFAULT 0,
    finished_at  TEXT,
    sort_order   REAL NOT NULL DEFAULT 0,
    -- 1 when the list is null (no restriction); 0 when it is an array, whose values are rows of
    -- campaign_restrictions (none for []).
    stores_any   INTEGER NOT NULL DEFAULT 1,
    channels_any INTEGER NOT NULL DEFAULT 1,
    products_any INTEGER NOT NULL DEFAULT 1,
    body         TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
);
CREATE INDEX campaigns_account_order ON campaigns(account_id, sort_order, created_at, id);
CREATE INDEX campaigns_account_type ON campaigns(account_id, type, sort_order, created_at, id);

CREATE TABLE campaign_restrictions (
    campaign_id TEXT NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    dimension   TEXT NOT NULL CHECK (dimension IN ('store', 'channel', 'product')),
    value       TEXT NOT NULL,
    PRIMARY KEY (dimension, value, campaign_id)
) WITHOUT ROWID;
CREATE INDEX campaign_restrictions_campaign ON campaign_restrictions(campaign_id);

CREATE TABLE coupon_codes (
    campaign_id TEXT NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    code        TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('AVAILABLE', 'RESERVED', 'REDEEMED')),
    expires_at  TEXT,
    PRIMARY KEY (campaign_id, code)
) WITHOUT ROWID;

CREATE TABLE contacts (
    id              TEXT PRIMARY KEY,
    account_id      TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    external_id     TEXT,
    email_lower     TEXT,
    document_number TEXT,
    deleted_at      TEXT,
    body            TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
CREATE INDEX contacts_account ON contacts(account_id, created_at, id);
CREATE INDEX contacts_email ON contacts(account_id, email_lower);
CREATE INDEX contacts_document ON contacts(account_id, document_number);
CREATE INDEX contacts_external ON contacts(account_id, external_id);

CREATE TABLE customers (
    id              TEXT PRIMARY KEY,
    account_id      TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    external_id     TEXT,
    document_number TEXT,
    phone_digits    TEXT,
    email_lower     TEXT,
    tier_id         TEXT,
    body            TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
CREATE INDEX customers_account ON customers(account_id, created_at, id);
CREATE INDEX customers_document ON customers(account_id, document_number);
CREATE INDEX customers_phone ON customers(account_id, phone_digits);
CREATE INDEX customers_external ON customers(account_id, external_id);
CREATE INDEX customers_email ON customers(account_id, email_lower);

-- Amounts are decimal text, never binary floats.
CREATE TABLE wallet_lines (
    id                     TEXT PRIMARY KEY,
    account_id             TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    customer_id            TEXT NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
    reward_id              TEXT NOT NULL,
    campaign_id            TEXT,
    brand_id               TEXT,
    amount                 TEXT NOT NULL,
    issued_at              TEXT NOT NULL,
    expiration_date        TEXT,
    reservation_expires_at TEXT,
    source                 TEXT NOT NULL DEFAULT 'opening'
);
CREATE INDEX wallet_lines_customer ON wallet_lines(customer_id, expiration_date);

CREATE TABLE custom_event_types (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    active      INTEGER NOT NULL,
    body        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    UNIQUE (account_id, name)
);

CREATE TABLE connections (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    destination TEXT NOT NULL,
    enabled     INTEGER NOT NULL,
    body        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX connections_account ON connections(account_id, created_at, id);

CREATE TABLE links (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    code        TEXT NOT NULL UNIQUE,
    kind        TEXT NOT NULL,
    campaign_id TEXT,
    body        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX links_account ON links(account_id, created_at, id);
