-- Conversion analytics (docs/decisions.md, "Conversion report"): what clicks and events add to the report is
-- kept in rollups as they are written (the click writer's batches, the event batch, a reversal), so a report
-- sums rows per day and never scans clicks or events. Missing dimension values are '' (they are keys).

-- Each click: who (a daily salted hash of address and user agent: no address is stored, and the salt of a day
-- is not kept past it, so a visitor cannot be followed across days) and where each UTM field came from at
-- click time (JSON {field: click_query | link_destination | fallback | channel_default}).
ALTER TABLE clicks ADD COLUMN visitor TEXT;
ALTER TABLE clicks ADD COLUMN utm_origin TEXT;
-- Each event: where each attribution field came from, and the click behind its tracking_id, as they were when
-- the event was written (JSON; NULL for events stored before this migration).
ALTER TABLE events ADD COLUMN lineage TEXT;

CREATE TABLE visitor_salts (
    day  TEXT PRIMARY KEY,  -- YYYY-MM-DD (UTC)
    salt TEXT NOT NULL
) WITHOUT ROWID;

-- Clicks per day, link, resolved UTM and platform.
CREATE TABLE conversion_clicks (
    account_id   TEXT NOT NULL,
    day          TEXT NOT NULL,
    link_id      TEXT NOT NULL,
    utm_source   TEXT NOT NULL,
    utm_medium   TEXT NOT NULL,
    utm_campaign TEXT NOT NULL,
    platform     TEXT NOT NULL,
    human        INTEGER NOT NULL DEFAULT 0,
    bot          INTEGER NOT NULL DEFAULT 0,
    visitors     INTEGER NOT NULL DEFAULT 0,  -- distinct visitors among the human clicks of this row's key
    web          INTEGER NOT NULL DEFAULT 0,  -- human clicks by route taken
    app          INTEGER NOT NULL DEFAULT 0,
    store        INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, day, link_id, utm_source, utm_medium, utm_campaign, platform)
) WITHOUT ROWID;

-- The visitors already counted in a conversion_clicks row (one row per visitor and key).
CREATE TABLE conversion_visitors (
    account_id   TEXT NOT NULL,
    day          TEXT NOT NULL,
    link_id      TEXT NOT NULL,
    utm_source   TEXT NOT NULL,
    utm_medium   TEXT NOT NULL,
    utm_campaign TEXT NOT NULL,
    platform     TEXT NOT NULL,
    visitor      TEXT NOT NULL,
    PRIMARY KEY (account_id, day, link_id, utm_source, utm_medium, utm_campaign, platform, visitor)
) WITHOUT ROWID;

-- Events per day (of issued_at), the click's link and platform, the event's own UTM, and type. Events with no
-- stored click behind their tracking_id have link_id '' and platform '' (the report's "unattributed").
CREATE TABLE conversion_events (
    account_id   TEXT NOT NULL,
    day          TEXT NOT NULL,
    link_id      TEXT NOT NULL,
    utm_source   TEXT NOT NULL,
    utm_medium   TEXT NOT NULL,
    utm_campaign TEXT NOT NULL,
    platform     TEXT NOT NULL,
    type         TEXT NOT NULL,
    events       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, day, link_id, utm_source, utm_medium, utm_campaign, platform, type)
) WITHOUT ROWID;

-- Purchases not reversed, per the same key and currency: their count, revenue (exact decimal text) and the
-- time from click to purchase counted in buckets (JSON array of 14 counts; docs/decisions.md gives the bounds).
CREATE TABLE conversion_revenue (
    account_id   TEXT NOT NULL,
    day          TEXT NOT NULL,
    link_id      TEXT NOT NULL,
    utm_source   TEXT NOT NULL,
    utm_medium   TEXT NOT NULL,
    utm_campaign TEXT NOT NULL,
    platform     TEXT NOT NULL,
    currency     TEXT NOT NULL,
    purchases    INTEGER NOT NULL DEFAULT 0,
    revenue      TEXT NOT NULL DEFAULT '0',
    delays       TEXT NOT NULL DEFAULT '[0,0,0,0,0,0,0,0,0,0,0,0,0,0]',
    PRIMARY KEY (account_id, day, link_id, utm_source, utm_medium, utm_campaign, platform, currency)
) WITHOUT ROWID;
