-- 0023 = SQLite's 0038 (issue 37): the clicks export's own progress, per target and account: every click of
-- the account with an id up to `last_id` is written; `pending_id` ends a range (last_id, pending_id] claimed
-- before writing it, written again to the same object names by the run after a crash. Ids are handed out in
-- one order and committed in another here, so an exporter reads only up to a horizon under which every id is
-- committed (storage.conversions.click_horizon); the identity never hands out an id twice, so deleting clicks
-- needs no trigger as on SQLite.
CREATE TABLE click_export_progress (
    target      text COLLATE "C" NOT NULL,
    account_id  text COLLATE "C" NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    last_id     bigint NOT NULL,
    pending_id  bigint,
    updated_at  text COLLATE "C" NOT NULL,
    PRIMARY KEY (target, account_id)
);
CREATE INDEX click_export_progress_account ON click_export_progress(account_id);
