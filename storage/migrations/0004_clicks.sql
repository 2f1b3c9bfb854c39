-- Clicks on links, written in batches off the request path. No foreign keys: a batch must not fail
-- because a link was deleted between the click and the write; a trigger removes a deleted link's clicks.
CREATE TABLE clicks (
    id          INTEGER PRIMARY KEY,
    account_id  TEXT NOT NULL,
    link_id     TEXT NOT NULL,
    tracking_id TEXT NOT NULL,
    clicked_at  TEXT NOT NULL,
    platform    TEXT NOT NULL,
    bot         INTEGER NOT NULL,
    answer      TEXT NOT NULL,
    user_agent  TEXT,
    referer     TEXT,
    utm         TEXT NOT NULL,
    utm_source  TEXT
);
CREATE INDEX clicks_link_time ON clicks(link_id, clicked_at);
CREATE INDEX clicks_account ON clicks(account_id);

CREATE TRIGGER links_delete_clicks AFTER DELETE ON links BEGIN
    DELETE FROM clicks WHERE link_id = OLD.id;
END;
CREATE TRIGGER accounts_delete_clicks AFTER DELETE ON accounts BEGIN
    DELETE FROM clicks WHERE account_id = OLD.id;
END;
