-- 0020 = SQLite's 0035 (issue 35): the audit log, append-only (a trigger refuses any UPDATE).
CREATE TABLE audit_log (
    seq         bigserial PRIMARY KEY,
    id          text COLLATE "C" NOT NULL UNIQUE,
    account_id  text COLLATE "C" NOT NULL,
    actor_kind  text COLLATE "C" NOT NULL CHECK (actor_kind IN ('operator', 'person', 'token')),
    actor_id    text COLLATE "C" NOT NULL,
    person_id   text COLLATE "C",
    object_kind text COLLATE "C" NOT NULL,
    object_id   text NOT NULL,
    action      text COLLATE "C" NOT NULL,
    fields      text NOT NULL,
    client      text COLLATE "C" NOT NULL,
    at          text COLLATE "C" NOT NULL
);
CREATE INDEX audit_log_account ON audit_log(account_id, seq);

CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the audit log is append-only';
END $$;
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
