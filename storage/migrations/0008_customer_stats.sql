-- Running totals per customer, kept in the same transactions as the events and ledger entries that change
-- them, so that earning and tier rules read one row instead of a customer's whole history. A missing row is
-- built from the history on first use (linksvc.behavior.service), so no backfill is needed here.
CREATE TABLE customer_stats (
    customer_id    TEXT PRIMARY KEY REFERENCES customers(id) ON DELETE CASCADE,
    account_id     TEXT NOT NULL,
    purchase_total TEXT NOT NULL,
    purchase_count INTEGER NOT NULL,
    points         TEXT NOT NULL
);
CREATE INDEX wallet_lines_reward ON wallet_lines(customer_id, reward_id, expiration_date);
