-- One-time codes of customers and the request log of rate-limited endpoints.

CREATE TABLE totp_state (
    customer_id    TEXT PRIMARY KEY REFERENCES customers(id) ON DELETE CASCADE,
    account_id     TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    secret         TEXT NOT NULL,
    last_used_step INTEGER NOT NULL DEFAULT -1,
    failed_step    INTEGER NOT NULL DEFAULT -1,
    failures       INTEGER NOT NULL DEFAULT 0
);

-- Each admitted request of a rate-limited endpoint; refused requests are not written.
CREATE TABLE rate_events (
    account_id TEXT NOT NULL,
    scope      TEXT NOT NULL,
    at_ms      INTEGER NOT NULL
);
CREATE INDEX rate_events_window ON rate_events(account_id, scope, at_ms);

-- Campaign listing filtered by brand or funder keeps the page order from the index.
CREATE INDEX campaigns_account_brand ON campaigns(account_id, brand_id, sort_order, created_at, id);
