-- Issue 33: accepting an event writes one row here, whatever the number of the account's connections (the
-- outbox of events and reversals still to fan out), instead of a delivery row per connection and kind. The
-- dispatcher takes them in `seq` order, works out each one's deliveries (pending or filtered, as
-- `linksvc.forwarding.outbox` did at ingest) and writes them to `deliveries` in the same unit of work as it
-- deletes the row. `trigger`: 'event' or 'reversal'. Existing deliveries stay as they are.
CREATE TABLE fanout (
    seq        INTEGER PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    event_id   TEXT NOT NULL,
    trigger    TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX fanout_account ON fanout(account_id, seq);
