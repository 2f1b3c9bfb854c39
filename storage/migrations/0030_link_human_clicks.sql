-- Issue 34, links' lifecycle: the clicks by people stored for each link, added by the click writer in the commit
-- of the clicks it stores (storage.clicks.count_human_clicks): one row per link and batch, never updated, so that
-- click writers of several nodes never wait for each other's rows; a link's count is the sum of its rows. Workers
-- read it to hold a link to its max_clicks without reading the store on the click path (docs/decisions.md, "Link
-- lifecycle and passwords (issue 34)").
CREATE TABLE link_human_clicks (
    link_id TEXT NOT NULL,
    clicks  INTEGER NOT NULL
);
CREATE INDEX link_human_clicks_link ON link_human_clicks(link_id);

-- The clicks stored so far, so that a limit set on a link that has clicks counts them.
INSERT INTO link_human_clicks (link_id, clicks) SELECT link_id, count(*) FROM clicks WHERE bot = 0 GROUP BY link_id;
