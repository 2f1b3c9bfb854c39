"""The PostgreSQL store (asyncpg): the same repositories as on SQLite, on a server several nodes share.

Selected by ``LINKSVC_DATABASE_URL=postgresql://...`` (see :func:`storage.db.open_store`).
:class:`PostgresDatabase` has the public face of :class:`storage.db.Database` (``write``, ``transaction``,
``reader``, ``background``, ``generation``, ``ping``), so the services above do not know which store they use:

- **Statements are the repositories' own.** They are written for SQLite (``?`` and ``:name`` parameters,
  ``INSERT OR IGNORE``); :func:`translate` turns each into PostgreSQL's form once and caches it. What differs
  beyond that is written per dialect in the repository (:func:`storage.db.dialect`).
- **Values travel as SQLite has them.** Times are ISO-8601 UTC text in both stores; amounts are ``numeric``
  here and decimal text there, and both reach Python as the same text; JSON documents are ``jsonb`` here and
  text there, and both reach Python as text. The connection's codecs make the integers, numbers and text of a
  statement's parameters what the column wants, as SQLite's type affinity does.
- **Every write is serializable.** SQLite has one writer, so a unit of work that reads then writes (a rate
  limit's count, a wallet line's balance, an order id's first use) sees nothing change under it. Here several
  nodes write at once: each unit runs at ``SERIALIZABLE`` and is run again, whole, when PostgreSQL refuses its
  commit as not serializable (or a deadlock), up to :data:`RETRIES` times; an interactive transaction is not
  re-run (its code waited on other things) and its caller gets the store's error.
- **Read models follow every node's writes.** The triggers of the ``generations`` table bump a counter and
  ``NOTIFY linksvc_generations`` with the model's name; one connection per process ``LISTEN``s and advances
  the process's counters, which readers compare with one dictionary read (no query). A write made by this
  process advances them before its caller is answered (the triggers note what changed in the transaction's
  ``linksvc.changed`` setting, read before ``COMMIT``), so read-your-writes holds on the node that wrote;
  other nodes follow within the notification's delay. After the listening connection is lost, every counter
  is advanced once it is back (what changed meanwhile is unknown).
- **Migrations** are ``migrations/postgresql/NNNN_name.sql``, applied at open in order, each in its own
  transaction, under an advisory lock: several nodes starting at once apply each exactly once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import re
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import asyncpg

from storage import audit_context
from storage.errors import StoreUnavailable
from storage.generations import MODELS

OWNS: tuple[str, ...] = ("schema_migrations",)

log = logging.getLogger("linksvc.db")

T = TypeVar("T")
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations" / "postgresql"
_MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
MIGRATION_LOCK = 0x6C696E6B  # the advisory lock key migrations are applied under ("link")
RETRIES = 20  # a unit refused as not serializable is run again this many times at most
BACKOFF_BASE, BACKOFF_CAP = 0.004, 0.25  # seconds: the pause before a unit runs again (see write())
CHANNEL = "linksvc_generations"
RETRYABLE = (asyncpg.SerializationError, asyncpg.DeadlockDetectedError)


def is_postgres_url(url: str | None) -> bool:
    return bool(url) and urlsplit(url or "").scheme in ("postgresql", "postgres")


CONNECT_SECONDS = 10.0


def where(url: str) -> str:
    """``host:port/database`` of a URL, for messages: never its user's password."""
    parts = urlsplit(url)
    host = parts.hostname or "the local socket"
    return f"{host}:{parts.port or 5432}{parts.path or '/'}"


@contextlib.contextmanager
def _unavailable(url: str) -> Iterator[None]:
    """Connection failures as :class:`StoreUnavailable`: the server's own sentence, or the socket's."""
    try:
        yield
    except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
        reason = os.strerror(exc.errno) if isinstance(exc, OSError) and exc.errno else str(exc) or type(exc).__name__
        raise StoreUnavailable(f"cannot open the PostgreSQL database at {where(url)}: {reason}") from exc


async def create_database(url: str) -> None:
    """Creates the database ``url`` names, connected to the server's ``postgres`` database; a node that
    created it a moment earlier is no error."""
    name = urlsplit(url).path.lstrip("/")
    maintenance = urlsplit(url)._replace(path="/postgres").geturl()
    try:
        conn = await asyncpg.connect(maintenance, statement_cache_size=0, timeout=CONNECT_SECONDS)
        try:
            await conn.execute(f"CREATE DATABASE {_quoted(name)}")
            log.info("created the PostgreSQL database %s", where(url))
        except (asyncpg.DuplicateDatabaseError, asyncpg.UniqueViolationError):
            pass  # another node made it between our attempt to connect and this statement
        finally:
            await conn.close()
    except (OSError, TimeoutError, asyncpg.PostgresError) as exc:
        raise StoreUnavailable(f"the PostgreSQL database {where(url)} does not exist and could not be created: "
                               f"{exc}") from exc


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def migration_files(directory: Path = MIGRATIONS_DIR) -> list[tuple[int, Path]]:
    found = sorted((int(m.group(1)), path) for path in directory.iterdir()
                   if (m := _MIGRATION_NAME.match(path.name)))
    numbers = [n for n, _ in found]
    if numbers != list(range(1, len(numbers) + 1)):
        raise RuntimeError(f"migrations must be numbered 0001, 0002, ... without gaps: {numbers}")
    return found


# ---------------------------------------------------------------------------------------------------------
# Statements: SQLite's form to PostgreSQL's.

_CACHE: dict[str, tuple[str, tuple[str, ...] | None]] = {}
_INSERT_OR_IGNORE = re.compile(r"^\s*INSERT\s+OR\s+IGNORE\s+INTO\b", re.IGNORECASE)
_RETURNING = re.compile(r"\bRETURNING\b", re.IGNORECASE)


def translate(sql: str) -> tuple[str, tuple[str, ...] | None]:
    """(PostgreSQL's text, the parameter names in ``$n`` order for a ``:name`` statement, else None).

    ``?`` becomes ``$1``, ``$2``...; ``:name`` becomes one ``$n`` per distinct name; quoted text and
    identifiers, ``::`` casts and comments are left alone; ``INSERT OR IGNORE INTO`` becomes ``INSERT INTO ...
    ON CONFLICT DO NOTHING``. Anything else SQLite's own is the repository's to write per dialect."""
    cached = _CACHE.get(sql)
    if cached is not None:
        return cached
    out: list[str] = []
    names: list[str] = []
    positional = 0
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        if ch in ("'", '"'):
            end = i + 1
            while end < n:
                if sql[end] == ch:
                    if end + 1 < n and sql[end + 1] == ch:  # a doubled quote inside
                        end += 2
                        continue
                    break
                end += 1
            out.append(sql[i:end + 1])
            i = end + 1
        elif ch == "-" and sql.startswith("--", i):
            end = sql.find("\n", i)
            end = n if end < 0 else end
            out.append(sql[i:end])
            i = end
        elif ch == "?":
            positional += 1
            out.append(f"${positional}")
            i += 1
        elif ch == ":" and sql.startswith("::", i):
            out.append("::")
            i += 2
        elif ch == ":" and i + 1 < n and (sql[i + 1].isalpha() or sql[i + 1] == "_"):
            end = i + 1
            while end < n and (sql[end].isalnum() or sql[end] == "_"):
                end += 1
            name = sql[i + 1:end]
            if name not in names:
                names.append(name)
            out.append(f"${names.index(name) + 1}")
            i = end
        else:
            out.append(ch)
            i += 1
    if positional and names:
        raise ValueError(f"a statement mixes ? and :name parameters: {sql}")
    text = "".join(out)
    if _INSERT_OR_IGNORE.match(text):
        text = _INSERT_OR_IGNORE.sub("INSERT INTO", text, count=1)
        returning = _RETURNING.search(text)
        if returning:
            text = f"{text[:returning.start()]}ON CONFLICT DO NOTHING {text[returning.start():]}"
        else:
            text = f"{text.rstrip().rstrip(';')} ON CONFLICT DO NOTHING"
    result = (text, tuple(names) if names else None)
    _CACHE[sql] = result
    return result


def _arguments(names: tuple[str, ...] | None, params: Any) -> Sequence[Any]:
    if names is None:
        if isinstance(params, Mapping):
            raise ValueError("named parameters given to a statement with ? parameters")
        return list(params)
    if not isinstance(params, Mapping):
        raise ValueError("a statement with :name parameters needs a mapping")
    return [params[name] for name in names]


def _rowcount(status: str) -> int:
    """The rows a command changed, from its status (``INSERT 0 3``, ``UPDATE 2``, ``DELETE 0``)."""
    last = status.rsplit(" ", 1)[-1]
    return int(last) if last.isdigit() else -1


# ---------------------------------------------------------------------------------------------------------
# Codecs: what SQLite's type affinity does to a parameter, and SQLite's text for what comes back.


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, bytes):
        return value.decode("utf-8")
    return str(value)


def _integer(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


async def _reset_connection(conn: asyncpg.Connection) -> None:
    """What the pool does with a connection given back: roll back a transaction left open (a unit cancelled
    midway). asyncpg's default reset also unlocks advisory locks, closes cursors, stops listening and resets
    settings, one more round trip after every statement the reader runs (bench.pgdriver); no pooled connection
    holds any of those here: session locks and ``LISTEN`` have connections of their own, and settings are set
    ``LOCAL`` to a transaction."""
    if conn.is_in_transaction():
        await conn.execute("ROLLBACK")


async def _init_connection(conn: asyncpg.Connection) -> None:
    for name in ("int2", "int4", "int8"):
        await conn.set_type_codec(name, schema="pg_catalog", encoder=_integer, decoder=int, format="text")
    await conn.set_type_codec("numeric", schema="pg_catalog", encoder=_text, decoder=str, format="text")
    await conn.set_type_codec("float8", schema="pg_catalog", encoder=_text, decoder=float, format="text")
    await conn.set_type_codec("text", schema="pg_catalog", encoder=_text, decoder=str, format="text")
    for name in ("json", "jsonb"):
        await conn.set_type_codec(name, schema="pg_catalog", encoder=_text, decoder=str, format="text")


# ---------------------------------------------------------------------------------------------------------
# Connections.


class PgConnection:
    """A connection the repository helpers of :mod:`storage.db` accept: a pooled connection inside a
    transaction (a write), or the pool itself (a read, each statement on whichever connection is free)."""

    dialect = "postgresql"

    def __init__(self, target: asyncpg.Connection | asyncpg.Pool) -> None:
        self._target = target

    async def execute(self, sql: str, params: Any = ()) -> int:
        text, names = translate(sql)
        return _rowcount(await self._target.execute(text, *_arguments(names, params)))

    async def execute_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        text, names = translate(sql)
        await self._target.executemany(text, [_arguments(names, row) for row in rows])

    async def fetch_one(self, sql: str, params: Any = ()) -> asyncpg.Record | None:
        text, names = translate(sql)
        row: asyncpg.Record | None = await self._target.fetchrow(text, *_arguments(names, params))
        return row

    async def fetch_all(self, sql: str, params: Any = ()) -> list[asyncpg.Record]:
        text, names = translate(sql)
        return list(await self._target.fetch(text, *_arguments(names, params)))


@dataclass
class WriteCounters:
    """What :attr:`storage.db.Database.writer` counts, for the metrics: transactions (``groups``), units
    of work, interactive sessions, and units run again after a serialization failure."""

    groups: int = 0
    units: int = 0
    sessions: int = 0
    retries: int = 0

    @property
    def running(self) -> bool:
        return True


class PostgresDatabase:
    """The store on PostgreSQL. Open with :meth:`open`, close with :meth:`close`."""

    dialect = "postgresql"

    def __init__(self, url: str, state_dir: str = "data", min_size: int = 2, max_size: int = 10) -> None:
        self.url = url
        parts = urlsplit(url)
        database = (parts.path or "/").lstrip("/") or "postgres"
        # Files this process keeps beside the store (click journals and spill files) are named from this.
        self.path = str(Path(state_dir) / f"postgresql-{parts.hostname or 'local'}-{parts.port or 5432}-{database}")
        self.min_size = min_size
        self.max_size = max_size
        self.listen_url = url  # LISTEN needs a session of its own: not through PgBouncer in transaction mode
        self.statement_cache = 100  # prepared statements kept per connection (0 behind an old PgBouncer)
        self._pool: asyncpg.Pool | None = None
        self._listener: asyncpg.Connection | None = None
        self._listen_task: asyncio.Task[None] | None = None
        self._generations = dict.fromkeys(MODELS, 0)
        self._closing = False
        self.counters = WriteCounters()

    queued_writes = False  # each unit begins at once, on a connection of its own (SQLite's wait in one queue)

    async def open(self, progress: Any = None) -> None:
        """Migrates (creating the database first when the server has none of that name, as SQLite makes its
        file), then opens the pool and the listening connection. A server that cannot be reached or refuses
        the connection is :class:`StoreUnavailable`, naming where (without the password) and why."""
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        with _unavailable(self.listen_url):
            await self._migrate(progress)
        with _unavailable(self.url):
            self._pool = await asyncpg.create_pool(
                self.url, min_size=self.min_size, max_size=self.max_size, init=_init_connection,
                reset=_reset_connection,
                statement_cache_size=self.statement_cache,
                server_settings={"timezone": "UTC", "application_name": "linksvc"})
        with _unavailable(self.listen_url):
            await self._listen()

    async def close(self) -> None:
        self._closing = True
        if self._listen_task is not None:
            self._listen_task.cancel()
            self._listen_task = None
        if self._listener is not None:
            with suppress(OSError, asyncpg.PostgresError):
                await self._listener.close()
            self._listener = None
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    async def _migrate(self, progress: Any) -> None:
        # A session lock: on the listening URL, which reaches the server itself (not through PgBouncer).
        try:
            conn = await self._session()
        except asyncpg.InvalidCatalogNameError:
            await create_database(self.listen_url)
            conn = await self._session()
        try:
            await conn.execute("SELECT pg_advisory_lock($1)", MIGRATION_LOCK)
            try:
                await conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, "
                                   "name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())")
                current = await conn.fetchval("SELECT coalesce(max(version), 0) FROM schema_migrations")
                pending = [(n, p) for n, p in migration_files() if n > current]
                if current and pending and progress is not None:
                    progress.stage("migrating the PostgreSQL database", len(pending), "migrations")
                for number, path in pending:
                    async with conn.transaction():
                        await conn.execute(path.read_text(encoding="utf-8"))
                        await conn.execute("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                                           number, path.name)
                    if current:
                        log.info("applied migration %s", path.name)
                        if progress is not None:
                            progress.advance()
            finally:
                await conn.execute("SELECT pg_advisory_unlock($1)", MIGRATION_LOCK)
        finally:
            await conn.close()

    async def _session(self) -> asyncpg.Connection:
        return await asyncpg.connect(self.listen_url, statement_cache_size=0, timeout=CONNECT_SECONDS,
                                     server_settings={"timezone": "UTC", "application_name": "linksvc"})

    # -- read models' generations ----------------------------------------------------------------------

    async def _listen(self) -> None:
        listener = await asyncpg.connect(self.listen_url, statement_cache_size=0,
                                         server_settings={"application_name": "linksvc-listen"})
        await listener.add_listener(CHANNEL, self._notified)
        listener.add_termination_listener(self._listener_lost)
        self._listener = listener
        for name in self._generations:  # whatever changed before we listened
            self._generations[name] += 1

    def _notified(self, connection: object, pid: int, channel: str, payload: str) -> None:
        if payload in self._generations:
            self._generations[payload] += 1

    def _listener_lost(self, connection: object) -> None:
        if self._closing:
            return
        self._listener = None
        self._listen_task = asyncio.get_running_loop().create_task(self._relisten())

    async def _relisten(self) -> None:
        delay = 0.1
        while not self._closing:
            try:
                await self._listen()
                return
            except (OSError, asyncpg.PostgresError) as exc:
                log.warning("listening for changes on PostgreSQL failed (%s); again in %.1f s", exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)

    def generation(self, model: str) -> int:
        # A bucket of the wallets (``wallets/N``) is the whole model here: no trigger stamps buckets on PostgreSQL,
        # where the customer lookup reads the store every time (linksvc.customers.held holds only SQLite's).
        return self._generations[model.partition("/")[0]]

    def _changed(self, noted: str | None) -> None:
        for name in set(filter(None, (noted or "").split(","))):
            if name in self._generations:
                self._generations[name] += 1

    # -- connections ----------------------------------------------------------------------------------

    @property
    def pool(self) -> asyncpg.Pool:
        if self._pool is None:
            raise RuntimeError("database is not open")
        return self._pool

    @property
    def reader(self) -> PgConnection:
        return PgConnection(self.pool)

    @property
    def background(self) -> PgConnection:
        return PgConnection(self.pool)

    async def readers(self, count: int) -> Sequence[PgConnection]:
        """``count`` read connections that run statements at the same time: the pool gives each statement
        a connection of its own."""
        return [PgConnection(self.pool) for _ in range(count)]

    @property
    def writer(self) -> WriteCounters:
        return self.counters

    async def ping(self) -> bool:
        return await self.pool.fetchval("SELECT 1") == 1

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[PgConnection]:
        """One interactive serializable transaction: committed on success, rolled back on any exception."""
        entry = audit_context.pending()
        async with self.pool.acquire() as conn:
            transaction = conn.transaction(isolation="serializable")
            await transaction.start()
            try:
                yield PgConnection(conn)
                if entry is not None:  # the request's audit entry, in the transaction of its change
                    await audit_context.claim(entry, PgConnection(conn))
                noted = await conn.fetchval("SELECT current_setting('linksvc.changed', true)")
            except BaseException:
                await transaction.rollback()
                raise
            await transaction.commit()
            self.counters.sessions += 1
            self._changed(noted)

    async def write(self, unit: Callable[[Any], Coroutine[Any, Any, T]], serial_key: str | None = None) -> T:
        """Runs ``unit`` in a serializable transaction; again, whole, when PostgreSQL refuses to commit it as
        not serializable (up to :data:`RETRIES` times).

        With ``serial_key``, the units of that key (an account's writes to its customers and wallets) take
        turns instead, on every node: each first waits for a transaction-level advisory lock on the key, then
        runs at ``READ COMMITTED``, so that every statement after the wait sees what the previous holder
        committed. ``SERIALIZABLE`` would keep the snapshot taken when the wait began, and a unit that waited
        would be refused as soon as it touched what the holder changed, again and again while the holder's
        node keeps writing (docs/decisions.md, "Contention")."""
        isolation = "serializable" if serial_key is None else "read_committed"
        entry = audit_context.pending()
        unit = audit_context.carried(unit, entry)
        for attempt in range(RETRIES + 1):
            try:
                async with self.pool.acquire() as conn, conn.transaction(isolation=isolation):
                    if serial_key is not None:
                        await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", serial_key)
                    result = await unit(PgConnection(conn))
                    noted = await conn.fetchval("SELECT current_setting('linksvc.changed', true)")
            except RETRYABLE:
                if entry is not None:
                    entry.written = False  # rolled back with the unit: the next try writes it again
                if attempt == RETRIES:
                    raise
                self.counters.retries += 1
                # Full jitter over a doubling ceiling (4 ms, 8 ms, ... at most a quarter second): units that
                # collided do not meet again at once, and 20 tries span a few seconds, not a few milliseconds.
                await asyncio.sleep(random.uniform(0, min(BACKOFF_CAP, BACKOFF_BASE * 2 ** attempt)))
                continue
            self.counters.units += 1
            self.counters.groups += 1
            self._changed(noted)
            return result
        raise AssertionError("unreachable")


__all__ = ["PgConnection", "PostgresDatabase", "is_postgres_url", "translate"]
