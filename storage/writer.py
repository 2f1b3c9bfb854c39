"""The one write path: a queue that owns the process's SQLite write connection and the thread it lives on.

Every write of the process is a turn on this queue, taken in arrival order:

- a **unit** (:meth:`Writer.run`): the usual async service code, given the writer's plain ``sqlite3``
  connection on the writer's thread, where the repository calls never suspend (:func:`run_sync`). Units that
  wait together are **group committed**: one ``BEGIN IMMEDIATE``, a savepoint per unit, one ``COMMIT``, and
  only then is each caller answered. A unit that raises is rolled back alone and gets its exception (its
  own code's, or a constraint its rows break: the transaction goes on without it); a failure of the store
  itself (a full disk, the lock held elsewhere: :func:`_fails_the_group`) fails the whole group and every
  unit gets it: nothing is answered as stored that is not committed. A commit with ``synchronous=FULL``
  waits for the disk; one per group rather than one per request lets ingest go faster than the disk syncs.
- a **session** (:meth:`Writer.session`): an interactive transaction for code that waits on other things
  between statements. It has the writer to itself from its ``BEGIN IMMEDIATE`` to its ``COMMIT`` (or
  ``ROLLBACK`` on any exception, a cancellation included); each statement hops to the writer's thread
  through the :class:`WriterSession` it is given.

The connection is made on the writer's thread and only ever used there, through a one-thread executor: public
stdlib only, no other library's threads or private API. SQLite never sees two writers from this process, so
it never answers ``SQLITE_BUSY`` to ourselves.
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import sqlite3
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from functools import partial
from typing import Any, TypeVar

OWNS: tuple[str, ...] = ()

log = logging.getLogger("linksvc.db")

T = TypeVar("T")
MAX_UNITS = 2000  # units in one group at most
LOCK_WAIT_S = 5.0  # the processes' write lock is waited for this long at most (SQLite's busy timeout)


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Runs a coroutine that never suspends (the repository functions on a plain sqlite3 connection) to its
    end, without an event loop; one that does suspend is a programming error."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coroutine.close()
    raise RuntimeError("a unit of work run in the writer thread tried to wait for something")


def connect_writer(target: str, synchronous: str, cache_kib: int, uri: bool = False) -> sqlite3.Connection:
    """The write connection; call it on the thread that is to use it."""
    # The multi-row statements of the batches come in a few sizes per table (storage.db.statement_chunks):
    # room for all of them in the statement cache, beside the reads (128 by default).
    conn = sqlite3.connect(target, isolation_level=None, uri=uri, cached_statements=1024)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=5000")
    conn.execute(f"PRAGMA synchronous={synchronous}")
    # Batches of clicks and events touch index pages all over the file: keep them in memory.
    conn.execute(f"PRAGMA cache_size=-{cache_kib}")
    add_functions(conn)
    return conn


def add_functions(conn: sqlite3.Connection) -> None:
    """The SQL functions migrations may use beside SQLite's own (:class:`DecimalSum`)."""
    conn.create_aggregate("decimal_sum", 1, DecimalSum)  # type: ignore[arg-type]


class DecimalSum:
    """``decimal_sum(column)``: the exact sum of decimal text (SQL's ``sum`` would add it as REAL), as text;
    NULLs are skipped. Migrations that add up stored amounts use it."""

    def __init__(self) -> None:
        self.total = Decimal(0)

    def step(self, value: object) -> None:
        if value is not None:
            self.total += Decimal(str(value))

    def finalize(self) -> str:
        return format(self.total, "f")


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def _rowcount(conn: sqlite3.Connection, sql: str, params: Any) -> int:
    return conn.execute(sql, params).rowcount


def _many(conn: sqlite3.Connection, sql: str, rows: list[Sequence[Any]]) -> None:
    conn.executemany(sql, rows)


def _one(conn: sqlite3.Connection, sql: str, params: Any) -> sqlite3.Row | None:
    row: sqlite3.Row | None = conn.execute(sql, params).fetchone()
    return row


def _all(conn: sqlite3.Connection, sql: str, params: Any) -> list[sqlite3.Row]:
    return conn.execute(sql, params).fetchall()


class ProcessLock:
    """The write lock between the processes on one database (the workers of ``linksvc serve``): an ``flock`` on
    ``<database>-write.lock``, taken on the writer's thread before ``BEGIN IMMEDIATE`` and given back after the
    ``COMMIT`` or ``ROLLBACK``. Without it a second process's ``BEGIN IMMEDIATE`` meets SQLite's lock and polls
    for it, sleeping 1, 2, 5, 10 ... up to 100 ms between tries (``busy_timeout``): a worker can sleep long
    after the other's commit. This lock is tried again every half millisecond at most. SQLite's lock still
    guards against every other writer."""

    def __init__(self, path: str | None) -> None:
        self._fd = None if path is None else os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        self._held = False

    def acquire(self, wait_s: float = LOCK_WAIT_S) -> None:
        """Takes the lock, trying again every half millisecond at most; after ``wait_s`` goes on without it
        (SQLite's lock and its busy timeout then decide, as they do for a writer that takes no ``flock``: a
        process that holds the lock too long gets the others a 503, not a wait without end)."""
        if self._fd is None or self._held:
            return
        deadline, pause = time.monotonic() + wait_s, 0.00005
        while True:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return
                time.sleep(pause)
                pause = min(2 * pause, 0.0005)
                continue
            self._held = True
            return

    def release(self) -> None:
        if self._fd is not None and self._held:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            self._held = False

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # gives the lock back too
            self._fd = None
            self._held = False


Unit = Callable[[Any], Coroutine[Any, Any, Any]]


@dataclass(eq=False)
class _Queued:
    """A unit waiting for its group."""

    unit: Unit
    future: asyncio.Future[Any]


@dataclass(eq=False)
class _Turn:
    """A session waiting for the writer: ``granted`` when it has it, ``done`` once it gives it back."""

    granted: asyncio.Future[None]
    done: asyncio.Event = field(default_factory=asyncio.Event)


def _nothing(conn: sqlite3.Connection) -> None:
    pass


def _after(hook: Callable[[sqlite3.Connection], None], conn: sqlite3.Connection) -> None:
    """The after-commit hook; what it raises is logged, never the commit's failure."""
    try:
        hook(conn)
    except Exception:
        log.exception("after a commit, publishing the read models' generations failed")


def _fails_the_group(conn: sqlite3.Connection, exc: Exception) -> bool:
    """Whether a unit's exception is a failure of the store (a full or locked disk, a broken file, the
    transaction gone), which fails its whole group, rather than of the unit itself (its own code, a constraint
    its rows break, a value that cannot be bound), after which the transaction goes on without it."""
    if not isinstance(exc, sqlite3.Error):
        return False
    if not conn.in_transaction:
        return True
    return not isinstance(exc, sqlite3.IntegrityError | sqlite3.ProgrammingError | sqlite3.InterfaceError
                          | sqlite3.DataError)


class WriterSession:
    """The connection of an open session, for async code: each statement runs on the writer's thread.
    Valid from the session's ``BEGIN`` to its end; the helpers of :mod:`storage.db` accept it."""

    def __init__(self, writer: Writer, conn: sqlite3.Connection) -> None:
        self._writer = writer
        self._conn: sqlite3.Connection | None = conn

    async def _call(self, fn: Callable[..., T], *args: Any) -> T:
        if self._conn is None:
            raise RuntimeError("the write session is over")
        return await self._writer._hop(fn, self._conn, *args)

    async def execute(self, sql: str, params: Any = ()) -> int:
        """Runs one statement; returns its row count."""
        return await self._call(_rowcount, sql, params)

    async def execute_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        await self._call(_many, sql, list(rows))  # the rows drawn here, not on the writer's thread

    executemany = execute_many  # sqlite3's (and aiosqlite's) name

    async def fetch_one(self, sql: str, params: Any = ()) -> sqlite3.Row | None:
        return await self._call(_one, sql, params)

    async def fetch_all(self, sql: str, params: Any = ()) -> list[sqlite3.Row]:
        return await self._call(_all, sql, params)

    def _end(self) -> None:
        self._conn = None


class Writer:
    """The write queue. :meth:`open` makes the connection on the writer's thread, :meth:`start` starts taking
    turns, :meth:`close` commits what waits, then closes the connection."""

    def __init__(self, target: str, synchronous: str, cache_kib: int, uri: bool = False,
                 max_units: int = MAX_UNITS, lock_path: str | None = None) -> None:
        # Called on the writer's thread after every commit (the read models' generations are published).
        self.after_commit: Callable[[sqlite3.Connection], None] = _nothing
        self.target = target
        self.synchronous = synchronous
        self.cache_kib = cache_kib
        self.uri = uri
        self.max_units = max_units
        self.lock_path = lock_path  # the processes' write lock (ProcessLock); None: this process alone
        self._lock = ProcessLock(None)
        self._executor: ThreadPoolExecutor | None = None
        self._conn: sqlite3.Connection | None = None
        self._queue: deque[_Queued | _Turn] = deque()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self.groups = 0  # groups committed
        self.units = 0  # units in them (rolled back alone or not)
        self.sessions = 0  # sessions given the writer

    async def open(self) -> None:
        """Makes the connection, on the writer's thread."""
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="linksvc-writer")
        self._lock = ProcessLock(self.lock_path)
        loop = asyncio.get_running_loop()
        self._conn = await loop.run_in_executor(
            self._executor, partial(connect_writer, self.target, self.synchronous, self.cache_kib, self.uri))

    def start(self) -> None:
        """Starts taking turns."""
        self._stopping = False
        self._wake = asyncio.Event()
        self._task = asyncio.create_task(self._loop(), name="linksvc-writer")

    async def close(self) -> None:
        """Commits the units and lets the sessions run that wait, then closes the connection and the thread."""
        if self._task is not None:
            self._stopping = True
            self._wake.set()
            await self._task
            self._task = None
        if self._executor is not None:
            if self._conn is not None:
                await self._hop(self._conn.close)
            self._executor.shutdown(wait=True)
        self._lock.close()
        self._executor = None
        self._conn = None

    @property
    def running(self) -> bool:
        """Whether turns are taken: until :meth:`close` has committed the last one."""
        return self._task is not None and not self._task.done()

    async def _hop(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on the writer's thread, in the order of submission."""
        if self._executor is None:
            raise RuntimeError("database is not open")
        return await asyncio.get_running_loop().run_in_executor(self._executor, partial(fn, *args))

    async def prepare(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Runs ``work`` with the connection on the writer's thread between :meth:`open` and :meth:`start`
        (the migrations), when no turn can be under way."""
        if self._conn is None or self._task is not None:
            raise RuntimeError("prepare() is for between open() and start()")
        return await self._hop(work, self._conn)

    # Units ----------------------------------------------------------------------------------------------

    async def run(self, unit: Callable[[Any], Coroutine[Any, Any, T]]) -> T:
        """Runs ``unit`` inside the next group's transaction; returns its result once committed. A unit
        cancelled before its group begins is not run; once begun it is committed with its group all the same."""
        if not self.running:
            raise RuntimeError("the database is not open for writes")
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._queue.append(_Queued(unit, future))
        self._wake.set()
        return await future

    def _run_group(self, conn: sqlite3.Connection, units: list[Unit]) -> list[tuple[bool, Any]]:
        """On the writer's thread: one transaction, a savepoint per unit, one commit."""
        outcomes: list[tuple[bool, Any]] = []
        self._begin(conn)
        try:
            for index, unit in enumerate(units):
                conn.execute(f"SAVEPOINT unit_{index}")
                try:
                    result: Any = run_sync(unit(conn))
                except Exception as exc:
                    if _fails_the_group(conn, exc):
                        raise
                    # this unit alone is rolled back
                    try:
                        conn.execute(f"ROLLBACK TO unit_{index}")
                        conn.execute(f"RELEASE unit_{index}")
                    except sqlite3.OperationalError:  # SQLite already rolled everything back
                        raise exc from None
                    outcomes.append((False, exc))
                    continue
                conn.execute(f"RELEASE unit_{index}")
                outcomes.append((True, result))
            self._commit(conn)
        except BaseException:
            self._rollback(conn)
            raise
        _after(self.after_commit, conn)
        return outcomes

    def _begin(self, conn: sqlite3.Connection) -> None:
        """On the writer's thread: the processes' lock, then the transaction."""
        self._lock.acquire()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except BaseException:
            self._lock.release()
            raise

    def _commit(self, conn: sqlite3.Connection) -> None:
        conn.execute("COMMIT")
        self._lock.release()

    def _rollback(self, conn: sqlite3.Connection) -> None:
        try:
            _rollback(conn)
        finally:
            self._lock.release()

    async def _commit_group(self, group: list[_Queued]) -> None:
        assert self._conn is not None
        units = [queued.unit for queued in group]
        try:
            # Never cancelled: the writer's task is only ever awaited (close), so a group ends before it does.
            outcomes = await self._hop(self._run_group, self._conn, units)
        except Exception as exc:  # the commit failed: nothing of the group is stored
            log.exception("a group of %d writes failed to commit", len(group))
            for queued in group:
                if not queued.future.done():
                    queued.future.set_exception(exc)
            return
        self.groups += 1
        self.units += len(group)
        for (ok, value), queued in zip(outcomes, group, strict=True):
            if queued.future.done():  # the caller went away meanwhile; its write is stored all the same
                continue
            if ok:
                queued.future.set_result(value)
            else:
                queued.future.set_exception(value)

    # Sessions -------------------------------------------------------------------------------------------

    @asynccontextmanager
    async def session(self) -> AsyncIterator[WriterSession]:
        """One interactive write transaction: it waits its turn, has the writer alone, and is committed on
        success, rolled back on any exception (a cancellation too)."""
        if not self.running:
            raise RuntimeError("the database is not open for writes")
        turn = _Turn(asyncio.get_running_loop().create_future())
        self._queue.append(turn)
        self._wake.set()
        try:
            # Cancelled while waiting, the turn is skipped (its future is cancelled) or, granted just now,
            # given back at once by the ``finally`` below.
            await turn.granted
            assert self._conn is not None
            conn = self._conn
            try:
                await self._hop(self._begin, conn)
            except BaseException:
                # Cancelled (a stop) while BEGIN ran on the writer's thread: it may still begin. Queued after
                # it on the same thread, the rollback ends that transaction before the next turn begins.
                await self._end(conn)
                raise
            session = WriterSession(self, conn)
            try:
                yield session
                await self._hop(self._commit, conn)
                await self._hop(_after, self.after_commit, conn)
            except BaseException:
                await self._end(conn)
                raise
            finally:
                session._end()
        finally:
            turn.done.set()

    async def _end(self, conn: sqlite3.Connection) -> None:
        """Rolls back whatever transaction is open; submitted to the writer's thread before anything else can
        be, so it runs even when this task is cancelled again while it waits."""
        assert self._executor is not None
        future = asyncio.get_running_loop().run_in_executor(self._executor, self._rollback, conn)
        try:
            await asyncio.shield(future)
        except sqlite3.Error:
            log.exception("rolling back a write session failed")

    # The queue ------------------------------------------------------------------------------------------

    async def _loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._queue:
                head = self._queue[0]
                if isinstance(head, _Turn):
                    self._queue.popleft()
                    if head.granted.done():  # cancelled while waiting
                        continue
                    self.sessions += 1
                    head.granted.set_result(None)
                    await head.done.wait()
                    continue
                group: list[_Queued] = []
                while self._queue and isinstance(self._queue[0], _Queued) and len(group) < self.max_units:
                    queued = self._queue.popleft()
                    assert isinstance(queued, _Queued)
                    if not queued.future.done():  # cancelled before its group began: not run
                        group.append(queued)
                if group:
                    await self._commit_group(group)
            if self._stopping:
                return
