"""The PostgreSQL schema (storage/migrations/postgresql/) against SQLite's (the migrations applied in order).

Each test makes a fresh PostgreSQL database from ``LINKSVC_TEST_PG_ADMIN_URL`` (default: the local server on
127.0.0.1 as ``postgres``), applies the PostgreSQL script, builds the SQLite schema in a temporary file, and
compares: tables and their columns (order, NOT NULL, defaults, types by the mapping the script's header
states), primary keys, unique constraints and indexes, the other indexes by name, foreign keys with their
ON DELETE actions, CHECK constraints, triggers, and what the triggers do (the generation counters with their
NOTIFY, campaign versions, the clicks of a deleted link or account, the append-only ledger). A PostgreSQL that
cannot be reached fails the tests: CI starts one.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import sqlite3
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from storage.db import migration_files
from storage.writer import add_functions

ADMIN_URL = os.environ.get("LINKSVC_TEST_PG_ADMIN_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
PG_DIR = Path(__file__).resolve().parents[2] / "storage" / "migrations" / "postgresql"
PG_SCRIPT = PG_DIR / "0001_initial.sql"
# The later scripts that mirror a SQLite migration (their first line says "= SQLite's NNNN"); the others add
# what only PostgreSQL needs (several nodes' leases and claims) and have no SQLite counterpart to compare.
PG_MIRRORS = [path for path in sorted(PG_DIR.glob("[0-9][0-9][0-9][0-9]_*.sql"))
              if path != PG_SCRIPT and "= SQLite's" in path.read_text(encoding="utf-8").split("\n", 1)[0]]
CHANNEL = "linksvc_generations"

# The type decisions (the script's header): SQLite TEXT that holds decimals or JSON documents.
NUMERIC = {("wallet_lines", "amount"), ("ledger_entries", "amount"), ("customer_stats", "purchase_total"),
           ("customer_stats", "points"), ("conversion_revenue", "revenue"),
           ("conversion_level_revenue", "revenue"), ("conversion_variant_day_revenue", "revenue")}
JSONB = {(table, "body") for table in ("brands", "tiers", "rewards", "campaigns", "contacts", "customers",
                                       "custom_event_types", "connections", "links", "events")}
JSONB |= {("events", "effects"), ("events", "reversal"), ("clicks", "utm"), ("dead_letters", "payload")}
JSONB |= {("clicks", "utm_origin"), ("events", "lineage"), ("conversion_revenue", "delays")}
# What each SQLite type may become.
TYPE_MAP = {"TEXT": {"text"}, "INTEGER": {"integer", "bigint"}, "REAL": {"double precision"}}
_ON_DELETE = {"a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT"}


# --- the two databases ---------------------------------------------------------------------------------------


def _database_url(name: str) -> str:
    base, _, _ = ADMIN_URL.partition("?")
    head, _, _ = base.rpartition("/")
    return f"{head}/{name}"


@dataclass(frozen=True)
class PgDatabase:
    url: str
    conn: asyncpg.Connection


@pytest.fixture
async def pgdb() -> AsyncIterator[PgDatabase | str]:
    """A new database with the PostgreSQL schema applied (in one transaction), dropped afterwards; or why there
    is none, for the test to fail with (:func:`need`): a fixture's failure would be an error, not a failure."""
    try:
        admin = await asyncpg.connect(ADMIN_URL, timeout=10)
    except (OSError, TimeoutError, asyncpg.PostgresError) as exc:
        yield (f"PostgreSQL is not reachable at {ADMIN_URL} (set LINKSVC_TEST_PG_ADMIN_URL; CI starts "
               f"PostgreSQL 15 before the tests): {type(exc).__name__}: {exc}")
        return
    name = f"linksvc_t_{secrets.token_hex(8)}"
    try:
        await admin.execute(f"CREATE DATABASE {name}")
        try:
            conn = await asyncpg.connect(_database_url(name))
            try:
                async with conn.transaction():
                    for script in (PG_SCRIPT, *PG_MIRRORS):
                        await conn.execute(script.read_text(encoding="utf-8"))
                yield PgDatabase(_database_url(name), conn)
            finally:
                await conn.close()
        finally:
            await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        await admin.close()


def need(db: PgDatabase | str) -> asyncpg.Connection:
    """The database's connection; the test fails when PostgreSQL could not be reached."""
    if isinstance(db, str):
        pytest.fail(db, pytrace=False)
    return db.conn


@pytest.fixture
def lite(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    """A SQLite file with every migration applied in order, each in its own transaction (as storage.db)."""
    conn = sqlite3.connect(tmp_path / "schema.db", isolation_level=None)
    conn.execute("PRAGMA foreign_keys=ON")
    add_functions(conn)
    for number, path in migration_files():
        conn.executescript(f"BEGIN IMMEDIATE;\n{path.read_text(encoding='utf-8')}\n"
                           f"PRAGMA user_version={number};\nCOMMIT;")
    try:
        yield conn
    finally:
        conn.close()


# --- the schemas as data -------------------------------------------------------------------------------------


def _norm_where(text: str | None) -> str | None:
    """A partial index's condition, spelled the same from both stores."""
    if text is None:
        return None
    text = re.sub(r"::\w+", "", text).strip()
    while text.startswith("(") and text.endswith(")"):
        text = text[1:-1].strip()
    return re.sub(r"\s+", " ", text).lower()


# Tables of SQLite alone, and why.
SQLITE_ONLY_TABLES = {
    "wallet_buckets": "the stamps of the customer lookup's held answers (0042); PostgreSQL holds none",
}


def _sqlite_tables(conn: sqlite3.Connection) -> dict[str, str]:
    return {name: sql for name, sql in conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        if name not in SQLITE_ONLY_TABLES}


def _sqlite_columns(conn: sqlite3.Connection, table: str) -> list[dict[str, Any]]:
    found = []
    for _cid, name, type_, notnull, default, pk in conn.execute(f"PRAGMA table_info({table})"):
        value = None if default is None else conn.execute(f"SELECT {default}").fetchone()[0]
        # A primary key column is NOT NULL on PostgreSQL; SQLite lets a rowid table's non-integer key hold NULL
        # (a documented legacy quirk), which no code relies on.
        found.append({"name": name, "type": type_.upper(), "not_null": bool(notnull) or pk > 0,
                      "default": None if value is None else str(value), "pk": pk})
    return found


async def _pg_columns(conn: asyncpg.Connection, table: str) -> list[dict[str, Any]]:
    rows = await conn.fetch(
        "SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS not_null, "
        "pg_get_expr(d.adbin, d.adrelid) AS default, a.attidentity::text AS identity "
        "FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum "
        "WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum", table)
    found = []
    for row in rows:
        value = None if row["default"] is None else await conn.fetchval(f"SELECT ({row['default']})::text")
        found.append({"name": row["name"], "type": row["type"], "not_null": row["not_null"], "default": value,
                      "identity": row["identity"]})
    return found


def _sqlite_indexes(conn: sqlite3.Connection, table: str) -> list[dict[str, Any]]:
    """Every index of the table: name, columns, unique, origin (c: CREATE INDEX, u: UNIQUE, pk), condition."""
    found = []
    for _seq, name, unique, origin, partial in conn.execute(f"PRAGMA index_list({table})"):
        columns = tuple(row[2] for row in conn.execute(f"PRAGMA index_info({name})"))
        where = None
        if partial:
            sql = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", (name,)).fetchone()[0]
            where = sql[sql.upper().rindex(" WHERE ") + len(" WHERE "):]
        found.append({"name": name, "columns": columns, "unique": bool(unique), "origin": origin,
                      "where": _norm_where(where)})
    return found


async def _pg_indexes(conn: asyncpg.Connection, table: str) -> list[dict[str, Any]]:
    rows = await conn.fetch(
        "SELECT c.relname AS name, i.indisunique AS unique, i.indisprimary AS primary, i.indnatts AS n, "
        "i.indexrelid AS oid, pg_get_expr(i.indpred, i.indrelid) AS where, "
        "EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid) AS constraint "
        "FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = $1::regclass", table)
    found = []
    for row in rows:
        columns = tuple([await conn.fetchval("SELECT pg_get_indexdef($1, $2, true)", row["oid"], k)
                         for k in range(1, row["n"] + 1)])
        origin = "pk" if row["primary"] else "u" if row["constraint"] else "c"
        found.append({"name": row["name"], "columns": columns, "unique": row["unique"], "origin": origin,
                      "where": _norm_where(row["where"])})
    return found


def _sqlite_foreign_keys(conn: sqlite3.Connection, table: str) -> set[tuple[Any, ...]]:
    keys: dict[int, list[Any]] = {}
    for fk_id, _seq, parent, column, parent_column, _on_update, on_delete, _match in conn.execute(
            f"PRAGMA foreign_key_list({table})"):
        key = keys.setdefault(fk_id, [[], parent, [], on_delete.upper()])
        key[0].append(column)
        key[2].append(parent_column)
    return {(tuple(c), parent, tuple(p), action) for c, parent, p, action in keys.values()}


async def _pg_foreign_keys(conn: asyncpg.Connection, table: str) -> set[tuple[Any, ...]]:
    rows = await conn.fetch(
        "SELECT ARRAY(SELECT a.attname FROM unnest(k.conkey) WITH ORDINALITY u(n, i) "
        "             JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n ORDER BY u.i) AS columns, "
        "       k.confrelid::regclass::text AS parent, "
        "       ARRAY(SELECT a.attname FROM unnest(k.confkey) WITH ORDINALITY u(n, i) "
        "             JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n ORDER BY u.i) "
        "       AS parent_columns, "
        "       k.confdeltype::text AS on_delete "
        "FROM pg_constraint k WHERE k.conrelid = $1::regclass AND k.contype = 'f'", table)
    return {(tuple(r["columns"]), r["parent"], tuple(r["parent_columns"]), _ON_DELETE[r["on_delete"]])
            for r in rows}


def _sqlite_checks(sql: str) -> set[tuple[str, frozenset[str]]]:
    """The table's CHECK constraints, all of the form ``column IN ('a', 'b')``."""
    assert sql.count("CHECK") == len(re.findall(r"CHECK \(\w+ IN \([^)]*\)\)", sql)), f"a CHECK of another form: {sql}"
    return {(column, frozenset(re.findall(r"'([^']*)'", values)))
            for column, values in re.findall(r"CHECK \((\w+) IN \(([^)]*)\)\)", sql)}


async def _pg_checks(conn: asyncpg.Connection, table: str) -> set[tuple[str, frozenset[str]]]:
    found = set()
    for row in await conn.fetch("SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint "
                                "WHERE conrelid = $1::regclass AND contype = 'c'", table):
        match = re.fullmatch(r"CHECK \(\((\w+) = ANY \(ARRAY\[(.*)\]\)\)\)", row["def"])
        assert match, f"a CHECK of another form on {table}: {row['def']}"
        found.add((match.group(1), frozenset(re.findall(r"'([^']*)'", match.group(2)))))
    return found


async def _pg_tables(conn: asyncpg.Connection) -> set[str]:
    return {r["tablename"] for r in await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}


_TRIGGER = re.compile(r"CREATE TRIGGER (\w+) (BEFORE|AFTER) (INSERT|UPDATE|DELETE) ON (\w+)", re.IGNORECASE)


SQLITE_ONLY_TRIGGERS = {
    "clicks_delete_export_progress": "SQLite hands a deleted click's id out again (0038); PostgreSQL's identity "
                                     "never does, so the clicks export's watermarks need not move back there",
    "clicks_delete_hook_progress": "the same for the link.clicked webhooks' cursors (0041)",
    **{name: "the customer lookup's held answers (0042, linksvc/customers/held.py) are SQLite's alone: on "
             "PostgreSQL the lookup reads the store each time" for name in (
        "wallet_lines_added_lookups", "wallet_lines_changed_lookups", "wallet_lines_deleted_lookups",
        "customers_changed_lookups", "customers_rekeyed_lookups", "customers_added_lookups",
        "customers_deleted_lookups", "rewards_added_lookups", "rewards_changed_lookups", "rewards_deleted_lookups")},
}


def _sqlite_triggers(conn: sqlite3.Connection) -> dict[str, tuple[str, str, str, str]]:
    """name -> (timing, event, table, body), without :data:`SQLITE_ONLY_TRIGGERS`."""
    found = {}
    for name, sql in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"):
        if name in SQLITE_ONLY_TRIGGERS:
            continue
        match = _TRIGGER.match(sql)
        assert match and match.group(1) == name, sql
        found[name] = (match.group(2).upper(), match.group(3).upper(), match.group(4), sql)
    return found


# --- the structure -------------------------------------------------------------------------------------------


async def test_the_same_tables_and_columns(lite: sqlite3.Connection, pgdb: PgDatabase | str) -> None:
    pg = need(pgdb)
    tables = _sqlite_tables(lite)
    assert await _pg_tables(pg) == set(tables)
    for table in tables:
        sqlite_columns = _sqlite_columns(lite, table)
        pg_columns = await _pg_columns(pg, table)
        assert [c["name"] for c in pg_columns] == [c["name"] for c in sqlite_columns], table
        for s, p in zip(sqlite_columns, pg_columns, strict=True):
            where = f"{table}.{s['name']}"
            assert p["not_null"] == s["not_null"], where
            if (table, s["name"]) in JSONB and None not in (p["default"], s["default"]):  # jsonb spaces its text
                assert json.loads(p["default"]) == json.loads(s["default"]), where
            else:
                assert p["default"] == s["default"], where
            rowid_alias = s["type"] == "INTEGER" and s["pk"] == 1 and sum(c["pk"] > 0 for c in sqlite_columns) == 1
            if rowid_alias:  # filled when omitted, as SQLite fills a rowid
                assert (p["type"], p["identity"]) == ("bigint", "d"), where
                continue
            assert p["identity"] == "", where
            if (table, s["name"]) in NUMERIC:
                assert (s["type"], p["type"]) == ("TEXT", "numeric"), where
            elif (table, s["name"]) in JSONB:
                assert (s["type"], p["type"]) == ("TEXT", "jsonb"), where
            else:
                assert p["type"] in TYPE_MAP[s["type"]], f"{where}: {s['type']} -> {p['type']}"


async def test_the_same_keys_indexes_and_checks(lite: sqlite3.Connection, pgdb: PgDatabase | str) -> None:
    pg = need(pgdb)
    for table, sql in _sqlite_tables(lite).items():
        columns = _sqlite_columns(lite, table)
        primary = tuple(c["name"] for c in sorted((c for c in columns if c["pk"]), key=lambda c: c["pk"]))
        sqlite_indexes = _sqlite_indexes(lite, table)
        pg_indexes = await _pg_indexes(pg, table)
        pg_primary = [i["columns"] for i in pg_indexes if i["origin"] == "pk"]
        assert pg_primary == ([primary] if primary else []), table
        # Unique constraints and unique indexes, by what they hold unique (their names differ by store).
        assert ({(i["columns"], i["where"]) for i in pg_indexes if i["unique"] and i["origin"] != "pk"}
                == {(i["columns"], i["where"]) for i in sqlite_indexes if i["unique"] and i["origin"] != "pk"}), table
        # Indexes made by CREATE INDEX: the same names, columns, uniqueness and conditions.
        assert ({i["name"]: i for i in pg_indexes if i["origin"] == "c"}
                == {i["name"]: i for i in sqlite_indexes if i["origin"] == "c"}), table
        assert await _pg_foreign_keys(pg, table) == _sqlite_foreign_keys(lite, table), table
        assert await _pg_checks(pg, table) == _sqlite_checks(sql), table


async def test_the_same_triggers(lite: sqlite3.Connection, pgdb: PgDatabase | str) -> None:
    pg = need(pgdb)
    rows = await pg.fetch("SELECT t.tgname AS name, c.relname AS table, t.tgtype AS type FROM pg_trigger t "
                          "JOIN pg_class c ON c.oid = t.tgrelid WHERE NOT t.tgisinternal")
    found = {}
    for row in rows:
        tgtype = row["type"]
        assert tgtype & 1, f"{row['name']} is not FOR EACH ROW (SQLite's triggers are row triggers)"
        events = [e for bit, e in ((4, "INSERT"), (8, "DELETE"), (16, "UPDATE")) if tgtype & bit]
        assert len(events) == 1, row["name"]
        found[row["name"]] = ("BEFORE" if tgtype & 2 else "AFTER", events[0], row["table"])
    assert found == {name: spec[:3] for name, spec in _sqlite_triggers(lite).items()}


async def test_the_same_seed_rows(lite: sqlite3.Connection, pgdb: PgDatabase | str) -> None:
    pg = need(pgdb)
    for table in _sqlite_tables(lite):
        sqlite_rows = sorted(tuple(r) for r in lite.execute(f"SELECT * FROM {table}"))
        pg_rows = sorted(tuple(r) for r in await pg.fetch(f"SELECT * FROM {table}"))
        assert pg_rows == sqlite_rows, table
    assert sorted(r[0] for r in lite.execute("SELECT name FROM generations")) == [
        "access", "catalog", "domains", "links", "lookups", "wallets"]


# --- the same statements on both stores ----------------------------------------------------------------------


class Both:
    """Runs the same statement (``?`` placeholders) on SQLite and on PostgreSQL, each committed on its own."""

    def __init__(self, lite: sqlite3.Connection, pg: asyncpg.Connection) -> None:
        self.lite = lite
        self.pg = pg

    @staticmethod
    def _pg_sql(sql: str) -> str:
        count = iter(range(1, sql.count("?") + 1))
        return re.sub(r"\?", lambda _: f"${next(count)}", sql)

    async def run(self, sql: str, *params: Any) -> None:
        self.lite.execute(sql, params)
        await self.pg.execute(self._pg_sql(sql), *params)

    async def rows(self, sql: str, *params: Any) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        return ([tuple(r) for r in self.lite.execute(sql, params)],
                [tuple(r) for r in await self.pg.fetch(self._pg_sql(sql), *params)])

    async def state(self) -> tuple[Any, Any]:
        """What the triggers keep, on each store: the counters, the campaign versions, the clicks."""
        found = []
        for sqlite_rows, pg_rows in [
            # Without the counters that only SQLite's triggers move (SQLITE_ONLY_TRIGGERS: the held lookups).
            await self.rows("SELECT name, value FROM generations WHERE name NOT IN ('wallets', 'lookups') "
                            "ORDER BY name"),
            await self.rows("SELECT account_id, version FROM campaign_versions ORDER BY account_id"),
            await self.rows("SELECT account_id, link_id, tracking_id FROM clicks ORDER BY account_id, link_id, "
                            "tracking_id"),
        ]:
            found.append((sqlite_rows, pg_rows))
        return tuple(s for s, _ in found), tuple(p for _, p in found)


NOW = "2026-01-02T03:04:05.000000Z"
BODY = '{"name": "x", "labels": ["a"]}'


async def seed(both: Both, tag: str) -> None:
    """One account (``a<tag>``) with a row in each table a trigger watches, and clicks on two links."""
    a = f"a{tag}"
    await both.run("INSERT INTO accounts (id, name, environment, created_at, updated_at) VALUES (?, 'A', "
                   "'production', ?, ?)", a, NOW, NOW)
    await both.run("INSERT INTO api_keys (id, account_id, kind, key_hash, key_prefix, created_at) "
                   "VALUES (?, ?, 'SERVER', ?, 'p', ?)", f"k{tag}", a, f"h{tag}", NOW)
    await both.run("INSERT INTO access_tokens (token_hash, account_id, key_id, kind, created_at, expires_at) "
                   "VALUES (?, ?, ?, 'SERVER', ?, ?)", f"t{tag}", a, f"k{tag}", NOW, NOW)
    for table in ("brands", "rewards"):
        await both.run(f"INSERT INTO {table} (id, account_id, body, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
                       f"{table}{tag}", a, BODY, NOW, NOW)
    await both.run("INSERT INTO tiers (id, account_id, level, body, created_at, updated_at) "
                   "VALUES (?, ?, 1.5, ?, ?, ?)", f"tiers{tag}", a, BODY, NOW, NOW)
    await both.run("INSERT INTO campaigns (id, account_id, type, body, created_at, updated_at) "
                   "VALUES (?, ?, 'LOYALTY', ?, ?, ?)", f"campaigns{tag}", a, BODY, NOW, NOW)
    await both.run("INSERT INTO campaign_restrictions (campaign_id, dimension, value) VALUES (?, 'store', 's1')",
                   f"campaigns{tag}")
    await both.run("INSERT INTO custom_event_types (id, account_id, name, active, body, created_at, updated_at) "
                   "VALUES (?, ?, 'custom', 1, ?, ?, ?)", f"custom_event_types{tag}", a, BODY, NOW, NOW)
    await both.run("INSERT INTO connections (id, account_id, destination, enabled, body, created_at, updated_at) "
                   "VALUES (?, ?, 'webhook', 1, ?, ?, ?)", f"connections{tag}", a, BODY, NOW, NOW)
    await both.run("INSERT INTO domains (id, account_id, host, status, token, created_at) "
                   "VALUES (?, ?, ?, 'pending', ?, ?)", f"domains{tag}", a, f"d{tag}.example.com", f"tok{tag}", NOW)
    for link in ("links", "other"):
        await both.run("INSERT INTO links (id, account_id, code, kind, body, created_at, updated_at) "
                       "VALUES (?, ?, ?, 'short', ?, ?, ?)", f"{link}{tag}", a, f"c{link}{tag}", BODY, NOW, NOW)
        for n in range(2):
            await both.run("INSERT INTO clicks (account_id, link_id, tracking_id, clicked_at, platform, bot, answer, "
                           "utm) VALUES (?, ?, ?, ?, 'ios', 0, 'redirect', '{}')", a, f"{link}{tag}",
                           f"tr{link}{tag}{n}", NOW)


# The row of each table a seed makes that a trigger's statement changes or deletes, and a column to set.
TOUCH = {
    "accounts": ("id", "a{tag}", "name"),
    "api_keys": ("id", "k{tag}", "name"),
    "access_tokens": ("token_hash", "t{tag}", "kind"),
    "campaign_restrictions": ("campaign_id", "campaigns{tag}", "value"),
    "domains": ("id", "domains{tag}", "host"),
}


def action(table: str, event: str, tag: str) -> tuple[str, tuple[Any, ...]]:
    """A statement that fires ``event`` on one row of ``table`` (of the seed ``tag``)."""
    key, value, column = TOUCH.get(table, ("id", f"{table}{{tag}}", "updated_at"))
    value = value.format(tag=tag)
    if event == "UPDATE":
        return f"UPDATE {table} SET {column} = {column} || 'x' WHERE {key} = ?", (value,)
    if event == "DELETE":
        return f"DELETE FROM {table} WHERE {key} = ?", (value,)
    inserts = {
        "brands": ("INSERT INTO brands (id, account_id, body, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
                   (f"new{tag}", f"a{tag}", BODY, NOW, NOW)),
        "tiers": ("INSERT INTO tiers (id, account_id, level, body, created_at, updated_at) VALUES (?, ?, 2, ?, ?, ?)",
                  (f"new{tag}", f"a{tag}", BODY, NOW, NOW)),
        "campaigns": ("INSERT INTO campaigns (id, account_id, type, body, created_at, updated_at) "
                      "VALUES (?, ?, 'LOYALTY', ?, ?, ?)", (f"new{tag}", f"a{tag}", BODY, NOW, NOW)),
        "custom_event_types": ("INSERT INTO custom_event_types (id, account_id, name, active, body, created_at, "
                               "updated_at) VALUES (?, ?, 'another', 1, ?, ?, ?)", (f"new{tag}", f"a{tag}", BODY, NOW,
                                                                                     NOW)),
        "connections": ("INSERT INTO connections (id, account_id, destination, enabled, body, created_at, updated_at) "
                        "VALUES (?, ?, 'webhook', 1, ?, ?, ?)", (f"new{tag}", f"a{tag}", BODY, NOW, NOW)),
        "domains": ("INSERT INTO domains (id, account_id, host, status, token, created_at) "
                    "VALUES (?, ?, ?, 'pending', ?, ?)",
                    (f"new{tag}", f"a{tag}", f"new{tag}.example.com", f"n{tag}", NOW)),
        "campaign_restrictions": ("INSERT INTO campaign_restrictions (campaign_id, dimension, value) "
                                  "VALUES (?, 'channel', 'web')", (f"campaigns{tag}",)),
    }
    return inserts[table]


class Notifications:
    """The payloads of NOTIFY on the generations channel, as a second connection receives them."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.arrived = asyncio.Event()

    def __call__(self, _conn: Any, _pid: int, channel: str, payload: str) -> None:
        assert channel == CHANNEL
        self.seen.append(payload)
        self.arrived.set()

    async def mark(self, conn: asyncpg.Connection, marker: str) -> None:
        """Sends ``marker`` and waits for it: the notifications of every transaction committed before have
        arrived then (PostgreSQL delivers them in commit order). The marker itself is not kept."""
        await conn.execute("SELECT pg_notify($1, $2)", CHANNEL, marker)
        await self.wait_for({marker})
        self.seen.remove(marker)

    async def wait_for(self, names: set[str], timeout: float = 5.0) -> None:
        async def until() -> None:
            while not names <= set(self.seen):
                self.arrived.clear()
                await self.arrived.wait()

        try:
            await asyncio.wait_for(until(), timeout)
        except TimeoutError:
            pytest.fail(f"no NOTIFY {CHANNEL} for {sorted(names - set(self.seen))} (got {self.seen})")


def _generations(rows: Sequence[tuple[Any, ...]]) -> dict[str, int]:
    return {str(name): int(value) for name, value in rows}


async def test_every_trigger_does_the_same(lite: sqlite3.Connection, pgdb: PgDatabase | str) -> None:
    """For each trigger, the statement that fires it changes the same counters, campaign versions and clicks on
    both stores; a counter that moves on PostgreSQL is announced on the generations channel once committed."""
    pg = need(pgdb)
    assert isinstance(pgdb, PgDatabase)
    both = Both(lite, pg)
    listener = await asyncpg.connect(pgdb.url)
    notifications = Notifications()
    await listener.add_listener(CHANNEL, notifications)
    try:
        triggers = _sqlite_triggers(lite)
        bumping = {name for name, spec in triggers.items() if "UPDATE generations" in spec[3]}
        assert len(bumping) >= 23  # at least 0015's eight and 0016's fifteen
        exercised: set[str] = set()
        for number, (name, (_timing, event, table, body)) in enumerate(sorted(triggers.items())):
            if table == "ledger_entries":
                continue  # test_ledger_entries_are_append_only
            tag = str(number)
            await seed(both, tag)
            before_lite, before_pg = await both.state()
            assert before_pg == before_lite, f"seeding for {name}"
            await notifications.mark(pg, f"seeded {tag}")  # the seed's own notifications, out of the way
            notifications.seen.clear()
            sql, params = action(table, event, tag)
            await both.run(sql, *params)
            after_lite, after_pg = await both.state()
            assert after_pg == after_lite, f"{name}: {sql}"
            moved = {n for n, v in _generations(after_pg[0]).items() if v != _generations(before_pg[0])[n]}
            if name in bumping:
                wanted = re.search(r"WHERE name = '(\w+)'", body)
                assert wanted and wanted.group(1) in moved, f"{name} did not advance {wanted}"
            if name.startswith(("campaigns_version", "restrictions_version")):
                assert after_pg[1] != before_pg[1], f"{name} did not change the campaign version"
            if name.endswith("_delete_clicks"):
                assert len(after_pg[2]) < len(before_pg[2]), f"{name} left the clicks"
            await notifications.mark(pg, f"done {tag}")
            assert sorted(notifications.seen) == sorted(moved), name  # one each: the action is one transaction
            exercised.add(name)
        assert exercised == set(triggers) - {"ledger_entries_append_only"}
    finally:
        await listener.close()


async def test_deletes_cascade_the_same(lite: sqlite3.Connection, pgdb: PgDatabase | str) -> None:
    """A deleted link takes its clicks, a deleted account everything of its own (by foreign key or trigger),
    with the same counters and campaign versions; another account's rows stay."""
    pg = need(pgdb)
    both = Both(lite, pg)
    await seed(both, "1")
    await seed(both, "2")
    await both.run("DELETE FROM links WHERE id = 'links1'")
    lite_state, pg_state = await both.state()
    assert pg_state == lite_state
    assert [c[1] for c in pg_state[2]].count("links1") == 0 and [c[1] for c in pg_state[2]].count("other1") == 2
    await both.run("DELETE FROM campaigns WHERE id = 'campaigns1'")
    lite_state, pg_state = await both.state()
    assert pg_state == lite_state
    await both.run("DELETE FROM accounts WHERE id = 'a1'")
    lite_state, pg_state = await both.state()
    assert pg_state == lite_state
    assert {c[0] for c in pg_state[2]} == {"a2"}
    for table in _sqlite_tables(lite):
        sqlite_rows, pg_rows = await both.rows(f"SELECT count(*) FROM {table}")
        assert pg_rows == sqlite_rows, table


async def test_ledger_entries_are_append_only(lite: sqlite3.Connection, pgdb: PgDatabase | str) -> None:
    pg = need(pgdb)
    both = Both(lite, pg)
    await seed(both, "1")
    await both.run("INSERT INTO customers (id, account_id, body, created_at, updated_at) VALUES ('c1', 'a1', ?, ?, ?)",
                   BODY, NOW, NOW)
    await both.run("INSERT INTO ledger_entries (account_id, customer_id, line_id, reward_id, kind, amount, created_at) "
                   "VALUES ('a1', 'c1', 'l1', 'r1', 'opening', '5', ?)", NOW)
    with pytest.raises(sqlite3.IntegrityError, match="ledger entries are append-only"):
        lite.execute("UPDATE ledger_entries SET amount = '6'")
    with pytest.raises(asyncpg.IntegrityConstraintViolationError, match="ledger entries are append-only"):
        await pg.execute("UPDATE ledger_entries SET amount = '6'")
    await both.run("DELETE FROM customers WHERE id = 'c1'")  # deleting goes on (with the customer)
    sqlite_rows, pg_rows = await both.rows("SELECT count(*) FROM ledger_entries")
    assert sqlite_rows == pg_rows == [(0,)]


# --- rows in and out -----------------------------------------------------------------------------------------


async def test_rows_read_back_the_same(lite: sqlite3.Connection, pgdb: PgDatabase | str) -> None:
    pg = need(pgdb)
    both = Both(lite, pg)
    event_body = {"customer": {"id": "c1"}, "type": "PURCHASE", "value": 12.5, "items": [{"sku": "x", "qty": 2}],
                  "note": "café ✓", "attribution": None}
    await both.run("INSERT INTO accounts (id, name, environment, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
                   "a1", "Shop", "sandbox", NOW, NOW)
    await both.run("INSERT INTO links (id, account_id, code, kind, campaign_id, body, created_at, updated_at) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", "l1", "a1", "abc", "short", None,
                   json.dumps({"destination_url": "https://example.com/?a=1", "ios": {"app": "x"}}), NOW, NOW)
    await both.run("INSERT INTO clicks (account_id, link_id, tracking_id, clicked_at, platform, bot, answer, "
                   "user_agent, referer, utm, utm_source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   "a1", "l1", "tr1", NOW, "android", 1, "redirect", "Mozilla/5.0", None,
                   json.dumps({"utm_source": "news"}), "news")
    await both.run("INSERT INTO customers (id, account_id, body, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
                   "c1", "a1", "{}", NOW, NOW)
    await both.run("INSERT INTO wallet_lines (id, account_id, customer_id, reward_id, amount, issued_at, "
                   "expiration_date) VALUES (?, ?, ?, ?, ?, ?, ?)", "w1", "a1", "c1", "r1", "12.50", NOW,
                   "2026-12-31T00:00:00.000000Z")
    await both.run("INSERT INTO events (id, account_id, type, customer_id, order_id, payload_hash, issued_at, "
                   "received_at, key_kind, body, effects) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   "e1", "a1", "PURCHASE", "c1", "o1", "hash", NOW, NOW, "SERVER", json.dumps(event_body),
                   json.dumps({"issued": [{"line": "w1", "amount": "12.50"}]}))

    sqlite_rows, pg_rows = await both.rows("SELECT * FROM accounts")
    assert pg_rows == sqlite_rows == [("a1", "Shop", "sandbox", NOW, NOW)]
    sqlite_rows, pg_rows = await both.rows("SELECT id, account_id, code, kind, campaign_id, created_at FROM links")
    assert pg_rows == sqlite_rows
    [(lite_body,)], [(pg_body,)] = await both.rows("SELECT body FROM links")
    assert json.loads(pg_body) == json.loads(lite_body)
    columns = "id, account_id, link_id, tracking_id, clicked_at, platform, bot, answer, user_agent, referer, utm_source"
    sqlite_rows, pg_rows = await both.rows(f"SELECT {columns} FROM clicks")
    assert pg_rows == sqlite_rows == [(1, "a1", "l1", "tr1", NOW, "android", 1, "redirect", "Mozilla/5.0", None,
                                       "news")]
    assert json.loads(await pg.fetchval("SELECT utm FROM clicks")) == {"utm_source": "news"}
    line = "id, account_id, customer_id, reward_id, campaign_id, {amount}, issued_at, expiration_date, source, event_id"
    sqlite_line = lite.execute(f"SELECT {line.format(amount='amount')} FROM wallet_lines").fetchall()
    pg_line = await pg.fetch(f"SELECT {line.format(amount='amount::text')} FROM wallet_lines")
    assert [tuple(r) for r in pg_line] == [tuple(r) for r in sqlite_line]
    assert await pg.fetchval("SELECT amount::text FROM wallet_lines") == "12.50"
    assert await pg.fetchval("SELECT amount FROM wallet_lines") == Decimal("12.50")
    assert await pg.fetchval("SELECT amount > 0 FROM wallet_lines")
    scalar = "id, account_id, type, customer_id, order_id, payload_hash, issued_at, received_at, key_kind, reversed_at"
    sqlite_rows, pg_rows = await both.rows(f"SELECT {scalar} FROM events")
    assert pg_rows == sqlite_rows
    lite_event = lite.execute("SELECT body, effects, reversal FROM events").fetchone()
    pg_event = await pg.fetchrow("SELECT body, effects, reversal FROM events")
    assert json.loads(pg_event["body"]) == json.loads(lite_event[0]) == event_body
    assert json.loads(pg_event["effects"]) == json.loads(lite_event[1])
    assert pg_event["reversal"] is None and lite_event[2] is None
    # The JSON is a document on PostgreSQL: its fields are read as SQLite's json_extract reads them.
    assert await pg.fetchval("SELECT (body->>'value')::numeric FROM events") == Decimal("12.5")
    assert lite.execute("SELECT json_extract(body, '$.value') FROM events").fetchone()[0] == 12.5
