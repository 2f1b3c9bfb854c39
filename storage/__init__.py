"""SQLite access: the database, the one write queue, numbered migrations, one repository module per aggregate
returning records."""
