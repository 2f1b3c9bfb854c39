-- The full parse of each click's user agent, filled by the click writer per batch (NULL when unknown, and
-- for clicks written before this migration).
ALTER TABLE clicks ADD COLUMN browser_family TEXT;
ALTER TABLE clicks ADD COLUMN browser_version TEXT;
ALTER TABLE clicks ADD COLUMN os_family TEXT;
ALTER TABLE clicks ADD COLUMN os_version TEXT;
ALTER TABLE clicks ADD COLUMN device_brand TEXT;
ALTER TABLE clicks ADD COLUMN device_model TEXT;
