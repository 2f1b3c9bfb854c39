-- Issue 37: the clicks export (linksvc.forwarding.click_export) keeps its own progress, per target and
-- account: every click of the account with an id up to `last_id` is written; `pending_id` ends a range
-- (last_id, pending_id] an exporter claimed before writing it, which a run after a crash writes again to the
-- same object names before going further. Deleting an account deletes its progress with its clicks.
CREATE TABLE click_export_progress (
    target      TEXT NOT NULL,
    account_id  TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    last_id     INTEGER NOT NULL,
    pending_id  INTEGER,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (target, account_id)
);
CREATE INDEX click_export_progress_account ON click_export_progress(account_id);

-- SQLite gives a new row the largest id in the table plus one: deleting a link's clicks that were the last
-- stored hands their ids to the next clicks, which a watermark past them would never export. So when a
-- deleted click was above every click left, watermarks past the largest id left go back to it, and a range
-- claimed past it is given up (the next run claims afresh). A trigger of its own, on the clicks: the links'
-- and accounts' triggers stay as they are. It runs only for a deleted click above every click left; the
-- click writer only inserts. (PostgreSQL's identity never hands out an id twice: no trigger there.)
CREATE TRIGGER clicks_delete_export_progress AFTER DELETE ON clicks
WHEN OLD.id > (SELECT coalesce(max(id), 0) FROM clicks) BEGIN
    UPDATE click_export_progress SET
        last_id = min(last_id, (SELECT coalesce(max(id), 0) FROM clicks)),
        pending_id = NULL
    WHERE last_id > (SELECT coalesce(max(id), 0) FROM clicks)
       OR pending_id > (SELECT coalesce(max(id), 0) FROM clicks);
END;
