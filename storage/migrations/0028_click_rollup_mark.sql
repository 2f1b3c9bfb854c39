-- Issue 33: the click writer stores clicks only. The conversion rollups of clicks (conversion_clicks,
-- conversion_visitors, conversion_level_clicks) are summed from the clicks table by a pass of their own
-- (storage.conversions.roll_up_clicks, scheduled by linksvc.reports.rollups), which reads the clicks after this
-- mark and moves it in the same transaction as the rows it adds: every click with an id up to `counted` is in
-- the rollups, none above it. One row, named 'clicks' (none before the first pass is as 0).
CREATE TABLE conversion_click_mark (
    name    TEXT PRIMARY KEY,
    counted INTEGER NOT NULL
);

-- The clicks stored so far were counted by the click writer itself, as it stored them.
INSERT INTO conversion_click_mark (name, counted) SELECT 'clicks', max(id) FROM clicks HAVING max(id) IS NOT NULL;

-- SQLite gives a new row the largest rowid in the table plus one. Deleting a link's (or an account's) clicks
-- that were the last stored would hand their ids, already counted, to the next clicks, which the pass would then
-- never read. So the deleting triggers move the mark back to the largest id left: every click up to it was
-- counted, and the next click comes after it. (PostgreSQL's identity never hands out an id twice.)
DROP TRIGGER links_delete_clicks;
CREATE TRIGGER links_delete_clicks AFTER DELETE ON links BEGIN
    DELETE FROM clicks WHERE link_id = OLD.id;
    UPDATE conversion_click_mark SET counted = (SELECT coalesce(max(id), 0) FROM clicks)
        WHERE counted > (SELECT coalesce(max(id), 0) FROM clicks);
END;
DROP TRIGGER accounts_delete_clicks;
CREATE TRIGGER accounts_delete_clicks AFTER DELETE ON accounts BEGIN
    DELETE FROM clicks WHERE account_id = OLD.id;
    UPDATE conversion_click_mark SET counted = (SELECT coalesce(max(id), 0) FROM clicks)
        WHERE counted > (SELECT coalesce(max(id), 0) FROM clicks);
END;
