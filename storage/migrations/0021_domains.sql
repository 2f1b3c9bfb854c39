-- Custom domains per account (storage/domains.py): a host the account proves it owns by serving the
-- verification token at /.well-known/linksvc-verify/{token}; links then resolve on it by Host + code. Every
-- worker holds the whole table in memory (linksvc/domains/hosts.py), so a new row changes what is held:
-- inserts advance the 'domains' generation too.
CREATE TABLE domains (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    host        TEXT NOT NULL UNIQUE,
    status      TEXT NOT NULL CHECK (status IN ('pending', 'live')),
    token       TEXT NOT NULL UNIQUE,
    created_at  TEXT NOT NULL,
    verified_at TEXT
);
CREATE INDEX domains_account ON domains(account_id);

INSERT INTO generations (name, value) VALUES ('domains', 0);

CREATE TRIGGER domains_added AFTER INSERT ON domains
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'domains'; END;
CREATE TRIGGER domains_changed AFTER UPDATE ON domains
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'domains'; END;
CREATE TRIGGER domains_deleted AFTER DELETE ON domains
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'domains'; END;
