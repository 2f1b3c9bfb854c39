-- 0005 = SQLite's 0020 (the conversion report's coarse level): the same tables; revenue is numeric.

CREATE TABLE conversion_level_clicks (
    account_id text COLLATE "C" NOT NULL,
    level      text COLLATE "C" NOT NULL,
    day        text COLLATE "C" NOT NULL,
    a          text COLLATE "C" NOT NULL,
    b          text COLLATE "C" NOT NULL,
    human      bigint NOT NULL DEFAULT 0,
    bot        bigint NOT NULL DEFAULT 0,
    visitors   bigint NOT NULL DEFAULT 0,
    web        bigint NOT NULL DEFAULT 0,
    app        bigint NOT NULL DEFAULT 0,
    store      bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, level, day, a, b)
);

CREATE TABLE conversion_level_events (
    account_id text COLLATE "C" NOT NULL,
    level      text COLLATE "C" NOT NULL,
    day        text COLLATE "C" NOT NULL,
    a          text COLLATE "C" NOT NULL,
    b          text COLLATE "C" NOT NULL,
    type       text COLLATE "C" NOT NULL,
    events     bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, level, day, a, b, type)
);

CREATE TABLE conversion_level_revenue (
    account_id text COLLATE "C" NOT NULL,
    level      text COLLATE "C" NOT NULL,
    day        text COLLATE "C" NOT NULL,
    a          text COLLATE "C" NOT NULL,
    b          text COLLATE "C" NOT NULL,
    currency   text COLLATE "C" NOT NULL,
    purchases  bigint NOT NULL DEFAULT 0,
    revenue    numeric NOT NULL DEFAULT 0,
    d0 bigint NOT NULL DEFAULT 0,
    d1 bigint NOT NULL DEFAULT 0,
    d2 bigint NOT NULL DEFAULT 0,
    d3 bigint NOT NULL DEFAULT 0,
    d4 bigint NOT NULL DEFAULT 0,
    d5 bigint NOT NULL DEFAULT 0,
    d6 bigint NOT NULL DEFAULT 0,
    d7 bigint NOT NULL DEFAULT 0,
    d8 bigint NOT NULL DEFAULT 0,
    d9 bigint NOT NULL DEFAULT 0,
    d10 bigint NOT NULL DEFAULT 0,
    d11 bigint NOT NULL DEFAULT 0,
    d12 bigint NOT NULL DEFAULT 0,
    d13 bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, level, day, a, b, currency)
);

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
       f.currency, sum(f.purchases), sum(f.revenue),
       sum((f.delays ->> 0)::bigint), sum((f.delays ->> 1)::bigint), sum((f.delays ->> 2)::bigint), sum((f.delays ->> 3)::bigint), sum((f.delays ->> 4)::bigint), sum((f.delays ->> 5)::bigint), sum((f.delays ->> 6)::bigint), sum((f.delays ->> 7)::bigint), sum((f.delays ->> 8)::bigint), sum((f.delays ->> 9)::bigint), sum((f.delays ->> 10)::bigint), sum((f.delays ->> 11)::bigint), sum((f.delays ->> 12)::bigint), sum((f.delays ->> 13)::bigint)
FROM conversion_revenue f JOIN levels l ON (f.link_id = '') = (l.level = 'unattributed')
GROUP BY 1, 2, 3, 4, 5, 6;
