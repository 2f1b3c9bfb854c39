-- 0004 = SQLite's 0019 (conversion analytics): the same tables and columns; revenue is numeric.
ALTER TABLE clicks ADD COLUMN visitor text COLLATE "C";
ALTER TABLE clicks ADD COLUMN utm_origin jsonb;
ALTER TABLE events ADD COLUMN lineage jsonb;

CREATE TABLE visitor_salts (
    day  text COLLATE "C" PRIMARY KEY,
    salt text COLLATE "C" NOT NULL
);

CREATE TABLE conversion_clicks (
    account_id   text COLLATE "C" NOT NULL,
    day          text COLLATE "C" NOT NULL,
    link_id      text COLLATE "C" NOT NULL,
    utm_source   text COLLATE "C" NOT NULL,
    utm_medium   text COLLATE "C" NOT NULL,
    utm_campaign text COLLATE "C" NOT NULL,
    platform     text COLLATE "C" NOT NULL,
    human        integer NOT NULL DEFAULT 0,
    bot          integer NOT NULL DEFAULT 0,
    visitors     integer NOT NULL DEFAULT 0,
    web          integer NOT NULL DEFAULT 0,
    app          integer NOT NULL DEFAULT 0,
    store        integer NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, day, link_id, utm_source, utm_medium, utm_campaign, platform)
);

CREATE TABLE conversion_visitors (
    account_id   text COLLATE "C" NOT NULL,
    day          text COLLATE "C" NOT NULL,
    link_id      text COLLATE "C" NOT NULL,
    utm_source   text COLLATE "C" NOT NULL,
    utm_medium   text COLLATE "C" NOT NULL,
    utm_campaign text COLLATE "C" NOT NULL,
    platform     text COLLATE "C" NOT NULL,
    visitor      text COLLATE "C" NOT NULL,
    PRIMARY KEY (account_id, day, link_id, utm_source, utm_medium, utm_campaign, platform, visitor)
);

CREATE TABLE conversion_events (
    account_id   text COLLATE "C" NOT NULL,
    day          text COLLATE "C" NOT NULL,
    link_id      text COLLATE "C" NOT NULL,
    utm_source   text COLLATE "C" NOT NULL,
    utm_medium   text COLLATE "C" NOT NULL,
    utm_campaign text COLLATE "C" NOT NULL,
    platform     text COLLATE "C" NOT NULL,
    type         text COLLATE "C" NOT NULL,
    events       integer NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, day, link_id, utm_source, utm_medium, utm_campaign, platform, type)
);

CREATE TABLE conversion_revenue (
    account_id   text COLLATE "C" NOT NULL,
    day          text COLLATE "C" NOT NULL,
    link_id      text COLLATE "C" NOT NULL,
    utm_source   text COLLATE "C" NOT NULL,
    utm_medium   text COLLATE "C" NOT NULL,
    utm_campaign text COLLATE "C" NOT NULL,
    platform     text COLLATE "C" NOT NULL,
    currency     text COLLATE "C" NOT NULL,
    purchases    integer NOT NULL DEFAULT 0,
    revenue      numeric NOT NULL DEFAULT 0,
    delays       jsonb NOT NULL DEFAULT '[0,0,0,0,0,0,0,0,0,0,0,0,0,0]',
    PRIMARY KEY (account_id, day, link_id, utm_source, utm_medium, utm_campaign, platform, currency)
);
