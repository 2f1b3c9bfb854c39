-- 0015 = SQLite's 0030 (issue 34): the clicks by people stored for each link, kept by the click writer in the
-- commit of the clicks it stores; workers read it to hold a link to its max_clicks.
CREATE TABLE link_human_clicks (
    link_id text COLLATE "C" PRIMARY KEY,
    clicks  bigint NOT NULL
);

INSERT INTO link_human_clicks (link_id, clicks) SELECT link_id, count(*) FROM clicks WHERE bot = 0 GROUP BY link_id;
