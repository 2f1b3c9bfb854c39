-- The outbox: one row per (event or reversal, connection, kind), written in the same transaction as the
-- event. `seq` orders deliveries; those of one `order_key` (the customer, else the event) reach one
-- connection in order. States: pending, delivered, filtered (with `reason`), failed (not retried), dead
-- (retries exhausted). `lease_until` marks a pending delivery a dispatcher is sending.
CREATE TABLE deliveries (
    seq             INTEGER PRIMARY KEY,
    id              TEXT NOT NULL UNIQUE,
    account_id      TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    connection_id   TEXT NOT NULL,
    destination     TEXT NOT NULL,
    event_id        TEXT NOT NULL,
    trigger         TEXT NOT NULL,
    kind            TEXT NOT NULL,
    order_key       TEXT NOT NULL,
    state           TEXT NOT NULL,
    reason          TEXT,
    tries           INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    lease_until     TEXT,
    last_status     INTEGER,
    last_error      TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    delivered_at    TEXT
);
CREATE INDEX deliveries_due ON deliveries(next_attempt_at, seq) WHERE state = 'pending';
CREATE INDEX deliveries_order ON deliveries(connection_id, order_key, seq) WHERE state = 'pending';
CREATE INDEX deliveries_event ON deliveries(event_id, seq);
CREATE INDEX deliveries_connection ON deliveries(connection_id, seq);
CREATE INDEX deliveries_states ON deliveries(destination, state);
