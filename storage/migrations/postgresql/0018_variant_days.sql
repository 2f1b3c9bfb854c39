-- 0018 = SQLite's 0033 (issue 34): the variant report's rollups per day, filled from the clicks counted and the
-- purchases not reversed; the all-time tables go. Revenue is numeric.
CREATE TABLE conversion_variant_days (
    account_id text COLLATE "C" NOT NULL,
    link_id    text COLLATE "C" NOT NULL,
    variant    text COLLATE "C" NOT NULL,
    day        text COLLATE "C" NOT NULL,
    human      bigint NOT NULL DEFAULT 0,
    bot        bigint NOT NULL DEFAULT 0,
    visitors   bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, link_id, variant, day)
);

CREATE TABLE conversion_variant_day_revenue (
    account_id text COLLATE "C" NOT NULL,
    link_id    text COLLATE "C" NOT NULL,
    variant    text COLLATE "C" NOT NULL,
    day        text COLLATE "C" NOT NULL,
    currency   text COLLATE "C" NOT NULL,
    purchases  bigint NOT NULL DEFAULT 0,
    revenue    numeric NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, link_id, variant, day, currency)
);

INSERT INTO conversion_variant_days (account_id, link_id, variant, day, human, bot, visitors)
WITH counted AS (SELECT account_id, link_id, variant, substr(clicked_at, 1, 10) AS day, bot, visitor FROM clicks
                 WHERE variant IS NOT NULL
                   AND id <= coalesce((SELECT counted FROM conversion_click_mark WHERE name = 'clicks'), 0)),
firsts AS (SELECT account_id, link_id, variant, visitor, min(day) AS day FROM counted
           WHERE bot = 0 AND visitor IS NOT NULL AND visitor <> '' GROUP BY account_id, link_id, variant, visitor),
added AS (SELECT account_id, link_id, variant, day, CASE WHEN bot = 0 THEN 1 ELSE 0 END AS human,
                 CASE WHEN bot = 0 THEN 0 ELSE 1 END AS bot, 0 AS visitors FROM counted
          UNION ALL SELECT account_id, link_id, variant, day, 0, 0, 1 FROM firsts)
SELECT account_id, link_id, variant, day, sum(human), sum(bot), sum(visitors) FROM added
GROUP BY account_id, link_id, variant, day;

INSERT INTO conversion_variant_day_revenue (account_id, link_id, variant, day, currency, purchases, revenue)
SELECT account_id, lineage #>> '{click,link_id}', lineage #>> '{click,variant}', substr(issued_at, 1, 10),
       coalesce(body ->> 'currency', ''), count(*), sum(coalesce(body ->> 'value', '0')::numeric)
FROM events
WHERE type = 'PURCHASE' AND reversed_at IS NULL AND lineage IS NOT NULL
  AND (lineage #>> '{click,link_id}') IS NOT NULL AND (lineage #>> '{click,variant}') IS NOT NULL
GROUP BY 1, 2, 3, 4, 5;

DROP TABLE conversion_variant_clicks;
DROP TABLE conversion_variant_revenue;
