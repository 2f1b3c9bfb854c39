-- Issue 37: a replay sends a connection the account's accepted events of a time range again (or for the first
-- time, for a new connection). `replays` keeps each one's range, state (queued, running, done, failed), where it
-- stopped (`cursor_at`, `cursor_id`: the last event taken, in `received_at`, `id` order) and its counts, so that
-- it resumes after a restart. Its deliveries are ordinary deliveries carrying `replay_id`.
-- `deliveries.message_id` is the vendor's deduplication key of a webhook (its `webhook-id`): the same for every
-- delivery of one (connection, event, trigger, kind), a replay's included. NULL on rows written before: their
-- `id` was their `webhook-id`, and still is.
CREATE TABLE replays (
    id            TEXT PRIMARY KEY,
    account_id    TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    connection_id TEXT NOT NULL,
    range_from    TEXT NOT NULL,
    range_to      TEXT NOT NULL,
    state         TEXT NOT NULL,
    events_total  INTEGER NOT NULL,
    events_found  INTEGER NOT NULL DEFAULT 0,
    queued        INTEGER NOT NULL DEFAULT 0,
    skipped       INTEGER NOT NULL DEFAULT 0,
    taken_all     INTEGER NOT NULL DEFAULT 0,
    cursor_at     TEXT,
    cursor_id     TEXT,
    error         TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    finished_at   TEXT
);
CREATE INDEX replays_connection ON replays(account_id, connection_id, created_at);
CREATE INDEX replays_state ON replays(state, created_at);
ALTER TABLE deliveries ADD COLUMN message_id TEXT;
ALTER TABLE deliveries ADD COLUMN replay_id TEXT;
CREATE INDEX deliveries_replay ON deliveries(replay_id, state) WHERE replay_id IS NOT NULL;
