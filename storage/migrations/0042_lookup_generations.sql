-- The customer lookup's answers held by each worker (linksvc/customers/held.py). A lookup's answer is the
-- customer's document and its wallet (its lines, and the reward documents they name) at the present time. Two
-- counters say when a held answer may be wrong:
-- - 'lookups' moves when which customer a lookup finds may change (a customer added, deleted, or given another
--   phone, document number or account) and when a reward document changes (every wallet may show it): every
--   held answer is dropped.
-- - a change to one customer's document or wallet lines stamps its bucket (256 buckets, by the last two
--   characters of the customer's id, storage/generations.py's wallet_bucket) with the next value of 'wallets':
--   only the answers of that bucket's customers are dropped. The writer publishes the buckets stamped past
--   the last published 'wallets' into shared memory after each commit, as it publishes the counters.
INSERT INTO generations (name, value) VALUES ('wallets', 0), ('lookups', 0);

CREATE TABLE wallet_buckets (
    bucket INTEGER PRIMARY KEY,
    value  INTEGER NOT NULL
);
WITH RECURSIVE n(bucket) AS (SELECT 0 UNION ALL SELECT bucket + 1 FROM n WHERE bucket < 255)
INSERT INTO wallet_buckets (bucket, value) SELECT bucket, 0 FROM n;

CREATE TRIGGER wallet_lines_added_lookups AFTER INSERT ON wallet_lines BEGIN
    UPDATE generations SET value = value + 1 WHERE name = 'wallets';
    UPDATE wallet_buckets SET value = (SELECT value FROM generations WHERE name = 'wallets')
    WHERE bucket = (coalesce(unicode(substr(NEW.customer_id, -1)), 0) * 131 + coalesce(unicode(substr(NEW.customer_id, -2, 1)), 0)) % 256;
END;
CREATE TRIGGER wallet_lines_changed_lookups AFTER UPDATE ON wallet_lines BEGIN
    UPDATE generations SET value = value + 1 WHERE name = 'wallets';
    UPDATE wallet_buckets SET value = (SELECT value FROM generations WHERE name = 'wallets')
    WHERE bucket = (coalesce(unicode(substr(NEW.customer_id, -1)), 0) * 131 + coalesce(unicode(substr(NEW.customer_id, -2, 1)), 0)) % 256;
    UPDATE wallet_buckets SET value = (SELECT value FROM generations WHERE name = 'wallets')
    WHERE bucket = (coalesce(unicode(substr(OLD.customer_id, -1)), 0) * 131 + coalesce(unicode(substr(OLD.customer_id, -2, 1)), 0)) % 256;
END;
CREATE TRIGGER wallet_lines_deleted_lookups AFTER DELETE ON wallet_lines BEGIN
    UPDATE generations SET value = value + 1 WHERE name = 'wallets';
    UPDATE wallet_buckets SET value = (SELECT value FROM generations WHERE name = 'wallets')
    WHERE bucket = (coalesce(unicode(substr(OLD.customer_id, -1)), 0) * 131 + coalesce(unicode(substr(OLD.customer_id, -2, 1)), 0)) % 256;
END;
CREATE TRIGGER customers_changed_lookups AFTER UPDATE ON customers BEGIN
    UPDATE generations SET value = value + 1 WHERE name = 'wallets';
    UPDATE wallet_buckets SET value = (SELECT value FROM generations WHERE name = 'wallets')
    WHERE bucket = (coalesce(unicode(substr(NEW.id, -1)), 0) * 131 + coalesce(unicode(substr(NEW.id, -2, 1)), 0)) % 256;
    UPDATE wallet_buckets SET value = (SELECT value FROM generations WHERE name = 'wallets')
    WHERE bucket = (coalesce(unicode(substr(OLD.id, -1)), 0) * 131 + coalesce(unicode(substr(OLD.id, -2, 1)), 0)) % 256;
END;
CREATE TRIGGER customers_rekeyed_lookups AFTER UPDATE ON customers
WHEN OLD.id IS NOT NEW.id OR OLD.account_id IS NOT NEW.account_id
  OR OLD.document_number IS NOT NEW.document_number OR OLD.phone_digits IS NOT NEW.phone_digits
  OR OLD.created_at IS NOT NEW.created_at
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'lookups'; END;
CREATE TRIGGER customers_added_lookups AFTER INSERT ON customers BEGIN UPDATE generations SET value = value + 1 WHERE name = 'lookups'; END;
CREATE TRIGGER customers_deleted_lookups AFTER DELETE ON customers BEGIN UPDATE generations SET value = value + 1 WHERE name = 'lookups'; END;
CREATE TRIGGER rewards_added_lookups AFTER INSERT ON rewards BEGIN UPDATE generations SET value = value + 1 WHERE name = 'lookups'; END;
CREATE TRIGGER rewards_changed_lookups AFTER UPDATE ON rewards BEGIN UPDATE generations SET value = value + 1 WHERE name = 'lookups'; END;
CREATE TRIGGER rewards_deleted_lookups AFTER DELETE ON rewards BEGIN UPDATE generations SET value = value + 1 WHERE name = 'lookups'; END;
