"""``linksvc db copy``: an install moved from its SQLite file to a PostgreSQL database, table by table.

- **A consistent copy of a live install.** The SQLite file is read in one read transaction (WAL lets the
  running service go on writing meanwhile): every table is copied as it was at the first read.
- **Only into an empty target.** The target is migrated first (its own schema, the same tables); any row in any
  table but the seeded ``generations`` refuses the copy before anything is written.
- **One transaction on the target.** The rows are sent with ``COPY`` with the target's triggers and foreign
  keys held off for the session (``session_replication_role = replica``: the copy writes what the triggers
  wrote once already, such as campaign versions), then the identity sequences are moved past the copied ids.
- **Verified before it commits.** Row counts per table and the sums of every amount and point column must be
  equal on both sides; otherwise the transaction is rolled back and nothing stays on the target.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol

import asyncpg

from storage.postgres import PostgresDatabase

OWNS: tuple[str, ...] = ()

CHUNK = 5000
SKIPPED = {"schema_migrations", "generations"}  # the target's own bookkeeping and seeded counters
# Tables PostgreSQL has and SQLite does not, made from what SQLite records instead. export_events: the events
# each export target has claimed, numbered; on SQLite an event is claimed when its rowid is at most the
# target's pending (else last) rowid, and those rowids become the numbers, so the target's export_progress
# keeps meaning the same and an export interrupted on SQLite is finished on PostgreSQL with the same objects.
DERIVED = {
    "export_events": ("SELECT p.target, p.account_id, e.id, e.rowid FROM export_progress p JOIN events e "
                      "ON e.account_id = p.account_id AND e.rowid <= coalesce(p.pending_rowid, p.last_rowid)",
                      ["target", "account_id", "event_id", "position"]),
}


class CopyRefused(Exception):
    """The copy cannot start (a missing source, a target that is not empty) or did not verify."""


class Progress(Protocol):
    def stage(self, description: str, total: int | None, unit: str) -> None: ...

    def advance(self, amount: int = 1) -> None: ...


class _Silent:
    def stage(self, description: str, total: int | None, unit: str) -> None:
        pass

    def advance(self, amount: int = 1) -> None:
        pass


@dataclass
class CopyReport:
    rows: dict[str, int] = field(default_factory=dict)  # table -> rows copied
    sums: dict[str, str] = field(default_factory=dict)  # "table.column" -> the equal sum on both sides


def _converter(kind: str) -> Callable[[Any], Any]:
    if kind in ("integer", "bigint", "smallint"):
        return int
    if kind == "numeric":
        return lambda v: Decimal(str(v))
    if kind in ("double precision", "real"):
        return float
    if kind in ("json", "jsonb", "text", "character varying"):
        return lambda v: v.decode("utf-8") if isinstance(v, bytes) else str(v)
    raise CopyRefused(f"no copy rule for a column of type {kind}")


async def _tables(conn: asyncpg.Connection) -> dict[str, list[tuple[str, str]]]:
    rows = await conn.fetch(
        "SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c "
        "JOIN information_schema.tables t ON t.table_name = c.table_name AND t.table_schema = c.table_schema "
        "WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE' ORDER BY c.table_name, c.ordinal_position")
    tables: dict[str, list[tuple[str, str]]] = {}
    for table, column, kind in rows:
        if table not in SKIPPED:
            tables.setdefault(table, []).append((column, kind))
    return tables


async def copy_sqlite_to_postgres(source: str, target_url: str, progress: Progress | None = None) -> CopyReport:
    """Copies the SQLite install at ``source`` into the empty PostgreSQL database at ``target_url``."""
    progress = progress or _Silent()
    if not Path(source).is_file():
        raise CopyRefused(f"there is no SQLite database at {source}")
    target = PostgresDatabase(target_url, state_dir=str(Path(source).parent))
    await target.open(progress)  # the target's schema, migrated to the latest
    await target.close()
    lite = sqlite3.connect(f"file:{source}?mode=ro", uri=True, isolation_level=None)
    conn = await asyncpg.connect(target_url)
    report = CopyReport()
    try:
        tables = await _tables(conn)
        for table in tables:
            if await conn.fetchval(f'SELECT EXISTS (SELECT 1 FROM "{table}")'):
                raise CopyRefused(f"the target is not empty: table {table} has rows; copy into a new database")
        lite.execute("BEGIN")  # one snapshot of the live file for the whole copy
        lite_columns = {table: {row[1] for row in lite.execute(f'PRAGMA table_info("{table}")')} for table in tables}
        missing = sorted(t for t, cols in lite_columns.items() if not cols and t not in DERIVED)
        if missing:
            raise CopyRefused(f"the source lacks tables the target has: {missing} (start the service on it once "
                              "to migrate it)")
        totals = {t: int(lite.execute(f"SELECT count(*) FROM ({DERIVED[t][0]})" if t in DERIVED
                                      else f'SELECT count(*) FROM "{t}"').fetchone()[0]) for t in tables}
        progress.stage(f"copying {Path(source).name}", sum(totals.values()), "rows")
        async with conn.transaction():
            await conn.execute("SET LOCAL session_replication_role = replica")
            for table, columns in tables.items():
                if table in DERIVED:
                    sql, names = DERIVED[table]
                    records = [tuple(row) for row in lite.execute(sql)]
                    if records:
                        await conn.copy_records_to_table(table, records=records, columns=names)
                    report.rows[table] = len(records)
                    progress.advance(len(records))
                    continue
                names = [name for name, _ in columns if name in lite_columns[table]]
                convert = [_converter(kind) for name, kind in columns if name in lite_columns[table]]
                cursor = lite.execute(f'SELECT {", ".join(f"{chr(34)}{n}{chr(34)}" for n in names)} FROM "{table}"')
                copied = 0
                while rows := cursor.fetchmany(CHUNK):
                    records = [tuple(None if v is None else f(v) for f, v in zip(convert, row, strict=True))
                               for row in rows]
                    await conn.copy_records_to_table(table, records=records, columns=names)
                    copied += len(records)
                    progress.advance(len(records))
                report.rows[table] = copied
            await _advance_identities(conn, tables)
            await _verify(lite, conn, tables, totals, report)
        lite.execute("COMMIT")
        # Statistics for the planner now, rather than whenever autovacuum comes: the first requests on the
        # moved install are planned with the tables' real sizes.
        await conn.execute("ANALYZE")
    finally:
        lite.close()
        await conn.close()
    return report


async def _advance_identities(conn: asyncpg.Connection, tables: dict[str, list[tuple[str, str]]]) -> None:
    rows = await conn.fetch("SELECT table_name, column_name FROM information_schema.columns "
                            "WHERE table_schema = 'public' AND is_identity = 'YES'")
    for table, column in rows:
        if table in tables:
            await conn.execute(f"SELECT setval(pg_get_serial_sequence('\"{table}\"', '{column}'), "
                               f'coalesce((SELECT max("{column}") FROM "{table}"), 0) + 1, false)')


async def _verify(lite: sqlite3.Connection, conn: asyncpg.Connection, tables: dict[str, list[tuple[str, str]]],
                  totals: dict[str, int], report: CopyReport) -> None:
    for table in tables:
        count = int(await conn.fetchval(f'SELECT count(*) FROM "{table}"'))
        if count != totals[table]:
            raise CopyRefused(f"{table}: {totals[table]} rows in the source, {count} on the target; nothing kept")
    for table, columns in tables.items():
        for column, kind in columns:
            if kind != "numeric":
                continue
            source = sum((Decimal(str(v)) for (v,) in lite.execute(f'SELECT "{column}" FROM "{table}"')
                          if v is not None), Decimal(0))
            copied = await conn.fetchval(f'SELECT coalesce(sum("{column}"), 0)::text FROM "{table}"')
            if Decimal(copied) != source:
                raise CopyRefused(f"{table}.{column}: the sum is {source} in the source and {copied} on the target; "
                                  "nothing kept")
            report.sums[f"{table}.{column}"] = str(source)
