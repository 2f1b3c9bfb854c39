-- 0013 = SQLite's 0028 (issue 33): the click writer stores clicks only; the conversion rollups of clicks are
-- summed from the clicks table by a pass of their own, which reads the clicks after this mark and moves it in
-- the same transaction as the rows it adds (every click with an id up to `counted` is counted, none above it).
-- Passes take turns under an advisory lock; a click's transaction holds a shared advisory lock while it writes,
-- so that a pass sees every id up to its horizon committed (storage.conversions.click_horizon). The identity
-- never hands out an id twice, so the deleting triggers need not move the mark as SQLite's do.
CREATE TABLE conversion_click_mark (
    name    text COLLATE "C" PRIMARY KEY,
    counted bigint NOT NULL
);

-- The clicks stored so far were counted by the click writer itself, as it stored them.
INSERT INTO conversion_click_mark (name, counted) SELECT 'clicks', max(id) FROM clicks HAVING max(id) IS NOT NULL;
