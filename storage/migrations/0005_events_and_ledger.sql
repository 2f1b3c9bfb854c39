-- Behavior events, and the append-only ledger every wallet amount is derived from.

-- One accepted event. `body` is the event as stored: what the client sent, normalized (customer, type,
-- issued_at, properties, purchase fields), with `attribution_original` (the nested object untouched) beside
-- `attribution` (resolved). `effects` is what it did: rewards issued, amounts spent, tier change.
-- `reversal` is set once, by the reversal of a purchase, with what that did.
CREATE TABLE events (
    id            TEXT PRIMARY KEY,
    account_id    TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    type          TEXT NOT NULL,
    customer_id   TEXT,
    order_id      TEXT,
    payload_hash  TEXT NOT NULL,
    issued_at     TEXT NOT NULL,
    received_at   TEXT NOT NULL,
    key_kind      TEXT NOT NULL,
    body          TEXT NOT NULL,
    effects       TEXT NOT NULL,
    reversed_at   TEXT,
    reversal      TEXT
);
CREATE UNIQUE INDEX events_order ON events(account_id, order_id) WHERE order_id IS NOT NULL;
CREATE INDEX events_customer ON events(account_id, customer_id, issued_at);
CREATE INDEX events_received ON events(account_id, received_at);

-- Wallet lines gain their origin: the event that issued them (NULL for opening lines).
ALTER TABLE wallet_lines ADD COLUMN event_id TEXT;

-- Every change to a wallet line: opening, issue, spend, expire, reverse_issue, reverse_spend, adjust.
-- `amount` is signed decimal text. A line's `amount` in wallet_lines always equals the sum of its entries
-- (checked by linksvc.loyalty.ledger.check).
CREATE TABLE ledger_entries (
    id           INTEGER PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    customer_id  TEXT NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
    line_id      TEXT NOT NULL,
    reward_id    TEXT NOT NULL,
    kind         TEXT NOT NULL,
    amount       TEXT NOT NULL,
    event_id     TEXT,
    created_at   TEXT NOT NULL
);
CREATE INDEX ledger_customer ON ledger_entries(account_id, customer_id, id);
CREATE INDEX ledger_line ON ledger_entries(line_id);
CREATE INDEX ledger_event ON ledger_entries(event_id) WHERE event_id IS NOT NULL;

CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE ON ledger_entries BEGIN
    SELECT RAISE(ABORT, 'ledger entries are append-only');
END;

-- Opening lines already held before the ledger existed get their opening entry.
INSERT INTO ledger_entries (account_id, customer_id, line_id, reward_id, kind, amount, event_id, created_at)
SELECT account_id, customer_id, id, reward_id, 'opening', amount, NULL, issued_at FROM wallet_lines;
