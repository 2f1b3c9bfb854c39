-- The catalog read model (linksvc/campaigns/catalog.py): what each worker holds of an account's brands, tiers,
-- campaigns, custom event types and connections, which ingest and the storefront read. Unlike a link or a
-- token, a NEW row changes what is held (an account's list of campaigns), so inserts count too.
INSERT INTO generations (name, value) VALUES ('catalog', 0);

CREATE TRIGGER brands_catalog_added AFTER INSERT ON brands
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'catalog'; END;
CREATE TRIGGER brands_catalog_changed AFTER UPDATE ON brands
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'catalog'; END;
CREATE TRIGGER brands_catalog_deleted AFTER DELETE ON brands
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'catalog'; END;
CREATE TRIGGER tiers_catalog_added AFTER INSERT ON tiers
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'catalog'; END;
CREATE TRIGGER tiers_catalog_changed AFTER UPDATE ON tiers
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'catalog'; END;
CREATE TRIGGER tiers_catalog_deleted AFTER DELETE ON tiers
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'catalog'; END;
CREATE TRIGGER campaigns_catalog_added AFTER INSERT ON campaigns
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'catalog'; END;
CREATE TRIGGER campaigns_catalog_changed AFTER UPDATE ON campaigns
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'catalog'; END;
CREATE TRIGGER campaigns_catalog_deleted AFTER DELETE ON campaigns
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'catalog'; END;
CREATE TRIGGER custom_event_types_catalog_added AFTER INSERT ON custom_event_types
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'catalog'; END;
CREATE TRIGGER custom_event_types_catalog_changed AFTER UPDATE ON custom_event_types
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'catalog'; END;
CREATE TRIGGER custom_event_types_catalog_deleted AFTER DELETE ON custom_event_types
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'catalog'; END;
CREATE TRIGGER connections_catalog_added AFTER INSERT ON connections
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'catalog'; END;
CREATE TRIGGER connections_catalog_changed AFTER UPDATE ON connections
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'catalog'; END;
CREATE TRIGGER connections_catalog_deleted AFTER DELETE ON connections
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'catalog'; END;
