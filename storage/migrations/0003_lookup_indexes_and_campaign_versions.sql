-- Lookups by identifier also come back in (created_at, id) order: indexes that hold both let SQLite
-- answer from the identifier without walking the account (it chose the order index otherwise).
DROP INDEX customers_document;
DROP INDEX customers_phone;
DROP INDEX customers_external;
DROP INDEX customers_email;
CREATE INDEX customers_document ON customers(account_id, document_number, created_at, id);
CREATE INDEX customers_phone ON customers(account_id, phone_digits, created_at, id);
CREATE INDEX customers_external ON customers(account_id, external_id, created_at, id);
CREATE INDEX customers_email ON customers(account_id, email_lower, created_at, id);
DROP INDEX contacts_email;
DROP INDEX contacts_document;
DROP INDEX contacts_external;
CREATE INDEX contacts_email ON contacts(account_id, email_lower, created_at, id);
CREATE INDEX contacts_document ON contacts(account_id, document_number, created_at, id);
CREATE INDEX contacts_external ON contacts(account_id, external_id, created_at, id);

-- When the next campaign of an account starts or ends: a cached count filtered by status is valid
-- until then.
CREATE INDEX campaigns_account_starts ON campaigns(account_id, starts_at);
CREATE INDEX campaigns_account_ends ON campaigns(account_id, ends_at);

-- A number that changes whenever any campaign of the account (or its restriction lists) changes, kept
-- by triggers so that no write path can forget it. Cached campaign counts are valid for one version.
CREATE TABLE campaign_versions (
    account_id TEXT PRIMARY KEY,
    version    INTEGER NOT NULL
);

CREATE TRIGGER campaigns_version_insert AFTER INSERT ON campaigns BEGIN
    INSERT INTO campaign_versions (account_id, version) VALUES (NEW.account_id, 1)
    ON CONFLICT (account_id) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER campaigns_version_update AFTER UPDATE ON campaigns BEGIN
    INSERT INTO campaign_versions (account_id, version) VALUES (NEW.account_id, 1)
    ON CONFLICT (account_id) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER campaigns_version_delete AFTER DELETE ON campaigns BEGIN
    INSERT INTO campaign_versions (account_id, version) VALUES (OLD.account_id, 1)
    ON CONFLICT (account_id) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER restrictions_version_insert AFTER INSERT ON campaign_restrictions BEGIN
    UPDATE campaign_versions SET version = version + 1
    WHERE account_id = (SELECT account_id FROM campaigns WHERE id = NEW.campaign_id);
END;
CREATE TRIGGER restrictions_version_delete AFTER DELETE ON campaign_restrictions BEGIN
    UPDATE campaign_versions SET version = version + 1
    WHERE account_id = (SELECT account_id FROM campaigns WHERE id = OLD.campaign_id);
END;

INSERT INTO campaign_versions (account_id, version) SELECT DISTINCT account_id, 1 FROM campaigns;
