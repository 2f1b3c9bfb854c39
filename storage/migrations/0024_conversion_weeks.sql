-- The conversion report's coarse level, all of it (docs/decisions.md, "Conversion report and attribution
-- lineage"): the link with each UTM field and with the platform are levels too (then every grouping of one or
-- two dimensions reads the coarse level, never the fine rollups), and every level has weekly rows beside its
-- daily ones. `period` is 'd' for a day's row and 'w' for an ISO week's, whose `day` is the week's Monday and
-- whose figures are the sum of that week's daily rows; it comes before `day` in the key, so that a report reads
-- one range of the key per period. Kept by the same writers in the same transaction. The tables are rebuilt
-- with the new key (the rows they hold are daily), then the new rows are filled from the rollups already kept.

ALTER TABLE conversion_level_clicks RENAME TO conversion_level_clicks_0023;

CREATE TABLE conversion_level_clicks (
    account_id TEXT NOT NULL,
    level      TEXT NOT NULL,
    period     TEXT NOT NULL DEFAULT 'd',
    day        TEXT NOT NULL,
    a          TEXT NOT NULL,
    b          TEXT NOT NULL,
    human      INTEGER NOT NULL DEFAULT 0,
    bot        INTEGER NOT NULL DEFAULT 0,
    visitors   INTEGER NOT NULL DEFAULT 0,
    web        INTEGER NOT NULL DEFAULT 0,
    app        INTEGER NOT NULL DEFAULT 0,
    store      INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, level, period, day, a, b)
) WITHOUT ROWID;

INSERT INTO conversion_level_clicks (account_id, level, period, day, a, b, human, bot, visitors, web, app, store)
SELECT account_id, level, 'd', day, a, b, human, bot, visitors, web, app, store
FROM conversion_level_clicks_0023;
DROP TABLE conversion_level_clicks_0023;

ALTER TABLE conversion_level_events RENAME TO conversion_level_events_0023;

CREATE TABLE conversion_level_events (
    account_id TEXT NOT NULL,
    level      TEXT NOT NULL,
    period     TEXT NOT NULL DEFAULT 'd',
    day        TEXT NOT NULL,
    a          TEXT NOT NULL,
    b          TEXT NOT NULL,
    type       TEXT NOT NULL,
    events     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, level, period, day, a, b, type)
) WITHOUT ROWID;

INSERT INTO conversion_level_events (account_id, level, period, day, a, b, type, events)
SELECT account_id, level, 'd', day, a, b, type, events
FROM conversion_level_events_0023;
DROP TABLE conversion_level_events_0023;

ALTER TABLE conversion_level_revenue RENAME TO conversion_level_revenue_0023;

CREATE TABLE conversion_level_revenue (
    account_id TEXT NOT NULL,
    level      TEXT NOT NULL,
    period     TEXT NOT NULL DEFAULT 'd',
    day        TEXT NOT NULL,
    a          TEXT NOT NULL,
    b          TEXT NOT NULL,
    currency   TEXT NOT NULL,
    purchases  INTEGER NOT NULL DEFAULT 0,
    revenue    TEXT NOT NULL DEFAULT '0',
    d0         INTEGER NOT NULL DEFAULT 0,
    d1         INTEGER NOT NULL DEFAULT 0,
    d2         INTEGER NOT NULL DEFAULT 0,
    d3         INTEGER NOT NULL DEFAULT 0,
    d4         INTEGER NOT NULL DEFAULT 0,
    d5         INTEGER NOT NULL DEFAULT 0,
    d6         INTEGER NOT NULL DEFAULT 0,
    d7         INTEGER NOT NULL DEFAULT 0,
    d8         INTEGER NOT NULL DEFAULT 0,
    d9         INTEGER NOT NULL DEFAULT 0,
    d10        INTEGER NOT NULL DEFAULT 0,
    d11        INTEGER NOT NULL DEFAULT 0,
    d12        INTEGER NOT NULL DEFAULT 0,
    d13        INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, level, period, day, a, b, currency)
) WITHOUT ROWID;

INSERT INTO conversion_level_revenue (account_id, level, period, day, a, b, currency, purchases, revenue, d0, d1, d2, d3, d4, d5, d6, d7, d8, d9, d10, d11, d12, d13)
SELECT account_id, level, 'd', day, a, b, currency, purchases, revenue, d0, d1, d2, d3, d4, d5, d6, d7, d8, d9, d10, d11, d12, d13
FROM conversion_level_revenue_0023;
DROP TABLE conversion_level_revenue_0023;

-- Filled from the rollups already kept: first the daily rows of the link pairs from the fine rollups, then
-- the weekly rows of every level from the daily ones (decimal_sum: the store's exact sum of decimal text).
INSERT INTO conversion_level_clicks (account_id, level, period, day, a, b, human, bot, visitors, web, app, store)
WITH levels (level, b) AS (VALUES
    ('link_id,utm_source', 'utm_source'),
    ('link_id,utm_medium', 'utm_medium'),
    ('link_id,utm_campaign', 'utm_campaign'),
    ('link_id,platform', 'platform'))
SELECT f.account_id, l.level, 'd', f.day, f.link_id, CASE l.b WHEN 'utm_source' THEN f.utm_source WHEN 'utm_medium' THEN f.utm_medium WHEN 'utm_campaign' THEN f.utm_campaign ELSE f.platform END,
       sum(f.human), sum(f.bot), sum(f.visitors), sum(f.web), sum(f.app), sum(f.store)
FROM conversion_clicks f CROSS JOIN levels l
GROUP BY 1, 2, 3, 4, 5, 6;

INSERT INTO conversion_level_events (account_id, level, period, day, a, b, type, events)
WITH levels (level, b) AS (VALUES
    ('link_id,utm_source', 'utm_source'),
    ('link_id,utm_medium', 'utm_medium'),
    ('link_id,utm_campaign', 'utm_campaign'),
    ('link_id,platform', 'platform'))
SELECT f.account_id, l.level, 'd', f.day, f.link_id, CASE l.b WHEN 'utm_source' THEN f.utm_source WHEN 'utm_medium' THEN f.utm_medium WHEN 'utm_campaign' THEN f.utm_campaign ELSE f.platform END,
       f.type, sum(f.events)
FROM conversion_events f CROSS JOIN levels l
WHERE f.link_id <> ''
GROUP BY 1, 2, 3, 4, 5, 6, 7;

INSERT INTO conversion_level_revenue (account_id, level, period, day, a, b, currency, purchases, revenue, d0, d1, d2, d3, d4, d5, d6, d7, d8, d9, d10, d11, d12, d13)
WITH levels (level, b) AS (VALUES
    ('link_id,utm_source', 'utm_source'),
    ('link_id,utm_medium', 'utm_medium'),
    ('link_id,utm_campaign', 'utm_campaign'),
    ('link_id,platform', 'platform'))
SELECT f.account_id, l.level, 'd', f.day, f.link_id, CASE l.b WHEN 'utm_source' THEN f.utm_source WHEN 'utm_medium' THEN f.utm_medium WHEN 'utm_campaign' THEN f.utm_campaign ELSE f.platform END,
       f.currency, sum(f.purchases), decimal_sum(f.revenue), sum(json_extract(f.delays, '$[0]')), sum(json_extract(f.delays, '$[1]')), sum(json_extract(f.delays, '$[2]')), sum(json_extract(f.delays, '$[3]')), sum(json_extract(f.delays, '$[4]')), sum(json_extract(f.delays, '$[5]')), sum(json_extract(f.delays, '$[6]')), sum(json_extract(f.delays, '$[7]')), sum(json_extract(f.delays, '$[8]')), sum(json_extract(f.delays, '$[9]')), sum(json_extract(f.delays, '$[10]')), sum(json_extract(f.delays, '$[11]')), sum(json_extract(f.delays, '$[12]')), sum(json_extract(f.delays, '$[13]'))
FROM conversion_revenue f CROSS JOIN levels l
WHERE f.link_id <> ''
GROUP BY 1, 2, 3, 4, 5, 6, 7;

INSERT INTO conversion_level_clicks (account_id, level, period, day, a, b, human, bot, visitors, web, app, store)
SELECT account_id, level, 'w', date(day, 'weekday 0', '-6 days'), a, b, sum(human), sum(bot), sum(visitors), sum(web), sum(app), sum(store)
FROM conversion_level_clicks WHERE period = 'd'
GROUP BY 1, 2, 3, 4, 5, 6;

INSERT INTO conversion_level_events (account_id, level, period, day, a, b, type, events)
SELECT account_id, level, 'w', date(day, 'weekday 0', '-6 days'), a, b, type, sum(events)
FROM conversion_level_events WHERE period = 'd'
GROUP BY 1, 2, 3, 4, 5, 6, 7;

INSERT INTO conversion_level_revenue (account_id, level, period, day, a, b, currency, purchases, revenue, d0, d1, d2, d3, d4, d5, d6, d7, d8, d9, d10, d11, d12, d13)
SELECT account_id, level, 'w', date(day, 'weekday 0', '-6 days'), a, b, currency, sum(purchases), decimal_sum(revenue), sum(d0), sum(d1), sum(d2), sum(d3), sum(d4), sum(d5), sum(d6), sum(d7), sum(d8), sum(d9), sum(d10), sum(d11), sum(d12), sum(d13)
FROM conversion_level_revenue WHERE period = 'd'
GROUP BY 1, 2, 3, 4, 5, 6, 7;
