"""The suite on PostgreSQL: ``LINKSVC_TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres``.

Given that URL (a database the tests may create databases from), each test process of the run creates a
fresh database of its own (``linksvc_t_<hex>``), migrates it once, and drops it at the end of the run; every
test that takes the ``settings`` fixture then gets it back empty, as a new SQLite file is: every table
emptied and the rows the migrations seed put back. Unset, the suite runs on SQLite files as always.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import secrets
import subprocess
import tempfile
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from linksvc.settings import REPO_ROOT
from storage.db import Database
from storage.postgres import PostgresDatabase

ENV = "LINKSVC_TEST_DATABASE_URL"
DEFAULT_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"


ENSURE = REPO_ROOT / "scripts" / "ensure-postgres"
# The browser tests' install lock: two apt-gets at once would fail on dpkg's own lock.
INSTALL_LOCK = os.path.join(tempfile.gettempdir(), "linksvc-tests-chromium-install.lock")


def ensure_server() -> None:
    """A PostgreSQL server on 127.0.0.1:5432 for the tests that need one (``scripts/ensure-postgres``: started
    with Debian's pg_ctlcluster, installed first when absent and this is root), so that the README's test
    command needs nothing done by hand. A failure is left to the tests, which say what they could not reach."""
    with open(INSTALL_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run(["bash", str(ENSURE)], check=False, timeout=1200)


# Whether the test running now may read the run's store: True when it requests ``store_choice``, False when it
# does not (it then runs in the SQLite run only: tests/conftest.py), None between tests (collection, skip marks).
FOLLOWS_THE_RUN: bool | None = None


def admin_url() -> str | None:
    """``LINKSVC_TEST_DATABASE_URL``, or None on SQLite: the one place a test learns which store the run tests.

    A test that reads it while it runs must request the ``store_choice`` fixture (directly, through one of
    its fixtures, or with ``@pytest.mark.usefixtures("store_choice")``): that is what keeps it in the
    PostgreSQL run, which leaves out every other test (tests/conftest.py). One that does not fails here, in
    either run, rather than silently running on SQLite only."""
    if FOLLOWS_THE_RUN is False:
        raise AssertionError(
            "this test picks its store from LINKSVC_TEST_DATABASE_URL but does not request the store_choice "
            "fixture, so the PostgreSQL run would leave it out: request store_choice (directly, through a "
            "fixture, or with @pytest.mark.usefixtures('store_choice'))")
    return os.environ.get(ENV) or None


def with_database(url: str, database: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{database}", parts.query, parts.fragment))


@dataclass
class TestDatabase:
    url: str
    name: str
    tables: list[str]
    seeds: dict[str, tuple[list[str], list[tuple[object, ...]]]]

    def reset(self) -> None:
        asyncio.run(self._reset())

    async def _reset(self) -> None:
        """The database as migrated, like a new SQLite file: the tables a test wrote to emptied, the sequences
        it drew from restarted, the migrations' rows put back.

        Not ``TRUNCATE``: truncating the 43 tables (or one, with its cascade) takes 0.5 to 1 s on these
        machines, for every test that uses the store; finding the tables that hold a row takes one query, and
        deleting their rows a few milliseconds. The deletes skip triggers and foreign-key checks
        (``session_replication_role``), as ``TRUNCATE`` does, since every table ends empty; ``VACUUM`` then
        gives those tables back their empty pages, so the next test's rows are stored, and read back
        unordered, as in a fresh table. Nothing here needs to survive a crash of the server: commits do not
        wait for the disk."""
        conn = await asyncpg.connect(self.url, server_settings={"synchronous_commit": "off"})
        try:
            filled = {self.tables[int(row[0])] for row in await conn.fetch(self._probe())}
            emptied = sorted(filled | {f'"{table}"' for table in self.seeds})
            async with conn.transaction():
                await conn.execute("SET LOCAL session_replication_role = replica")
                await conn.execute("".join(f"DELETE FROM {table};" for table in emptied))
                await conn.execute("SET LOCAL session_replication_role = DEFAULT")
                await conn.execute(
                    "SELECT setval(format('%I.%I', schemaname, sequencename)::regclass, start_value, false) "
                    "FROM pg_sequences WHERE schemaname = 'public' AND last_value IS NOT NULL")
                for table, (columns, rows) in self.seeds.items():
                    await conn.copy_records_to_table(table, records=rows, columns=columns)
            await conn.execute(f"VACUUM {', '.join(emptied)}")
        finally:
            await conn.close()

    def _probe(self) -> str:
        """One query naming (by position in ``tables``) every table that holds a row."""
        return " UNION ALL ".join(f"(SELECT {i} FROM {table} LIMIT 1)" for i, table in enumerate(self.tables))


async def _create(admin: str) -> TestDatabase:
    name = f"linksvc_t_{secrets.token_hex(6)}"
    conn = await asyncpg.connect(admin)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    url = with_database(admin, name)
    db = PostgresDatabase(url)
    await db._migrate(None)  # the schema once; each test empties it instead of migrating again
    conn = await asyncpg.connect(url)
    try:
        tables = [r[0] for r in await conn.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_migrations'")]
        seeds: dict[str, tuple[list[str], list[tuple[object, ...]]]] = {}
        for table in tables:
            rows = await conn.fetch(f'SELECT * FROM "{table}"')
            if rows:
                columns = list(rows[0].keys())
                seeds[table] = (columns, [tuple(r) for r in rows])
    finally:
        await conn.close()
    return TestDatabase(url, name, [f'"{t}"' for t in tables], seeds)


async def _drop(admin: str, name: str) -> None:
    conn = await asyncpg.connect(admin)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


# Databases of finished tests, dropped on a thread of their own: a drop takes 1 to 4 s on these machines, which
# the next test need not wait for. ``finish_drops`` (the end of the test session) waits for them.
_dropper: ThreadPoolExecutor | None = None
_drops: list[Future[None]] = []


def _drop_later(admin: str, name: str) -> None:
    global _dropper
    if _dropper is None:
        _dropper = ThreadPoolExecutor(1, thread_name_prefix="drop-database")
    _drops.append(_dropper.submit(asyncio.run, _drop(admin, name)))


def finish_drops() -> list[str]:
    """Waits for the databases :func:`fresh_database` left to drop; the errors of those that failed."""
    errors = []
    for drop in _drops:
        try:
            drop.result(timeout=120)
        except Exception as exc:  # reported by the caller, after the others are dropped
            errors.append(f"{type(exc).__name__}: {exc}")
    _drops.clear()
    return errors


@contextlib.asynccontextmanager
async def fresh_database(admin: str = DEFAULT_ADMIN) -> AsyncIterator[str]:
    """The URL of a new, empty PostgreSQL database, dropped after the block (on a thread of its own; with
    ``FORCE``, so a connection left open does not keep it)."""
    name = f"linksvc_t_{secrets.token_hex(6)}"
    try:
        conn = await asyncpg.connect(admin, timeout=10)
    except (OSError, asyncpg.PostgresError) as exc:
        raise AssertionError(f"PostgreSQL is not reachable at {admin} ({exc}); scripts/ensure-postgres starts it"
                             ) from exc
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    try:
        yield with_database(admin, name)
    finally:
        _drop_later(admin, name)


async def open_empty_store(pg: TestDatabase | None) -> Database | PostgresDatabase:
    """An empty, opened store: SQLite in memory, or this process's PostgreSQL database emptied."""
    if pg is None:
        db: Database | PostgresDatabase = Database(":memory:")
    else:
        await pg._reset()
        db = PostgresDatabase(pg.url)
    await db.open()
    return db


def session_database() -> Iterator[TestDatabase | None]:
    admin = admin_url()
    if admin is None:
        yield None
        return
    database = asyncio.run(_create(admin))
    try:
        yield database
    finally:
        asyncio.run(_drop(admin, database.name))


@contextlib.contextmanager
def fresh_database_sync(admin: str = DEFAULT_ADMIN) -> Iterator[str]:
    """:func:`fresh_database` for synchronous code (fixtures that start ``linksvc serve`` processes): the URL
    of a new, empty PostgreSQL database, dropped at the end of the block. Its event loop runs on a thread of
    its own, so the caller may be inside a running loop (Playwright's sync API keeps one in the main thread)."""
    manager = fresh_database(admin)
    loop = asyncio.new_event_loop()
    with ThreadPoolExecutor(1, thread_name_prefix="fresh-database") as thread:
        try:
            url = thread.submit(loop.run_until_complete, manager.__aenter__()).result()
            try:
                yield url
            finally:
                thread.submit(loop.run_until_complete, manager.__aexit__(None, None, None)).result()
        finally:
            thread.submit(loop.close).result()
