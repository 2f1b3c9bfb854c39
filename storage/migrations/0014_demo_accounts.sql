-- Accounts loaded from a seed file marked "demo": true (fixtures/demo.json). The mark turns on the receivers
-- the demo's connections deliver to (/demo/webhook-sink, /demo/vendor/...); activity_at says when the account's
-- made-up week of clicks and customer activity was added (once, at the first start of the service after the
-- load). Deleting the account removes the mark.
CREATE TABLE demo_accounts (
    account_id  TEXT PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
    loaded_at   TEXT NOT NULL,
    activity_at TEXT
);
