-- 0003: the events each export target has claimed, numbered in the order it claimed them. PostgreSQL has no
-- rowid, and neither an identity nor a time orders events by commit when several nodes write: an event
-- committed late may carry a smaller number than one already exported, and a watermark would skip it. So an
-- event is exported once it has a row here; a claim numbers the next events that have none (positions
-- after the target's export_progress.last_rowid) in the same transaction that moves pending_rowid, under
-- the export_progress row's lock. export_progress.last_rowid and pending_rowid count these positions.
CREATE TABLE export_events (
    target     text NOT NULL,
    account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    event_id   text NOT NULL,
    position   bigint NOT NULL,
    PRIMARY KEY (target, account_id, event_id),
    UNIQUE (target, account_id, position)
);
