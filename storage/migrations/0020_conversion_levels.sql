-- The conversion report's coarse level (docs/decisions.md, "Conversion report and attribution lineage"): the
-- rollups of 0019 summed again per day and one or two dimensions other than the link's UTM pairs, so that a
-- report reads a few hundred rows a day instead of every (link, UTM, platform) combination. Kept by the same
-- writers in the same transaction. `level` names the dimensions of a row, joined by a comma in this order:
-- link_id, utm_source, utm_medium, utm_campaign, platform ('' for the day's totals); `a` and `b` hold their
-- values ('' when the level has fewer). Events and revenue hold attributed events only (a click behind them);
-- the level 'unattributed' holds the others, per day.

CREATE TABLE conversion_level_clicks (
    account_id TEXT NOT NULL,
    level      TEXT NOT NULL,
    day        TEXT NOT NULL,
    a          TEXT NOT NULL,
    b          TEXT NOT NULL,
    human      INTEGER NOT NULL DEFAULT 0,
    bot        INTEGER NOT NULL DEFAULT 0,
    visitors   INTEGER NOT NULL DEFAULT 0,
    web        INTEGER NOT NULL DEFAULT 0,
    app        INTEGER NOT NULL DEFAULT 0,
    store      INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, level, day, a, b)
) WITHOUT ROWID;

CREATE TABLE conversion_level_events (
    account_id TEXT NOT NULL,
    level      TEXT NOT NULL,
    day        TEXT NOT NULL,
    a          TEXT NOT NULL,
    b          TEXT NOT NULL,
    type       TEXT NOT NULL,
    events     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, level, day, a, b, type)
) WITHOUT ROWID;

-- Revenue is exact decimal text, as in conversion_revenue; d0 .. d13 count the click-to-purchase buckets.
CREATE TABLE conversion_level_revenue (
    account_id TEXT NOT NULL,
    level      TEXT NOT NULL,
    day        TEXT NOT NULL,
    a          TEXT NOT NULL,
    b          TEXT NOT NULL,
    currency   TEXT NOT NULL,
    purchases  INTEGER NOT NULL DEFAULT 0,
    revenue    TEXT NOT NULL DEFAULT '0',
    d0 INTEGER NOT NULL DEFAULT 0,
    d1 INTEGER NOT NULL DEFAULT 0,
    d2 INTEGER NOT NULL DEFAULT 0,
    d3 INTEGER NOT NULL DEFAULT 0,
    d4 INTEGER NOT NULL DEFAULT 0,
    d5 INTEGER NOT NULL DEFAULT 0,
    d6 INTEGER NOT NULL DEFAULT 0,
    d7 INTEGER NOT NULL DEFAULT 0,
    d8 INTEGER NOT NULL DEFAULT 0,
    d9 INTEGER NOT NULL DEFAULT 0,
    d10 INTEGER NOT NULL DEFAULT 0,
    d11 INTEGER NOT NULL DEFAULT 0,
    d12 INTEGER NOT NULL DEFAULT 0,
    d13 INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, level, day, a, b, currency)
) WITHOUT ROWID;

-- Filled from the rollups already kept (decimal_sum: the store's exact sum of decimal text).
INSERT INTO conversion_level_clicks (account_id, level, day, a, b, human, bot, visitors, web, app, store)
WITH levels (level, a, b) AS (VALUES
    ('', '', ''),
    ('link_id', 'link_id', ''),
    ('utm_source', 'utm_source', ''),
    ('utm_medium', 'utm_medium', ''),
    ('utm_campaign', 'utm_campaign', ''),
    ('platform', 'platform', ''),
    ('utm_source,utm_medium', 'utm_source', 'utm_medium'),
    ('utm_source,utm_campaign', 'utm_source', 'utm_campaign'),
    ('utm_source,platform', 'utm_source', 'platform'),
    ('utm_medium,utm_campaign', 'utm_medium', 'utm_campaign'),
    ('utm_medium,platform', 'utm_medium', 'platform'),
    ('utm_campaign,platform', 'utm_campaign', 'platform'))
SELECT f.account_id, l.level, f.day, CASE l.a WHEN 'link_id' THEN f.link_id WHEN 'utm_source' THEN f.utm_source WHEN 'utm_medium' THEN f.utm_medium WHEN 'utm_campaign' THEN f.utm_campaign WHEN 'platform' THEN f.platform ELSE '' END,
       CASE l.b WHEN 'link_id' THEN f.link_id WHEN 'utm_source' THEN f.utm_source WHEN 'utm_medium' THEN f.utm_medium WHEN 'utm_campaign' THEN f.utm_campaign WHEN 'platform' THEN f.platform ELSE '' END,
       sum(f.human), sum(f.bot), sum(f.visitors), sum(f.web), sum(f.app), sum(f.store)
FROM conversion_clicks f CROSS JOIN levels l
GROUP BY 1, 2, 3, 4, 5;

INSERT INTO conversion_level_events (account_id, level, day, a, b, type, events)
WITH levels (level, a, b) AS (VALUES
    ('unattributed', '', ''),
    ('', '', ''),
    ('link_id', 'link_id', ''),
    ('utm_source', 'utm_source', ''),
    ('utm_medium', 'utm_medium', ''),
    ('utm_campaign', 'utm_campaign', ''),
    ('platform', 'platform', ''),
    ('utm_source,utm_medium', 'utm_source', 'utm_medium'),
    ('utm_source,utm_campaign', 'utm_source', 'utm_campaign'),
    ('utm_source,platform', 'utm_source', 'platform'),
    ('utm_medium,utm_campaign', 'utm_medium', 'utm_campaign'),
    ('utm_medium,platform', 'utm_medium', 'platform'),
    ('utm_campaign,platform', 'utm_campaign', 'platform'))
SELECT f.account_id, l.level, f.day, CASE l.a WHEN 'link_id' THEN f.link_id WHEN 'utm_source' THEN f.utm_source WHEN 'utm_medium' THEN f.utm_medium WHEN 'utm_campaign' THEN f.utm_campaign WHEN 'platform' THEN f.platform ELSE '' END,
       CASE l.b WHEN 'link_id' THEN f.link_id WHEN 'utm_source' THEN f.utm_source WHEN 'utm_medium' THEN f.utm_medium WHEN 'utm_campaign' THEN f.utm_campaign WHEN 'platform' THEN f.platform ELSE '' END,
       f.type, sum(f.events)
FROM conversion_events f JOIN levels l ON (f.link_id = '') = (l.level = 'unattributed')
GROUP BY 1, 2, 3, 4, 5, 6;

INSERT INTO conversion_level_revenue (account_id, level, day, a, b, currency, purchases, revenue, d0, d1, d2, d3, d4, d5, d6, d7, d8, d9, d10, d11, d12, d13)
WITH levels (level, a, b) AS (VALUES
    ('unattributed', '', ''),
    ('', '', ''),
    ('link_id', 'link_id', ''),
    ('utm_source', 'utm_source', ''),
    ('utm_medium', 'utm_medium', ''),
    ('utm_campaign', 'utm_campaign', ''),
    ('platform', 'platform', ''),
    ('utm_source,utm_medium', 'utm_source', 'utm_medium'),
    ('utm_source,utm_campaign', 'utm_source', 'utm_campaign'),
    ('utm_source,platform', 'utm_source', 'platform'),
    ('utm_medium,utm_campaign', 'utm_medium', 'utm_campaign'),
    ('utm_medium,platform', 'utm_medium', 'platform'),
    ('utm_campaign,platform', 'utm_campaign', 'platform'))
SELECT f.account_id, l.level, f.day, CASE l.a WHEN 'link_id' THEN f.link_id WHEN 'utm_source' THEN f.utm_source WHEN 'utm_medium' THEN f.utm_medium WHEN 'utm_campaign' THEN f.utm_campaign WHEN 'platform' THEN f.platform ELSE '' END,
       CASE l.b WHEN 'link_id' THEN f.link_id WHEN 'utm_source' THEN f.utm_source WHEN 'utm_medium' THEN f.utm_medium WHEN 'utm_campaign' THEN f.utm_campaign WHEN 'platform' THEN f.platform ELSE '' END,
       f.currency, sum(f.purchases), decimal_sum(f.revenue),
       sum(json_extract(f.delays, '$[0]')), sum(json_extract(f.delays, '$[1]')), sum(json_extract(f.delays, '$[2]')), sum(json_extract(f.delays, '$[3]')), sum(json_extract(f.delays, '$[4]')), sum(json_extract(f.delays, '$[5]')), sum(json_extract(f.delays, '$[6]')), sum(json_extract(f.delays, '$[7]')), sum(json_extract(f.delays, '$[8]')), sum(json_extract(f.delays, '$[9]')), sum(json_extract(f.delays, '$[10]')), sum(json_extract(f.delays, '$[11]')), sum(json_extract(f.delays, '$[12]')), sum(json_extract(f.delays, '$[13]'))
FROM conversion_revenue f JOIN levels l ON (f.link_id = '') = (l.level = 'unattributed')
GROUP BY 1, 2, 3, 4, 5, 6;
