-- 0027 = SQLite's 0042, in part (issue 33): the counters 'wallets' and 'lookups' of the customer lookup's held
-- answers. Only the rows: on PostgreSQL the lookup reads the store each time (it awaits; nothing is held), so
-- the buckets and the triggers that stamp them are SQLite's alone. Stamping them here would make every event's
-- transaction update one shared row, across accounts and nodes.
INSERT INTO generations (name, value) VALUES ('wallets', 0), ('lookups', 0);
