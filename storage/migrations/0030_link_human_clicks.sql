-- Issue 34, links' lifecycle: the clicks by people stored for each link, kept by the click writer in the commit
-- of the clicks it stores (storage.clicks.count_human_clicks). Workers read it to hold a link to its max_clicks
-- without reading the store on the click path (docs/decisions.md, "Link lifecycle and passwords (issue 34)").
CREATE TABLE link_human_clicks (
    link_id TEXT PRIMARY KEY,
    clicks  INTEGER NOT NULL
);

-- The clicks stored so far, so that a limit set on a link that has clicks counts them.
INSERT INTO link_human_clicks (link_id, clicks) SELECT link_id, count(*) FROM clicks WHERE bot = 0 GROUP BY link_id;
