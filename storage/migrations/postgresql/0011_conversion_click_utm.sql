-- 0011 = SQLite 0026: The conversion report groups an event by the UTM of the click behind its tracking_id
-- (docs/decisions.md, "Reports and bounded answers"): the writers now key the coarse level's events and revenue
-- by the click's UTM (the fine rollups keep the event's own, which the report reads with utm_from=event). The
-- levels holding a UTM field are rebuilt from the events themselves: each counted event's stored lineage names
-- its click (link, platform, clicked_at) and the click's UTM; purchases not reversed add their revenue (exact)
-- and their time from click to purchase (whole seconds, truncated, in the buckets of storage.conversions). Then
-- their weekly rows from the daily ones. The other levels do not depend on the UTM and are kept as they are.

DELETE FROM conversion_level_events WHERE level IN ('utm_source', 'utm_medium', 'utm_campaign', 'utm_source,utm_medium', 'utm_source,utm_campaign', 'utm_source,platform', 'utm_medium,utm_campaign', 'utm_medium,platform', 'utm_campaign,platform', 'link_id,utm_source', 'link_id,utm_medium', 'link_id,utm_campaign');

DELETE FROM conversion_level_revenue WHERE level IN ('utm_source', 'utm_medium', 'utm_campaign', 'utm_source,utm_medium', 'utm_source,utm_campaign', 'utm_source,platform', 'utm_medium,utm_campaign', 'utm_medium,platform', 'utm_campaign,platform', 'link_id,utm_source', 'link_id,utm_medium', 'link_id,utm_campaign');

-- Filled from the events and their lineage.
INSERT INTO conversion_level_events (account_id, level, period, day, a, b, type, events)
WITH e AS (SELECT account_id, substr(issued_at, 1, 10) AS day, type, reversed_at, coalesce((lineage #>> '{click,link_id}'), '') AS link_id, coalesce((lineage #>> '{click,platform}'), '') AS platform, coalesce((lineage #>> '{utm_source,click,value}'), '') AS utm_source, coalesce((lineage #>> '{utm_medium,click,value}'), '') AS utm_medium, coalesce((lineage #>> '{utm_campaign,click,value}'), '') AS utm_campaign, coalesce((body ->> 'currency'), '') AS currency, coalesce((body ->> 'value'), '0') AS value FROM events WHERE lineage IS NOT NULL AND (lineage #>> '{click,link_id}') IS NOT NULL),
levels (level, a, b) AS (VALUES
    ('utm_source', 'utm_source', ''),
    ('utm_medium', 'utm_medium', ''),
    ('utm_campaign', 'utm_campaign', ''),
    ('utm_source,utm_medium', 'utm_source', 'utm_medium'),
    ('utm_source,utm_campaign', 'utm_source', 'utm_campaign'),
    ('utm_source,platform', 'utm_source', 'platform'),
    ('utm_medium,utm_campaign', 'utm_medium', 'utm_campaign'),
    ('utm_medium,platform', 'utm_medium', 'platform'),
    ('utm_campaign,platform', 'utm_campaign', 'platform'),
    ('link_id,utm_source', 'link_id', 'utm_source'),
    ('link_id,utm_medium', 'link_id', 'utm_medium'),
    ('link_id,utm_campaign', 'link_id', 'utm_campaign'))
SELECT e.account_id, l.level, 'd', e.day, CASE l.a WHEN 'link_id' THEN e.link_id WHEN 'utm_source' THEN e.utm_source WHEN 'utm_medium' THEN e.utm_medium WHEN 'utm_campaign' THEN e.utm_campaign WHEN 'platform' THEN e.platform ELSE '' END, CASE l.b WHEN 'link_id' THEN e.link_id WHEN 'utm_source' THEN e.utm_source WHEN 'utm_medium' THEN e.utm_medium WHEN 'utm_campaign' THEN e.utm_campaign WHEN 'platform' THEN e.platform ELSE '' END, e.type, count(*)
FROM e CROSS JOIN levels l
GROUP BY 1, 2, 3, 4, 5, 6, 7;

INSERT INTO conversion_level_revenue (account_id, level, period, day, a, b, currency, purchases, revenue, d0, d1, d2, d3, d4, d5, d6, d7, d8, d9, d10, d11, d12, d13)
WITH e AS (SELECT e0.*, trunc(extract(epoch FROM (e0.issued_at::timestamptz - (e0.lineage #>> '{click,clicked_at}')::timestamptz))) AS delay FROM (SELECT account_id, substr(issued_at, 1, 10) AS day, type, reversed_at, coalesce((lineage #>> '{click,link_id}'), '') AS link_id, coalesce((lineage #>> '{click,platform}'), '') AS platform, coalesce((lineage #>> '{utm_source,click,value}'), '') AS utm_source, coalesce((lineage #>> '{utm_medium,click,value}'), '') AS utm_medium, coalesce((lineage #>> '{utm_campaign,click,value}'), '') AS utm_campaign, coalesce((body ->> 'currency'), '') AS currency, coalesce((body ->> 'value'), '0') AS value, issued_at, lineage FROM events WHERE lineage IS NOT NULL AND (lineage #>> '{click,link_id}') IS NOT NULL AND type = 'PURCHASE' AND reversed_at IS NULL) AS e0),
levels (level, a, b) AS (VALUES
    ('utm_source', 'utm_source', ''),
    ('utm_medium', 'utm_medium', ''),
    ('utm_campaign', 'utm_campaign', ''),
    ('utm_source,utm_medium', 'utm_source', 'utm_medium'),
    ('utm_source,utm_campaign', 'utm_source', 'utm_campaign'),
    ('utm_source,platform', 'utm_source', 'platform'),
    ('utm_medium,utm_campaign', 'utm_medium', 'utm_campaign'),
    ('utm_medium,platform', 'utm_medium', 'platform'),
    ('utm_campaign,platform', 'utm_campaign', 'platform'),
    ('link_id,utm_source', 'link_id', 'utm_source'),
    ('link_id,utm_medium', 'link_id', 'utm_medium'),
    ('link_id,utm_campaign', 'link_id', 'utm_campaign'))
SELECT e.account_id, l.level, 'd', e.day, CASE l.a WHEN 'link_id' THEN e.link_id WHEN 'utm_source' THEN e.utm_source WHEN 'utm_medium' THEN e.utm_medium WHEN 'utm_campaign' THEN e.utm_campaign WHEN 'platform' THEN e.platform ELSE '' END, CASE l.b WHEN 'link_id' THEN e.link_id WHEN 'utm_source' THEN e.utm_source WHEN 'utm_medium' THEN e.utm_medium WHEN 'utm_campaign' THEN e.utm_campaign WHEN 'platform' THEN e.platform ELSE '' END, e.currency, count(*), sum(e.value::numeric), sum(CASE WHEN e.delay <= 60 THEN 1 ELSE 0 END), sum(CASE WHEN e.delay > 60 AND e.delay <= 300 THEN 1 ELSE 0 END), sum(CASE WHEN e.delay > 300 AND e.delay <= 900 THEN 1 ELSE 0 END), sum(CASE WHEN e.delay > 900 AND e.delay <= 3600 THEN 1 ELSE 0 END), sum(CASE WHEN e.delay > 3600 AND e.delay <= 10800 THEN 1 ELSE 0 END), sum(CASE WHEN e.delay > 10800 AND e.delay <= 21600 THEN 1 ELSE 0 END), sum(CASE WHEN e.delay > 21600 AND e.delay <= 43200 THEN 1 ELSE 0 END), sum(CASE WHEN e.delay > 43200 AND e.delay <= 86400 THEN 1 ELSE 0 END), sum(CASE WHEN e.delay > 86400 AND e.delay <= 172800 THEN 1 ELSE 0 END), sum(CASE WHEN e.delay > 172800 AND e.delay <= 259200 THEN 1 ELSE 0 END), sum(CASE WHEN e.delay > 259200 AND e.delay <= 604800 THEN 1 ELSE 0 END), sum(CASE WHEN e.delay > 604800 AND e.delay <= 1209600 THEN 1 ELSE 0 END), sum(CASE WHEN e.delay > 1209600 AND e.delay <= 2592000 THEN 1 ELSE 0 END), sum(CASE WHEN e.delay > 2592000 THEN 1 ELSE 0 END)
FROM e CROSS JOIN levels l
GROUP BY 1, 2, 3, 4, 5, 6, 7;

INSERT INTO conversion_level_events (account_id, level, period, day, a, b, type, events)
SELECT account_id, level, 'w', to_char((day::date - (extract(isodow FROM day::date)::int - 1))::timestamp, 'YYYY-MM-DD'), a, b, type, sum(events)
FROM conversion_level_events WHERE period = 'd' AND level IN ('utm_source', 'utm_medium', 'utm_campaign', 'utm_source,utm_medium', 'utm_source,utm_campaign', 'utm_source,platform', 'utm_medium,utm_campaign', 'utm_medium,platform', 'utm_campaign,platform', 'link_id,utm_source', 'link_id,utm_medium', 'link_id,utm_campaign')
GROUP BY 1, 2, 3, 4, 5, 6, 7;

INSERT INTO conversion_level_revenue (account_id, level, period, day, a, b, currency, purchases, revenue, d0, d1, d2, d3, d4, d5, d6, d7, d8, d9, d10, d11, d12, d13)
SELECT account_id, level, 'w', to_char((day::date - (extract(isodow FROM day::date)::int - 1))::timestamp, 'YYYY-MM-DD'), a, b, currency, sum(purchases), sum(revenue), sum(d0), sum(d1), sum(d2), sum(d3), sum(d4), sum(d5), sum(d6), sum(d7), sum(d8), sum(d9), sum(d10), sum(d11), sum(d12), sum(d13)
FROM conversion_level_revenue WHERE period = 'd' AND level IN ('utm_source', 'utm_medium', 'utm_campaign', 'utm_source,utm_medium', 'utm_source,utm_campaign', 'utm_source,platform', 'utm_medium,utm_campaign', 'utm_medium,platform', 'utm_campaign,platform', 'link_id,utm_source', 'link_id,utm_medium', 'link_id,utm_campaign')
GROUP BY 1, 2, 3, 4, 5, 6, 7;
