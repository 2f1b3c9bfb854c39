-- Deferred deep links (docs/decisions.md, "Deferred deep links"): an app's first start claims the click that
-- led to its install (by the click's tracking_id, from the Play install referrer or the iOS pasteboard). One
-- install per click: the unique key makes a claim once-only, even when two claims arrive at once. No foreign
-- key to links: a deleted link's install stays counted (a trigger removes a deleted account's installs).
CREATE TABLE installs (
    id          INTEGER PRIMARY KEY,
    account_id  TEXT NOT NULL,
    tracking_id TEXT NOT NULL,
    link_id     TEXT NOT NULL,
    platform    TEXT NOT NULL,  -- android | ios
    source      TEXT NOT NULL,  -- install_referrer | pasteboard
    app_version TEXT,
    clicked_at  TEXT NOT NULL,
    claimed_at  TEXT NOT NULL,
    UNIQUE (account_id, tracking_id)
);
CREATE INDEX installs_link_time ON installs(link_id, claimed_at);

CREATE TRIGGER accounts_delete_installs AFTER DELETE ON accounts BEGIN
    DELETE FROM installs WHERE account_id = OLD.id;
END;
