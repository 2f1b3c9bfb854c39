-- The export job's bookkeeping (linksvc.forwarding.export): per target and account, every event up to
-- `last_rowid` (the events table's implicit rowid) is written. `pending_rowid` is a range an exporter claimed
-- before writing it: a run after a crash writes exactly (last_rowid, pending_rowid] again, to the same object
-- names, before going further. Deleting an account deletes its progress with its events, so a rowid the
-- account's deleted events held and a new account reuses is never taken for "already written".
CREATE TABLE export_progress (
    target         TEXT NOT NULL,
    account_id     TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    last_rowid     INTEGER NOT NULL,
    pending_rowid  INTEGER,
    updated_at     TEXT NOT NULL,
    PRIMARY KEY (target, account_id)
);
CREATE INDEX export_progress_account ON export_progress(account_id);

-- The rowid is the implicit last column of every index, so `account_id = ? AND rowid > ?` is one range of
-- this index: an account's new events are found without visiting other accounts' rows.
CREATE INDEX events_account_rowid ON events(account_id);
