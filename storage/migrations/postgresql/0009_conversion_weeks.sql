-- 0009 = SQLite's 0024 (the coarse level's link pairs and weekly rows): the same tables rebuilt with their
-- period; revenue is numeric.

ALTER TABLE conversion_level_clicks RENAME TO conversion_level_clicks_0008;
ALTER TABLE conversion_level_clicks_0008 RENAME CONSTRAINT conversion_level_clicks_pkey TO conversion_level_clicks_0008_pkey;

CREATE TABLE conversion_level_clicks (
    account_id text COLLATE "C" NOT NULL,
    level      text COLLATE "C" NOT NULL,
    period     text COLLATE "C" NOT NULL DEFAULT 'd',
    day        text COLLATE "C" NOT NULL,
    a          text COLLATE "C" NOT NULL,
    b          text COLLATE "C" NOT NULL,
    human      bigint NOT NULL DEFAULT 0,
    bot        bigint NOT NULL DEFAULT 0,
    visitors   bigint NOT NULL DEFAULT 0,
    web        bigint NOT NULL DEFAULT 0,
    app        bigint NOT NULL DEFAULT 0,
    store      bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, level, period, day, a, b)
);

INSERT INTO conversion_level_clicks (account_id, level, period, day, a, b, human, bot, visitors, web, app, store)
SELECT account_id, level, 'd', day, a, b, human, bot, visitors, web, app, store
FROM conversion_level_clicks_0008;
DROP TABLE conversion_level_clicks_0008;

ALTER TABLE conversion_level_events RENAME TO conversion_level_events_0008;
ALTER TABLE conversion_level_events_0008 RENAME CONSTRAINT conversion_level_events_pkey TO conversion_level_events_0008_pkey;

CREATE TABLE conversion_level_events (
    account_id text COLLATE "C" NOT NULL,
    level      text COLLATE "C" NOT NULL,
    period     text COLLATE "C" NOT NULL DEFAULT 'd',
    day        text COLLATE "C" NOT NULL,
    a          text COLLATE "C" NOT NULL,
    b          text COLLATE "C" NOT NULL,
    type       text COLLATE "C" NOT NULL,
    events     bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, level, period, day, a, b, type)
);

INSERT INTO conversion_level_events (account_id, level, period, day, a, b, type, events)
SELECT account_id, level, 'd', day, a, b, type, events
FROM conversion_level_events_0008;
DROP TABLE conversion_level_events_0008;

ALTER TABLE conversion_level_revenue RENAME TO conversion_level_revenue_0008;
ALTER TABLE conversion_level_revenue_0008 RENAME CONSTRAINT conversion_level_revenue_pkey TO conversion_level_revenue_0008_pkey;

CREATE TABLE conversion_level_revenue (
    account_id text COLLATE "C" NOT NULL,
    level      text COLLATE "C" NOT NULL,
    period     text COLLATE "C" NOT NULL DEFAULT 'd',
    day        text COLLATE "C" NOT NULL,
    a          text COLLATE "C" NOT NULL,
    b          text COLLATE "C" NOT NULL,
    currency   text COLLATE "C" NOT NULL,
    purchases  bigint NOT NULL DEFAULT 0,
    revenue    numeric NOT NULL DEFAULT 0,
    d0         bigint NOT NULL DEFAULT 0,
    d1         bigint NOT NULL DEFAULT 0,
    d2         bigint NOT NULL DEFAULT 0,
    d3         bigint NOT NULL DEFAULT 0,
    d4         bigint NOT NULL DEFAULT 0,
    d5         bigint NOT NULL DEFAULT 0,
    d6         bigint NOT NULL DEFAULT 0,
    d7         bigint NOT NULL DEFAULT 0,
    d8         bigint NOT NULL DEFAULT 0,
    d9         bigint NOT NULL DEFAULT 0,
    d10        bigint NOT NULL DEFAULT 0,
    d11        bigint NOT NULL DEFAULT 0,
    d12        bigint NOT NULL DEFAULT 0,
    d13        bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, level, period, day, a, b, currency)
);

INSERT INTO conversion_level_revenue (account_id, level, period, day, a, b, currency, purchases, revenue, d0, d1, d2, d3, d4, d5, d6, d7, d8, d9, d10, d11, d12, d13)
SELECT account_id, level, 'd', day, a, b, currency, purchases, revenue, d0, d1, d2, d3, d4, d5, d6, d7, d8, d9, d10, d11, d12, d13
FROM conversion_level_revenue_0008;
DROP TABLE conversion_level_revenue_0008;

-- Filled from the rollups already kept: first the daily rows of the link pairs from the fine rollups, then
-- the weekly rows of every level from the daily ones.
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
       f.currency, sum(f.purchases), sum(f.revenue), sum((f.delays ->> 0)::bigint), sum((f.delays ->> 1)::bigint), sum((f.delays ->> 2)::bigint), sum((f.delays ->> 3)::bigint), sum((f.delays ->> 4)::bigint), sum((f.delays ->> 5)::bigint), sum((f.delays ->> 6)::bigint), sum((f.delays ->> 7)::bigint), sum((f.delays ->> 8)::bigint), sum((f.delays ->> 9)::bigint), sum((f.delays ->> 10)::bigint), sum((f.delays ->> 11)::bigint), sum((f.delays ->> 12)::bigint), sum((f.delays ->> 13)::bigint)
FROM conversion_revenue f CROSS JOIN levels l
WHERE f.link_id <> ''
GROUP BY 1, 2, 3, 4, 5, 6, 7;

INSERT INTO conversion_level_clicks (account_id, level, period, day, a, b, human, bot, visitors, web, app, store)
SELECT account_id, level, 'w', to_char((day::date - (extract(isodow FROM day::date)::int - 1))::timestamp, 'YYYY-MM-DD'), a, b, sum(human), sum(bot), sum(visitors), sum(web), sum(app), sum(store)
FROM conversion_level_clicks WHERE period = 'd'
GROUP BY 1, 2, 3, 4, 5, 6;

INSERT INTO conversion_level_events (account_id, level, period, day, a, b, type, events)
SELECT account_id, level, 'w', to_char((day::date - (extract(isodow FROM day::date)::int - 1))::timestamp, 'YYYY-MM-DD'), a, b, type, sum(events)
FROM conversion_level_events WHERE period = 'd'
GROUP BY 1, 2, 3, 4, 5, 6, 7;

INSERT INTO conversion_level_revenue (account_id, level, period, day, a, b, currency, purchases, revenue, d0, d1, d2, d3, d4, d5, d6, d7, d8, d9, d10, d11, d12, d13)
SELECT account_id, level, 'w', to_char((day::date - (extract(isodow FROM day::date)::int - 1))::timestamp, 'YYYY-MM-DD'), a, b, currency, sum(purchases), sum(revenue), sum(d0), sum(d1), sum(d2), sum(d3), sum(d4), sum(d5), sum(d6), sum(d7), sum(d8), sum(d9), sum(d10), sum(d11), sum(d12), sum(d13)
FROM conversion_level_revenue WHERE period = 'd'
GROUP BY 1, 2, 3, 4, 5, 6, 7;
