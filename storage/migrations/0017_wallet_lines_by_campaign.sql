-- A batch of events counts, for each campaign with a daily limit (max_per_day), the lines it issued to each
-- customer today (storage.wallet.lines_for_events): by this index a few entries, not every line the customer
-- ever had.
CREATE INDEX wallet_lines_campaign_issued ON wallet_lines(customer_id, campaign_id, issued_at) WHERE source = 'event';
