-- Issue 34, A/B split (docs/decisions.md, "A/B split (issue 34)"): each click records the variant of its link's
-- split it was sent to (NULL for a link without variants, and for every click stored before).
ALTER TABLE clicks ADD COLUMN variant TEXT;

-- The variant report's rollups, per link and variant (all time). Clicks are added by the clicks' rollup pass
-- behind the mark (storage.conversions.roll_up_clicks), purchases by the event batch and reversals, from the
-- click behind the purchase's tracking_id; a report reads these rows only and never scans clicks.
CREATE TABLE conversion_variant_clicks (
    account_id TEXT NOT NULL,
    link_id    TEXT NOT NULL,
    variant    TEXT NOT NULL,
    human      INTEGER NOT NULL DEFAULT 0,
    bot        INTEGER NOT NULL DEFAULT 0,
    visitors   INTEGER NOT NULL DEFAULT 0,  -- distinct visitors (daily salted hashes) among the human clicks
    PRIMARY KEY (account_id, link_id, variant)
) WITHOUT ROWID;

-- The visitors already counted in a conversion_variant_clicks row.
CREATE TABLE conversion_variant_visitors (
    account_id TEXT NOT NULL,
    link_id    TEXT NOT NULL,
    variant    TEXT NOT NULL,
    visitor    TEXT NOT NULL,
    PRIMARY KEY (account_id, link_id, variant, visitor)
) WITHOUT ROWID;

-- Purchases and revenue (decimal text, added exactly) per link, variant and currency.
CREATE TABLE conversion_variant_revenue (
    account_id TEXT NOT NULL,
    link_id    TEXT NOT NULL,
    variant    TEXT NOT NULL,
    currency   TEXT NOT NULL,
    purchases  INTEGER NOT NULL DEFAULT 0,
    revenue    TEXT NOT NULL DEFAULT '0',
    PRIMARY KEY (account_id, link_id, variant, currency)
) WITHOUT ROWID;
