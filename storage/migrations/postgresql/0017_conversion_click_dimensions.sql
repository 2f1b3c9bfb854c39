-- 0017 = SQLite's 0032 (issue 34, the conversion report by country, referrer host, rule and variant): each
-- click stores the host of its Referer; the coarse level gains the levels country, referrer_host, rule and the
-- link with the rule and with the variant, filled from the clicks already counted and the events already
-- written, daily then weekly. Revenue is numeric; the host is cut as SQLite's migration cuts it.
ALTER TABLE clicks ADD COLUMN referrer_host text COLLATE "C";

UPDATE clicks SET referrer_host = h.host FROM (
WITH r0 AS (SELECT id, CASE WHEN strpos(referer, '://') > 0 THEN substr(referer, strpos(referer, '://') + 3) END AS h FROM clicks WHERE referer IS NOT NULL),
     r1 AS (SELECT id, CASE WHEN strpos(h, '/') > 0 THEN substr(h, 1, strpos(h, '/') - 1) ELSE h END AS h FROM r0),
     r2 AS (SELECT id, CASE WHEN strpos(h, '?') > 0 THEN substr(h, 1, strpos(h, '?') - 1) ELSE h END AS h FROM r1),
     r3 AS (SELECT id, CASE WHEN strpos(h, '#') > 0 THEN substr(h, 1, strpos(h, '#') - 1) ELSE h END AS h FROM r2),
     r4 AS (SELECT id, substr(h, strpos(h, '@') + 1) AS h FROM r3),
     r5 AS (SELECT id, CASE WHEN strpos(h, ':') > 0 THEN substr(h, 1, strpos(h, ':') - 1) ELSE h END AS h FROM r4)
SELECT id, nullif(lower(h), '') AS host FROM r5) AS h
WHERE clicks.id = h.id AND h.host IS NOT NULL;

-- The coarse level's new levels (storage.conversions.CLICK_LEVELS): country, referrer_host and rule alone, and
-- the link with the rule and with the variant ('' where the click has none). Clicks: those the rollups' pass
-- has counted (up to its mark; the pass counts the others), a visitor counted once per day, link, UTM and platform
-- as before, under the dimensions of their first click there (the lowest id). Events and revenue: through the
-- click their lineage names (its tracking_id and time), the variant from the lineage.
INSERT INTO conversion_level_clicks (account_id, level, period, day, a, b, human, bot, visitors, web, app, store)
WITH c AS (SELECT id, account_id, substr(clicked_at, 1, 10) AS day, link_id, coalesce((utm #>> '{utm_source}'), '') AS utm_source, coalesce((utm #>> '{utm_medium}'), '') AS utm_medium, coalesce((utm #>> '{utm_campaign}'), '') AS utm_campaign, coalesce(platform, '') AS platform, CASE WHEN bot = 0 THEN 1 ELSE 0 END AS human, CASE WHEN bot = 0 THEN 0 ELSE 1 END AS bot, CASE WHEN bot = 0 AND answer IN ('destination', 'fallback') THEN 1 ELSE 0 END AS web, CASE WHEN bot = 0 AND answer IN ('intent', 'deeplink') THEN 1 ELSE 0 END AS app, CASE WHEN bot = 0 AND answer IN ('play', 'app_store', 'landing') THEN 1 ELSE 0 END AS store, CASE WHEN bot = 0 AND visitor <> '' THEN visitor END AS visitor, coalesce(country, '') AS country, coalesce(referrer_host, '') AS referrer_host, coalesce(rule, '') AS rule, coalesce(variant, '') AS variant FROM clicks WHERE link_id <> '' AND id <= coalesce((SELECT counted FROM conversion_click_mark WHERE name = 'clicks'), 0)),
firsts AS (SELECT min(id) AS id FROM c WHERE visitor IS NOT NULL GROUP BY account_id, day, link_id, utm_source, utm_medium, utm_campaign, platform, visitor),
d AS (SELECT c.account_id, c.day, c.link_id, c.country, c.referrer_host, c.rule, c.variant, sum(c.human) AS human, sum(c.bot) AS bot, count(f.id) AS visitors, sum(c.web) AS web, sum(c.app) AS app, sum(c.store) AS store FROM c LEFT JOIN firsts f ON f.id = c.id GROUP BY c.account_id, c.day, c.link_id, c.country, c.referrer_host, c.rule, c.variant),
levels (level, a, b) AS (VALUES
    ('country', 'country', ''),
    ('referrer_host', 'referrer_host', ''),
    ('rule', 'rule', ''),
    ('link_id,rule', 'link_id', 'rule'),
    ('link_id,variant', 'link_id', 'variant'))
SELECT d.account_id, l.level, 'd', d.day, CASE l.a WHEN 'link_id' THEN d.link_id WHEN 'country' THEN d.country WHEN 'referrer_host' THEN d.referrer_host WHEN 'rule' THEN d.rule WHEN 'variant' THEN d.variant ELSE '' END, CASE l.b WHEN 'link_id' THEN d.link_id WHEN 'country' THEN d.country WHEN 'referrer_host' THEN d.referrer_host WHEN 'rule' THEN d.rule WHEN 'variant' THEN d.variant ELSE '' END, sum(d.human), sum(d.bot), sum(d.visitors), sum(d.web), sum(d.app), sum(d.store)
FROM d CROSS JOIN levels l
GROUP BY 1, 2, 3, 4, 5, 6;

INSERT INTO conversion_level_events (account_id, level, period, day, a, b, type, events)
WITH e AS (SELECT e0.account_id, substr(e0.issued_at, 1, 10) AS day, e0.type, coalesce((e0.lineage #>> '{click,link_id}'), '') AS link_id, coalesce((e0.lineage #>> '{click,variant}'), '') AS variant, coalesce(k.country, '') AS country, coalesce(k.referrer_host, '') AS referrer_host, coalesce(k.rule, '') AS rule FROM events e0 LEFT JOIN clicks k ON k.id = (SELECT max(x.id) FROM clicks x WHERE x.account_id = e0.account_id AND x.tracking_id = (e0.lineage #>> '{click,tracking_id}') AND x.clicked_at = (e0.lineage #>> '{click,clicked_at}')) WHERE e0.lineage IS NOT NULL AND (e0.lineage #>> '{click,link_id}') IS NOT NULL),
levels (level, a, b) AS (VALUES
    ('country', 'country', ''),
    ('referrer_host', 'referrer_host', ''),
    ('rule', 'rule', ''),
    ('link_id,rule', 'link_id', 'rule'),
    ('link_id,variant', 'link_id', 'variant'))
SELECT e.account_id, l.level, 'd', e.day, CASE l.a WHEN 'link_id' THEN e.link_id WHEN 'country' THEN e.country WHEN 'referrer_host' THEN e.referrer_host WHEN 'rule' THEN e.rule WHEN 'variant' THEN e.variant ELSE '' END, CASE l.b WHEN 'link_id' THEN e.link_id WHEN 'country' THEN e.country WHEN 'referrer_host' THEN e.referrer_host WHEN 'rule' THEN e.rule WHEN 'variant' THEN e.variant ELSE '' END, e.type, count(*)
FROM e CROSS JOIN levels l
GROUP BY 1, 2, 3, 4, 5, 6, 7;

INSERT INTO conversion_level_revenue (account_id, level, period, day, a, b, currency, purchases, revenue, d0, d1, d2, d3, d4, d5, d6, d7, d8, d9, d10, d11, d12, d13)
WITH e AS (SELECT e1.*, trunc(extract(epoch FROM (e1.issued_at::timestamptz - e1.clicked_at::timestamptz))) AS delay FROM (SELECT e0.account_id, substr(e0.issued_at, 1, 10) AS day, e0.type, coalesce((e0.lineage #>> '{click,link_id}'), '') AS link_id, coalesce((e0.lineage #>> '{click,variant}'), '') AS variant, coalesce(k.country, '') AS country, coalesce(k.referrer_host, '') AS referrer_host, coalesce(k.rule, '') AS rule, coalesce((e0.body ->> 'currency'), '') AS currency, coalesce((e0.body ->> 'value'), '0') AS value, e0.issued_at, (e0.lineage #>> '{click,clicked_at}') AS clicked_at FROM events e0 LEFT JOIN clicks k ON k.id = (SELECT max(x.id) FROM clicks x WHERE x.account_id = e0.account_id AND x.tracking_id = (e0.lineage #>> '{click,tracking_id}') AND x.clicked_at = (e0.lineage #>> '{click,clicked_at}')) WHERE e0.lineage IS NOT NULL AND (e0.lineage #>> '{click,link_id}') IS NOT NULL AND e0.type = 'PURCHASE' AND e0.reversed_at IS NULL) AS e1),
levels (level, a, b) AS (VALUES
    ('country', 'country', ''),
    ('referrer_host', 'referrer_host', ''),
    ('rule', 'rule', ''),
    ('link_id,rule', 'link_id', 'rule'),
    ('link_id,variant', 'link_id', 'variant'))
SELECT e.account_id, l.level, 'd', e.day, CASE l.a WHEN 'link_id' THEN e.link_id WHEN 'country' THEN e.country WHEN 'referrer_host' THEN e.referrer_host WHEN 'rule' THEN e.rule WHEN 'variant' THEN e.variant ELSE '' END, CASE l.b WHEN 'link_id' THEN e.link_id WHEN 'country' THEN e.country WHEN 'referrer_host' THEN e.referrer_host WHEN 'rule' THEN e.rule WHEN 'variant' THEN e.variant ELSE '' END, e.currency, count(*), sum(e.value::numeric), sum(CASE WHEN e.delay <= 60 THEN 1 ELSE 0 END), sum(CASE WHEN e.delay > 60 AND e.delay <= 300 THEN 1 ELSE 0 END), sum(CASE WHEN e.delay > 300 AND e.delay <= 900 THEN 1 ELSE 0 END), sum(CASE WHEN e.delay > 900 AND e.delay <= 3600 THEN 1 ELSE 0 END), sum(CASE WHEN e.delay > 3600 AND e.delay <= 10800 THEN 1 ELSE 0 END), sum(CASE WHEN e.delay > 10800 AND e.delay <= 21600 THEN 1 ELSE 0 END), sum(CASE WHEN e.delay > 21600 AND e.delay <= 43200 THEN 1 ELSE 0 END), sum(CASE WHEN e.delay > 43200 AND e.delay <= 86400 THEN 1 ELSE 0 END), sum(CASE WHEN e.delay > 86400 AND e.delay <= 172800 THEN 1 ELSE 0 END), sum(CASE WHEN e.delay > 172800 AND e.delay <= 259200 THEN 1 ELSE 0 END), sum(CASE WHEN e.delay > 259200 AND e.delay <= 604800 THEN 1 ELSE 0 END), sum(CASE WHEN e.delay > 604800 AND e.delay <= 1209600 THEN 1 ELSE 0 END), sum(CASE WHEN e.delay > 1209600 AND e.delay <= 2592000 THEN 1 ELSE 0 END), sum(CASE WHEN e.delay > 2592000 THEN 1 ELSE 0 END)
FROM e CROSS JOIN levels l
GROUP BY 1, 2, 3, 4, 5, 6, 7;

INSERT INTO conversion_level_clicks (account_id, level, period, day, a, b, human, bot, visitors, web, app, store)
SELECT account_id, level, 'w', to_char((day::date - (extract(isodow FROM day::date)::int - 1))::timestamp, 'YYYY-MM-DD'), a, b, sum(human), sum(bot), sum(visitors), sum(web), sum(app), sum(store)
FROM conversion_level_clicks WHERE period = 'd' AND level IN ('country', 'referrer_host', 'rule', 'link_id,rule', 'link_id,variant')
GROUP BY 1, 2, 3, 4, 5, 6;

INSERT INTO conversion_level_events (account_id, level, period, day, a, b, type, events)
SELECT account_id, level, 'w', to_char((day::date - (extract(isodow FROM day::date)::int - 1))::timestamp, 'YYYY-MM-DD'), a, b, type, sum(events)
FROM conversion_level_events WHERE period = 'd' AND level IN ('country', 'referrer_host', 'rule', 'link_id,rule', 'link_id,variant')
GROUP BY 1, 2, 3, 4, 5, 6, 7;

INSERT INTO conversion_level_revenue (account_id, level, period, day, a, b, currency, purchases, revenue, d0, d1, d2, d3, d4, d5, d6, d7, d8, d9, d10, d11, d12, d13)
SELECT account_id, level, 'w', to_char((day::date - (extract(isodow FROM day::date)::int - 1))::timestamp, 'YYYY-MM-DD'), a, b, currency, sum(purchases), sum(revenue), sum(d0), sum(d1), sum(d2), sum(d3), sum(d4), sum(d5), sum(d6), sum(d7), sum(d8), sum(d9), sum(d10), sum(d11), sum(d12), sum(d13)
FROM conversion_level_revenue WHERE period = 'd' AND level IN ('country', 'referrer_host', 'rule', 'link_id,rule', 'link_id,variant')
GROUP BY 1, 2, 3, 4, 5, 6, 7;
