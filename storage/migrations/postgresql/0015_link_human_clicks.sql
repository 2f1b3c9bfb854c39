-- 0015 = SQLite's 0030 (issue 34): the clicks by people stored for each link, added by the click writer in the
-- commit of the clicks it stores, one row per link and batch (never updated: writers of several nodes never wait
-- for each other's rows); a link's count is the sum of its rows.
CREATE TABLE link_human_clicks (
    link_id text COLLATE "C" NOT NULL,
    clicks  bigint NOT NULL
);
CREATE INDEX link_human_clicks_link ON link_human_clicks(link_id);

INSERT INTO link_human_clicks (link_id, clicks) SELECT link_id, count(*) FROM clicks WHERE bot = 0 GROUP BY link_id;
