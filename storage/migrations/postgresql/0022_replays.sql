-- 0022 = SQLite's 0037 (issue 37): replays of a time range's events to a connection, resumed after a restart
-- from their cursor; deliveries carry the replay that made them and the webhook's deduplication key
-- (`message_id`, NULL on rows written before: their `id` was their `webhook-id`).
CREATE TABLE replays (
    id            text COLLATE "C" PRIMARY KEY,
    account_id    text COLLATE "C" NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    connection_id text COLLATE "C" NOT NULL,
    range_from    text COLLATE "C" NOT NULL,
    range_to      text COLLATE "C" NOT NULL,
    state         text COLLATE "C" NOT NULL,
    events_total  integer NOT NULL,
    events_found  integer NOT NULL DEFAULT 0,
    queued        integer NOT NULL DEFAULT 0,
    skipped       integer NOT NULL DEFAULT 0,
    taken_all     integer NOT NULL DEFAULT 0,
    cursor_at     text COLLATE "C",
    cursor_id     text COLLATE "C",
    error         text,
    created_at    text COLLATE "C" NOT NULL,
    updated_at    text COLLATE "C" NOT NULL,
    finished_at   text COLLATE "C"
);
CREATE INDEX replays_connection ON replays(account_id, connection_id, created_at);
CREATE INDEX replays_state ON replays(state, created_at);
ALTER TABLE deliveries ADD COLUMN message_id text COLLATE "C";
ALTER TABLE deliveries ADD COLUMN replay_id text COLLATE "C";
CREATE INDEX deliveries_replay ON deliveries(replay_id, state) WHERE replay_id IS NOT NULL;
