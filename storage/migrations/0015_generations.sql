-- Generation counters of what each worker keeps in memory (storage/generations.py): a change to a table a
-- read model holds advances its counter in the same transaction, whichever code or process made it. After a
-- commit the writer publishes the counters to shared memory, where every worker compares them with what it
-- holds, one integer load a request. Only changes that can make a held entry wrong count: a new link or token
-- cannot (nothing missing is held), an edited, moved or deleted one can.
CREATE TABLE generations (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO generations (name, value) VALUES ('links', 0), ('access', 0);

CREATE TRIGGER links_changed AFTER UPDATE ON links
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'links'; END;
CREATE TRIGGER links_deleted AFTER DELETE ON links
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'links'; END;

CREATE TRIGGER access_tokens_changed AFTER UPDATE ON access_tokens
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'access'; END;
CREATE TRIGGER access_tokens_deleted AFTER DELETE ON access_tokens
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'access'; END;
CREATE TRIGGER api_keys_changed AFTER UPDATE ON api_keys
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'access'; END;
CREATE TRIGGER api_keys_deleted AFTER DELETE ON api_keys
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'access'; END;
CREATE TRIGGER accounts_changed AFTER UPDATE ON accounts
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'access'; END;
CREATE TRIGGER accounts_deleted AFTER DELETE ON accounts
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'access'; END;
