"""The SQLite store: one writer connection, one reader connection, migrations at open.

Writes go through :meth:`Database.transaction`, which serialises writers on an asyncio lock and runs each
unit of work in a short ``BEGIN IMMEDIATE`` transaction on the single aiosqlite writer connection, so
that SQLite never sees two writers and never answers ``SQLITE_BUSY`` to ourselves.

Reads that need not see an open transaction use :attr:`Database.reader`, a plain ``sqlite3`` connection
used directly on the event loop: every read query is an indexed lookup of microseconds, cheaper than the
thread hop aiosqlite makes per statement. WAL lets it read while the writer writes. Reads that visit
many rows (counting campaigns) use :attr:`Database.background`, an aiosqlite connection of their own. The helpers below
(:func:`fetch_one`, :func:`fetch_all`) accept either connection, so repositories serve both.

Migrations are the numbered ``migrations/NNNN_name.sql`` files, applied in order against
``PRAGMA user_version``, each in its own transaction. An applied file is never edited: add a new one. On a
database that already has a schema each applied file is logged with its time (an index over millions of rows
takes a while), and :meth:`Database.open` reports them to a :class:`MigrationProgress` when given one.
"""

from __future__ import annotations

import asyncio
import logging
import re
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Protocol, TypeVar

import aiosqlite

OWNS: tuple[str, ...] = ()

log = logging.getLogger("linksvc.db")

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
_MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")

Row = sqlite3.Row
# A connection inside a write transaction: the aiosqlite writer inside Database.transaction(), or, inside
# Database.run_in_writer(), the writer's own sqlite3 connection on its thread (where calls never suspend).
Tx = aiosqlite.Connection | sqlite3.Connection
Conn = aiosqlite.Connection | sqlite3.Connection  # any connection: read only
Params = Sequence[Any] | Mapping[str, Any]
T = TypeVar("T")


def migration_files(directory: Path = MIGRATIONS_DIR) -> list[tuple[int, Path]]:
    found = []
    for path in sorted(directory.iterdir()):
        match = _MIGRATION_NAME.match(path.name)
        if match:
            found.append((int(match.group(1)), path))
    numbers = [n for n, _ in found]
    if numbers != list(range(1, len(numbers) + 1)):
        raise RuntimeError(f"migrations must be numbered 0001, 0002, ... without gaps: {numbers}")
    return found


class MigrationProgress(Protocol):
    """What :meth:`Database.open` tells about migrations of an existing database (``linksvc.progress`` shows it)."""

    def stage(self, description: str, total: int | None, unit: str) -> None: ...

    def advance(self, amount: int = 1) -> None: ...


CACHE_KIB = 64 * 1024  # the default page cache of each connection (LINKSVC_DB_CACHE_MB)
READER_MMAP_BYTES = 1 << 30


def connect_reader(path: str, cache_kib: int = CACHE_KIB) -> sqlite3.Connection:
    """The read connection: a plain sqlite3 connection, used on the event loop, that may not write."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA busy_timeout=5000")
    conn.execute("PRAGMA query_only=ON")
    # Reads on the event loop must not wait on the disk or pay a read() per page: a large page cache and
    # the file mapped into memory make a random link or customer lookup a few microseconds.
    conn.execute(f"PRAGMA cache_size=-{cache_kib}")
    conn.execute(f"PRAGMA mmap_size={READER_MMAP_BYTES}")
    return conn


async def _connect(path: str, synchronous: str, cache_kib: int = CACHE_KIB) -> aiosqlite.Connection:
    conn = await aiosqlite.connect(path, isolation_level=None)
    conn.row_factory = aiosqlite.Row
    await conn.execute("PRAGMA journal_mode=WAL")
    await conn.execute("PRAGMA foreign_keys=ON")
    await conn.execute("PRAGMA busy_timeout=5000")
    await conn.execute(f"PRAGMA synchronous={synchronous}")
    # Batches of clicks and events touch index pages all over the file: keep them in memory.
    await conn.execute(f"PRAGMA cache_size=-{cache_kib}")
    return conn


class Database:
    """Owns the connections. Open with :meth:`open`, close with :meth:`close`."""

    def __init__(self, path: str, synchronous: str = "FULL", cache_kib: int = CACHE_KIB) -> None:
        self.path = path
        self.synchronous = synchronous
        self.cache_kib = cache_kib
        self._writer: aiosqlite.Connection | None = None
        self._reader: Conn | None = None
        self._background: aiosqlite.Connection | None = None
        self._write_lock = asyncio.Lock()

    async def open(self, progress: MigrationProgress | None = None) -> None:
        """Connects and applies the migrations not applied yet; ``progress`` counts them on a database that
        already had a schema (a new one is made in milliseconds)."""
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._writer = await _connect(self.path, self.synchronous, self.cache_kib)
        await self._migrate(self._writer, progress)
        # An in-memory database is private to its connection: read through the writer then.
        self._reader = self._writer if self.path == ":memory:" else connect_reader(self.path, self.cache_kib)
        self._background = (self._writer if self.path == ":memory:"
                            else await _connect(self.path, self.synchronous, self.cache_kib))

    async def close(self) -> None:
        if isinstance(self._reader, sqlite3.Connection):
            self._reader.close()
        if self._background is not None and self._background is not self._writer:
            await self._background.close()
        if self._writer is not None:
            await self._writer.close()
        self._reader = self._writer = None

    async def _migrate(self, conn: aiosqlite.Connection, progress: MigrationProgress | None) -> None:
        async with conn.execute("PRAGMA user_version") as cur:
            row = await cur.fetchone()
        current = int(row[0]) if row else 0
        pending = [(number, path) for number, path in migration_files() if number > current]
        upgrade = current > 0 and bool(pending)
        if upgrade and progress is not None:
            progress.stage(f"migrating {Path(self.path).name}", len(pending), "migrations")
        for number, path in pending:
            script = path.read_text(encoding="utf-8")
            started = time.monotonic()
            # executescript commits first; the script's own BEGIN/COMMIT makes it one transaction.
            await conn.executescript(
                f"BEGIN IMMEDIATE;\n{script}\nPRAGMA user_version={number};\nCOMMIT;"
            )
            if upgrade:
                log.info("applied migration %s to %s in %.1f s", path.name, self.path, time.monotonic() - started)
                if progress is not None:
                    progress.advance()

    @property
    def reader(self) -> Conn:
        if self._reader is None:
            raise RuntimeError("database is not open")
        return self._reader

    @property
    def background(self) -> Conn:
        """A read connection on its own thread, for the few reads that visit many rows: the event loop
        goes on serving while they run."""
        if self._background is None:
            raise RuntimeError("database is not open")
        return self._background

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """One write unit of work: committed on success, rolled back on any exception."""
        if self._writer is None:
            raise RuntimeError("database is not open")
        async with self._write_lock:
            conn = self._writer
            try:
                await conn.execute("BEGIN IMMEDIATE")
            except BaseException:
                # Cancelled (a stop) while BEGIN ran on the writer's thread: it may still begin. Queued after
                # it, the rollback ends that transaction, so the next unit of work can begin its own.
                await conn.rollback()
                raise
            try:
                yield conn
            except BaseException:
                await conn.rollback()
                raise
            else:
                await conn.commit()

    async def run_in_writer(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Runs ``work`` on the writer's thread with its sqlite3 connection, under the write lock.

        For hot write paths: a unit of work written against the repository functions makes one thread hop
        in all, instead of one per statement (each hop costs more than the statement). Uses aiosqlite's
        ``_execute``/``_conn``, which the pinned version has; the tests run every path through it."""
        if self._writer is None:
            raise RuntimeError("database is not open")
        writer = self._writer
        async with self._write_lock:
            return await writer._execute(lambda: work(writer._conn))  # type: ignore[no-any-return]

    async def ping(self) -> bool:
        return (await fetch_one(self.reader, "SELECT 1")) is not None


async def fetch_one(conn: Conn, sql: str, params: Params = ()) -> Row | None:
    if isinstance(conn, sqlite3.Connection):
        row: Row | None = conn.execute(sql, params).fetchone()
        return row
    async with conn.execute(sql, params) as cur:
        return await cur.fetchone()  # type: ignore[return-value]


async def fetch_all(conn: Conn, sql: str, params: Params = ()) -> list[Row]:
    if isinstance(conn, sqlite3.Connection):
        return conn.execute(sql, params).fetchall()
    async with conn.execute(sql, params) as cur:
        return list(await cur.fetchall())  # type: ignore[arg-type]


async def execute(conn: Tx, sql: str, params: Params = ()) -> int:
    if isinstance(conn, sqlite3.Connection):
        return conn.execute(sql, params).rowcount
    async with conn.execute(sql, params) as cur:
        return cur.rowcount


async def execute_many(conn: Tx, sql: str, rows: Iterable[Sequence[Any]]) -> None:
    if isinstance(conn, sqlite3.Connection):
        conn.executemany(sql, rows)
        return
    await conn.executemany(sql, rows)


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Runs a coroutine that never suspends (the repository functions on a plain sqlite3 connection) to its
    end, without an event loop; one that does suspend is a programming error."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coroutine.close()
    raise RuntimeError("a unit of work run in the writer thread tried to wait for something")


@asynccontextmanager
async def savepoint(tx: Tx, name: str) -> AsyncIterator[None]:
    """A nested unit inside a transaction: rolled back alone when its block raises."""
    if not name.isidentifier():
        raise ValueError(name)
    await execute(tx, f"SAVEPOINT {name}")
    try:
        yield
    except BaseException:
        try:
            await execute(tx, f"ROLLBACK TO {name}")
            await execute(tx, f"RELEASE {name}")
        except sqlite3.OperationalError:  # SQLite already rolled the whole transaction back (a full disk)
            pass
        raise
    await execute(tx, f"RELEASE {name}")
