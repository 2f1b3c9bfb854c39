"""The store: SQLite (the database, the one write queue) or PostgreSQL (asyncpg, serializable units),
numbered migrations per dialect, one repository module per aggregate returning records."""
