-- 0024 = SQLite's 0039 (issue 37): the `link.clicked` webhook. Per subscribed webhook connection, how far it has
-- taken the stored clicks (`last_id`, read up to the clicks' horizon, under which every id is committed:
-- storage.feed.click_horizon), moved with the deliveries it wrote in one unit (compare-and-set); a delivery of
-- clicks names them in `deliveries.click_ids` (a JSON array of click ids). The identity never hands out an id
-- twice: no trigger as on SQLite.
CREATE TABLE click_hook_progress (
    connection_id text COLLATE "C" PRIMARY KEY,
    account_id    text COLLATE "C" NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    last_id       bigint NOT NULL,
    updated_at    text COLLATE "C" NOT NULL
);
CREATE INDEX click_hook_progress_account ON click_hook_progress(account_id);
ALTER TABLE deliveries ADD COLUMN click_ids text COLLATE "C";
