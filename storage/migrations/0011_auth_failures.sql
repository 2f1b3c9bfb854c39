-- Failed admin-token, API-key and dashboard sign-in attempts, per kind and client address, for the throttle
-- of guesses. Only failures are written; rows older than the window are pruned.

CREATE TABLE auth_failures (
    kind   TEXT NOT NULL,
    client TEXT NOT NULL,
    at_ms  INTEGER NOT NULL
);
-- The check of one attempt: the failures of one kind and address within the window, newest first.
CREATE INDEX auth_failures_client ON auth_failures(kind, client, at_ms);
-- Pruning of every address's expired rows.
CREATE INDEX auth_failures_at ON auth_failures(at_ms);
