-- Issue 37: the `link.clicked` webhook. A webhook connection whose config subscribes to clicks keeps, here, how
-- far it has taken the stored clicks (`last_id`: every click of the account with an id up to it was looked at
-- and, when it matched the connection's filters, put in a delivery). The dispatcher reads the clicks after it,
-- writes their deliveries and moves it in one unit of work (compare-and-set), so each click is in one delivery
-- per connection and nothing is written on the click path. A delivery of clicks names them in
-- `deliveries.click_ids` (a JSON array of click ids: one, or a batch); NULL for an event's deliveries.
CREATE TABLE click_hook_progress (
    connection_id TEXT PRIMARY KEY,
    account_id    TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    last_id       INTEGER NOT NULL,
    updated_at    TEXT NOT NULL
);
CREATE INDEX click_hook_progress_account ON click_hook_progress(account_id);
ALTER TABLE deliveries ADD COLUMN click_ids TEXT;

-- As for the clicks export (0038): SQLite hands the ids of the last clicks deleted out again, so a cursor past
-- the largest id left goes back to it. Runs only for a deleted click above every click left.
CREATE TRIGGER clicks_delete_hook_progress AFTER DELETE ON clicks
WHEN OLD.id > (SELECT coalesce(max(id), 0) FROM clicks) BEGIN
    UPDATE click_hook_progress SET last_id = (SELECT coalesce(max(id), 0) FROM clicks)
    WHERE last_id > (SELECT coalesce(max(id), 0) FROM clicks);
END;
