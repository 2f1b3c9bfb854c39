-- 0016 = SQLite's 0031 (issue 34, A/B split): the click's variant and the variant report's rollups; revenue is
-- numeric.
ALTER TABLE clicks ADD COLUMN variant text COLLATE "C";

CREATE TABLE conversion_variant_clicks (
    account_id text COLLATE "C" NOT NULL,
    link_id    text COLLATE "C" NOT NULL,
    variant    text COLLATE "C" NOT NULL,
    human      bigint NOT NULL DEFAULT 0,
    bot        bigint NOT NULL DEFAULT 0,
    visitors   bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, link_id, variant)
);

CREATE TABLE conversion_variant_visitors (
    account_id text COLLATE "C" NOT NULL,
    link_id    text COLLATE "C" NOT NULL,
    variant    text COLLATE "C" NOT NULL,
    visitor    text COLLATE "C" NOT NULL,
    PRIMARY KEY (account_id, link_id, variant, visitor)
);

CREATE TABLE conversion_variant_revenue (
    account_id text COLLATE "C" NOT NULL,
    link_id    text COLLATE "C" NOT NULL,
    variant    text COLLATE "C" NOT NULL,
    currency   text COLLATE "C" NOT NULL,
    purchases  bigint NOT NULL DEFAULT 0,
    revenue    numeric NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, link_id, variant, currency)
);
