"""The SQLite store: one write queue, one reader connection, one background reader, migrations at open.

Every write goes through the process's one write queue (:class:`storage.writer.Writer`), which owns the write
connection and the thread it lives on, so that SQLite never sees two writers and never answers ``SQLITE_BUSY``
to ourselves. Two ways in, both turns on the same queue:

- :meth:`Database.write` runs a unit of work (``async def unit(tx)``) on the writer's thread, group committed
  with the units that wait with it: one commit, each caller answered once it is on disk. For hot paths (events,
  click batches): the unit's repository calls make no thread hop at all.
- :meth:`Database.transaction` opens an interactive ``BEGIN IMMEDIATE`` transaction, committed on success and
  rolled back on any exception, for code that waits on other things in between; each statement hops to the
  writer's thread (:class:`storage.writer.WriterSession`).

Reads that need not see an open transaction use :attr:`Database.reader`, a plain ``sqlite3`` connection
used directly on the event loop: every read query is an indexed lookup of microseconds, cheaper than a thread
hop. WAL lets it read while the writer writes. Reads that visit many rows (counting campaigns) use
:attr:`Database.background`, an aiosqlite connection of their own (public API only). The helpers below
(:func:`fetch_one`, :func:`fetch_all`, :func:`execute`, :func:`execute_many`, :func:`savepoint`) accept any of
these connections, so repositories serve every path.

An in-memory database (``:memory:``) is a named shared-cache one, so that the reader and the background
connection see the writer's; they read uncommitted, as they did when the writer's connection was the reader.

Migrations are the numbered ``migrations/NNNN_name.sql`` files, applied on the writer's thread in order against
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
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any, Protocol, TypeVar

import aiosqlite
import asyncpg

from storage import audit_context
from storage.errors import StoreUnavailable
from storage.generations import BUCKET_MODELS, MODELS, Generations
from storage.postgres import PgConnection, PostgresDatabase, is_postgres_url
from storage.writer import Writer, WriterSession

OWNS: tuple[str, ...] = ()

log = logging.getLogger("linksvc.db")

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
_MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")

Row = sqlite3.Row
# A connection inside a write transaction: the session of Database.transaction(), or, in a unit of
# Database.write(), the writer's own sqlite3 connection on its thread (where calls never suspend).
Tx = sqlite3.Connection | WriterSession | PgConnection
Conn = aiosqlite.Connection | sqlite3.Connection | WriterSession | PgConnection  # any connection: read only
Params = Sequence[Any] | Mapping[str, Any]
T = TypeVar("T")
# What the store raises when it fails (a full disk, the lock held elsewhere), for the layers above, which
# do not import the driver: every error of the store, and those of its operation (not of a statement).
# PostgreSQL's are in the same groups: a connection lost or refused, the server shutting down or out of room is
# "operational" (the caller may retry), a constraint is a constraint.
StoreError = (sqlite3.Error, asyncpg.PostgresError, asyncpg.InterfaceError, ConnectionError)
StoreConstraintError = (sqlite3.IntegrityError, asyncpg.IntegrityConstraintViolationError)
StoreOperationalError = (sqlite3.OperationalError, asyncpg.PostgresConnectionError, asyncpg.InterfaceError,
                         asyncpg.InsufficientResourcesError, asyncpg.OperatorInterventionError,
                         asyncpg.SerializationError, asyncpg.DeadlockDetectedError, ConnectionError)


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
READER_MMAP_BYTES = 1 << 32  # SQLite lowers it to its build's maximum (2 GiB by default)


def connect_reader(path: str, cache_kib: int = CACHE_KIB, uri: bool = False) -> sqlite3.Connection:
    """The read connection: a plain sqlite3 connection, used on the event loop, that may not write."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, uri=uri)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA busy_timeout=5000")
    conn.execute("PRAGMA query_only=ON")
    # Reads on the event loop must not wait on the disk or pay a read() per page: a large page cache and
    # the file mapped into memory make a random link or customer lookup a few microseconds.
    conn.execute(f"PRAGMA cache_size=-{cache_kib}")
    conn.execute(f"PRAGMA mmap_size={READER_MMAP_BYTES}")
    return conn


async def _connect_background(target: str, synchronous: str, cache_kib: int, uri: bool) -> aiosqlite.Connection:
    conn = await aiosqlite.connect(target, isolation_level=None, uri=uri)
    conn.row_factory = aiosqlite.Row
    await conn.execute("PRAGMA journal_mode=WAL")
    await conn.execute("PRAGMA foreign_keys=ON")
    await conn.execute("PRAGMA busy_timeout=5000")
    await conn.execute(f"PRAGMA synchronous={synchronous}")
    await conn.execute(f"PRAGMA cache_size=-{cache_kib}")
    return conn


def _user_version(conn: sqlite3.Connection) -> int:
    row = conn.execute("PRAGMA user_version").fetchone()
    return int(row[0]) if row else 0


def _apply(conn: sqlite3.Connection, script: str, number: int) -> None:
    # executescript commits first; the script's own BEGIN/COMMIT makes it one transaction.
    conn.executescript(f"BEGIN IMMEDIATE;\n{script}\nPRAGMA user_version={number};\nCOMMIT;")


MODEL_INDEX = {name: index for index, name in enumerate((*MODELS, *BUCKET_MODELS))}


class WouldWait(Exception):
    """A read asked without awaiting (a ``..._now`` repository function) of a connection that answers only by
    awaiting: anything but a plain ``sqlite3`` one (the event loop's reader on SQLite)."""


class Database:
    """Owns the write queue and the read connections. Open with :meth:`open`, close with :meth:`close`."""

    queued_writes = True  # units wait in one queue for the one writer: what arrives meanwhile can join them

    def __init__(self, path: str, synchronous: str = "FULL", cache_kib: int = CACHE_KIB) -> None:
        self.path = path
        self.synchronous = synchronous
        self.cache_kib = cache_kib
        self._writer: Writer | None = None
        self._generations: Generations | None = None
        self._reader: sqlite3.Connection | None = None
        self._background: aiosqlite.Connection | None = None
        self._target = ""
        self._more: list[aiosqlite.Connection] = []  # readers beyond the background one, opened when first asked
        self._more_lock = asyncio.Lock()

    async def open(self, progress: MigrationProgress | None = None) -> None:
        """Starts the writer and applies the migrations not applied yet; ``progress`` counts them on a
        database that already had a schema (a new one is made in milliseconds)."""
        memory = self.path == ":memory:"
        # In memory: named, so that the read connections share it; gone with the last connection.
        target = f"file:linksvc_{uuid.uuid4().hex}?mode=memory&cache=shared" if memory else self.path
        writer = Writer(target, self.synchronous, self.cache_kib, uri=memory,
                        lock_path=None if memory else f"{self.path}-write.lock")
        try:
            if not memory:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            await writer.open()
        except (OSError, sqlite3.OperationalError) as exc:
            raise StoreUnavailable(f"cannot open the SQLite database at {self.path}: {exc}") from exc
        try:
            await self._migrate(writer, progress)
        except BaseException:
            await writer.close()  # its thread and connection with it
            raise
        generations = Generations(self.path)
        await writer.prepare(generations.open)
        writer.after_commit = generations.publish
        self._generations = generations
        self._writer = writer
        writer.start()
        self._reader = connect_reader(target, self.cache_kib, uri=memory)
        self._target = target
        self._background = await self._connect_more()
        if memory:  # shared cache locks tables: read what the writer's transaction holds, as one connection would
            self._reader.execute("PRAGMA read_uncommitted=ON")

    async def _connect_more(self) -> aiosqlite.Connection:
        memory = self.path == ":memory:"
        conn = await _connect_background(self._target, self.synchronous, self.cache_kib, memory)
        if memory:
            await conn.execute("PRAGMA read_uncommitted=ON")
        return conn

    async def readers(self, count: int) -> Sequence[Conn]:
        """``count`` read connections, each on a thread of its own (the background one first): SQLite runs
        their statements at the same time. Those beyond the background one are opened at the first call that
        needs them and kept until :meth:`close`."""
        async with self._more_lock:
            while len(self._more) < count - 1:
                self._more.append(await self._connect_more())
        return [self.background, *self._more[:count - 1]]

    async def close(self) -> None:
        """Commits the units of work that wait (and lets the waiting transactions run), then closes."""
        if self._writer is not None:
            await self._writer.close()
        if self._generations is not None:
            self._generations.close()
            self._generations = None
        if self._reader is not None:
            self._reader.close()
        if self._background is not None:
            await self._background.close()
        for more in self._more:
            await more.close()
        self._more = []
        self._reader = self._background = None
        self._writer = None

    async def _migrate(self, writer: Writer, progress: MigrationProgress | None) -> None:
        current = await writer.prepare(_user_version)
        pending = [(number, path) for number, path in migration_files() if number > current]
        upgrade = current > 0 and bool(pending)
        if upgrade and progress is not None:
            progress.stage(f"migrating {Path(self.path).name}", len(pending), "migrations")
        for number, path in pending:
            script = path.read_text(encoding="utf-8")
            started = time.monotonic()
            await writer.prepare(partial(_apply, script=script, number=number))
            if upgrade:
                log.info("applied migration %s to %s in %.1f s", path.name, self.path, time.monotonic() - started)
                if progress is not None:
                    progress.advance()

    def generation(self, model: str) -> int:
        """The generation of a read model (``links``, ``access``): one load from memory shared by every
        process on this database. It moves after each committed change to what the model holds."""
        generations = self._generations
        return 0 if generations is None else generations.value(MODEL_INDEX[model])

    @property
    def writer(self) -> Writer:
        """The write queue (its counters: ``groups``, ``units``, ``sessions``)."""
        if self._writer is None:
            raise RuntimeError("database is not open")
        return self._writer

    @property
    def reader(self) -> sqlite3.Connection:
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
    async def transaction(self) -> AsyncIterator[WriterSession]:
        """One interactive write unit of work, a turn of the write queue: committed on success, rolled back on
        any exception."""
        entry = audit_context.pending()
        async with self.writer.session() as tx:
            yield tx
            if entry is not None:  # the request's audit entry, in the transaction of its change
                await audit_context.claim(entry, tx)

    async def write(self, unit: Callable[[Tx], Coroutine[Any, Any, T]], serial_key: str | None = None) -> T:
        """Runs ``unit`` on the writer's thread in the next group commit; returns its result once committed.
        (``serial_key`` names units that must take turns; the one writer already runs every unit in turn.)

        ``unit`` is async service code whose repository calls, on the writer's plain sqlite3 connection, never
        suspend; it must wait for nothing else. Raising, it is rolled back alone; a failure of the store fails
        its whole group."""
        entry = audit_context.pending()
        return await self.writer.run(audit_context.carried(unit, entry))

    async def ping(self) -> bool:
        return (await fetch_one(self.reader, "SELECT 1")) is not None


AnyDatabase = Database | PostgresDatabase  # either store; the services type their store with this


def dialect(conn: Conn) -> str:
    """``sqlite`` or ``postgresql``: for the few statements a repository writes once per store."""
    return "postgresql" if isinstance(conn, PgConnection) else "sqlite"


def json_member(conn: Conn, column: str, member: str) -> str:
    """The SQL text of one top-level member of a JSON column (``body``, ``c.body``), as text or number: the
    one expression the two dialects write differently."""
    if dialect(conn) == "postgresql":
        return f"{column} ->> '{member}'"
    return f"json_extract({column}, '$.{member}')"


def open_store(path: str, url: str | None = None, synchronous: str = "FULL", cache_kib: int = CACHE_KIB,
               state_dir: str | None = None) -> Database | PostgresDatabase:
    """The store the settings name: PostgreSQL when ``url`` is a ``postgresql://`` URL, else SQLite at
    ``path`` (a ``sqlite:///path`` URL names the file too)."""
    if is_postgres_url(url):
        assert url is not None
        return PostgresDatabase(url, state_dir or str(Path(path).parent if path != ":memory:" else "data"))
    if url and url.startswith("sqlite:///"):  # sqlite:///relative/file, sqlite:////absolute/file
        path = url.removeprefix("sqlite:///")
    elif url:
        raise ValueError(f"a database URL is postgresql://... or sqlite:///path, not {url.split(':', 1)[0]}:...")
    return Database(path, synchronous, cache_kib)


ROWS_PER_STATEMENT = 512  # rows of a multi-row statement at most (at most 63 parameters a row: under 32,766)


def statement_chunks(rows: Sequence[T], most: int = ROWS_PER_STATEMENT) -> Iterable[Sequence[T]]:
    """``rows`` in order, in chunks of ``most``, the rest in chunks of falling powers of two. A multi-row
    statement's text depends on its number of rows, and compiling one costs about as much as running it
    (about 3 µs a row each on SQLite): in these sizes each statement has at most ten texts, which the
    connection's statement cache (and PostgreSQL's prepared statements) keep from one batch to the next,
    whatever the size of each batch."""
    start, left = 0, len(rows)
    while left:
        size = most if left >= most else 1 << (left.bit_length() - 1)
        yield rows[start:start + size]
        start, left = start + size, left - size


async def fetch_one(conn: Conn, sql: str, params: Params = ()) -> Row | None:
    if isinstance(conn, sqlite3.Connection):
        row: Row | None = conn.execute(sql, params).fetchone()
        return row
    if isinstance(conn, WriterSession | PgConnection):
        return await conn.fetch_one(sql, params)  # type: ignore[return-value]
    async with conn.execute(sql, params) as cur:
        return await cur.fetchone()  # type: ignore[return-value]


async def fetch_all(conn: Conn, sql: str, params: Params = ()) -> list[Row]:
    if isinstance(conn, sqlite3.Connection):
        return conn.execute(sql, params).fetchall()
    if isinstance(conn, WriterSession | PgConnection):
        return await conn.fetch_all(sql, params)  # type: ignore[return-value]
    async with conn.execute(sql, params) as cur:
        return list(await cur.fetchall())  # type: ignore[arg-type]


async def execute(conn: Tx, sql: str, params: Params = ()) -> int:
    if isinstance(conn, sqlite3.Connection):
        return conn.execute(sql, params).rowcount
    return await conn.execute(sql, params)


async def execute_many(conn: Tx, sql: str, rows: Iterable[Sequence[Any]]) -> None:
    if isinstance(conn, sqlite3.Connection):
        conn.executemany(sql, rows)
        return
    await conn.execute_many(sql, rows)


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
        except StoreOperationalError:  # SQLite already rolled the whole transaction back (a full disk)
            pass
        raise
    await execute(tx, f"RELEASE {name}")
