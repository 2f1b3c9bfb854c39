"""SQLite access: the database, numbered migrations, one repository module per aggregate."""
