-- Issue 35, the audit log: one row per change made through the admin API, written in the transaction of the
-- change. Append-only: no statement of the service updates or deletes a row (tests/unit/test_audit_log.py).
CREATE TABLE audit_log (
    seq         INTEGER PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    account_id  TEXT NOT NULL,
    actor_kind  TEXT NOT NULL CHECK (actor_kind IN ('operator', 'person', 'token')),
    actor_id    TEXT NOT NULL,
    person_id   TEXT,
    object_kind TEXT NOT NULL,
    object_id   TEXT NOT NULL,
    action      TEXT NOT NULL,
    fields      TEXT NOT NULL,
    client      TEXT NOT NULL,
    at          TEXT NOT NULL
);
CREATE INDEX audit_log_account ON audit_log(account_id, seq);
