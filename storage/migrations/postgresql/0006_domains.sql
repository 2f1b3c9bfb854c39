-- 0006 = SQLite's 0021 (custom domains per account): the same table, and its generation counter.

CREATE TABLE domains (
    id          text COLLATE "C" PRIMARY KEY,
    account_id  text COLLATE "C" NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    host        text COLLATE "C" NOT NULL UNIQUE,
    status      text COLLATE "C" NOT NULL CHECK (status IN ('pending', 'live')),
    token       text COLLATE "C" NOT NULL UNIQUE,
    created_at  text COLLATE "C" NOT NULL,
    verified_at text COLLATE "C"
);
CREATE INDEX domains_account ON domains(account_id);

INSERT INTO generations (name, value) VALUES ('domains', 0);

CREATE TRIGGER domains_added AFTER INSERT ON domains
    FOR EACH ROW EXECUTE FUNCTION generations_bump('domains');
CREATE TRIGGER domains_changed AFTER UPDATE ON domains
    FOR EACH ROW EXECUTE FUNCTION generations_bump('domains');
CREATE TRIGGER domains_deleted AFTER DELETE ON domains
    FOR EACH ROW EXECUTE FUNCTION generations_bump('domains');
