-- Writes that failed on their own (a poison row), kept with the reason instead of blocking the others.
CREATE TABLE dead_letters (
    id          INTEGER PRIMARY KEY,
    kind        TEXT NOT NULL,
    account_id  TEXT,
    reason      TEXT NOT NULL,
    payload     TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE INDEX dead_letters_account ON dead_letters(account_id, id);
