-- 0025 = SQLite's 0040 (issue 34): the clicks' coarse level keeps no '' rows for the rule alone, the link with
-- its rule and the link with its variant (the clicks no rule or no variant sent). They were the day's or the
-- link's rows again, one more row per click and link on clicks spread over many links; a report reads them as
-- those totals less what the rules and variants sent (storage.conversions.EMPTY_FROM). Events and revenue keep
-- theirs.
DELETE FROM conversion_level_clicks
WHERE (level = 'rule' AND a = '') OR (level IN ('link_id,rule', 'link_id,variant') AND b = '');
