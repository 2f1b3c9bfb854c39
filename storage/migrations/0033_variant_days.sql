-- Issue 34, the variant report for a range of days (docs/decisions.md, "A/B split (issue 34)"): its rollups are
-- kept per day instead of for all time. Clicks by the day they were taken (UTC), purchases by the day they were
-- issued (UTC), as the conversion report counts them; a report of all time adds up every day. The rollup pass
-- behind the mark (storage.conversions.roll_up_clicks) adds clicks, the event batch and reversals purchases.
CREATE TABLE conversion_variant_days (
    account_id TEXT NOT NULL,
    link_id    TEXT NOT NULL,
    variant    TEXT NOT NULL,
    day        TEXT NOT NULL,  -- YYYY-MM-DD
    human      INTEGER NOT NULL DEFAULT 0,
    bot        INTEGER NOT NULL DEFAULT 0,
    visitors   INTEGER NOT NULL DEFAULT 0,  -- visitors (daily salted hashes) first counted on this day
    PRIMARY KEY (account_id, link_id, variant, day)
) WITHOUT ROWID;

CREATE TABLE conversion_variant_day_revenue (
    account_id TEXT NOT NULL,
    link_id    TEXT NOT NULL,
    variant    TEXT NOT NULL,
    day        TEXT NOT NULL,
    currency   TEXT NOT NULL,
    purchases  INTEGER NOT NULL DEFAULT 0,
    revenue    TEXT NOT NULL DEFAULT '0',
    PRIMARY KEY (account_id, link_id, variant, day, currency)
) WITHOUT ROWID;

-- Filled from what the all-time rows were made of. The clicks the pass has counted (up to the mark): each visitor
-- on the day of its first click (conversion_variant_visitors holds who was counted, and stays as it is).
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

-- The purchases whose click went to a variant (the event's lineage names it), not reversed, with their exact
-- revenue.
INSERT INTO conversion_variant_day_revenue (account_id, link_id, variant, day, currency, purchases, revenue)
SELECT account_id, json_extract(lineage, '$.click.link_id'), json_extract(lineage, '$.click.variant'),
       substr(issued_at, 1, 10), coalesce(json_extract(body, '$.currency'), ''), count(*),
       decimal_sum(coalesce(json_extract(body, '$.value'), '0'))
FROM events
WHERE type = 'PURCHASE' AND reversed_at IS NULL AND lineage IS NOT NULL
  AND json_extract(lineage, '$.click.link_id') IS NOT NULL AND json_extract(lineage, '$.click.variant') IS NOT NULL
GROUP BY 1, 2, 3, 4, 5;

DROP TABLE conversion_variant_clicks;
DROP TABLE conversion_variant_revenue;
