"""What the api layer hands to the services: the store, named by what the services use of it.

``storage.db.Database`` (SQLite) satisfies it today; another store (PostgreSQL) is to satisfy it later. The
api layer types the application's store with this and passes it along untouched; it never opens a
transaction or reads through a connection itself.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Generic, Protocol, TypeVar
from weakref import WeakKeyDictionary

from linksvc.settings import Settings
from storage.audit_context import note_result
from storage.db import Conn, Database, StoreConstraintError, StoreError, StoreOperationalError, Tx, open_store
from storage.postgres import PostgresDatabase

# The store's failures, for the layers that do not import the driver (a full disk, the lock held elsewhere).
__all__ = ["PerStore", "Store", "StoreConstraintError", "StoreError", "StoreOperationalError", "WouldWait",
           "account_turn", "at_once", "in_one_unit", "store_of"]

T = TypeVar("T")


class Store(Protocol):
    @property
    def reader(self) -> Conn:
        """The connection for short reads that need not see an open transaction."""
        ...

    @property
    def background(self) -> Conn:
        """A read connection of its own, for the few reads that visit many rows."""
        ...

    async def readers(self, count: int) -> Sequence[Conn]:
        """``count`` read connections that run statements at the same time (the background one first), for a
        read of several large statements (the conversion report)."""
        ...

    def transaction(self) -> AbstractAsyncContextManager[Tx]:
        """One write unit of work: committed on success, rolled back on any exception."""
        ...

    async def write(self, unit: Callable[[Tx], Coroutine[Any, Any, T]], serial_key: str | None = None) -> T:
        """Runs ``unit`` in the next group commit of the write queue; returns its result once committed. The
        unit must wait for nothing but the store (its repository calls). Units given the same ``serial_key``
        (:func:`account_turn`) never run at once, on any node."""
        ...

    @property
    def queued_writes(self) -> bool:
        """Whether write units wait in one queue (SQLite's one writer), rather than each beginning at once on a
        connection of its own (PostgreSQL)."""
        ...

    def generation(self, model: str) -> int:
        """The generation of a read model (``links``, ``access``), shared by every process on the store: it moves
        after each committed change to what the model holds. One load from memory, no statement."""
        ...

    async def ping(self) -> bool:
        """Whether the store answers."""
        ...


def account_turn(account_id: str) -> str:
    """The ``serial_key`` of the writes to an account's customers and wallets (events, reversals, migration,
    the admin API's changes): they take turns per account, on every node."""
    return f"account:{account_id}"


async def in_one_unit(db: Store, unit: Callable[[Tx], Coroutine[Any, Any, T]], serial_key: str | None = None) -> T:
    """``unit`` in one transaction, committed on success and rolled back on any exception. On SQLite, the one
    writer's interactive transaction (nothing changes under it); on PostgreSQL, which runs every write
    serializable and may refuse a commit when requests at once touched the same rows, a write unit of the store,
    run again whole when refused (or, with ``serial_key``, in turn with the others of that key). The unit must
    wait for nothing but the store."""
    if isinstance(db, PostgresDatabase):
        return await db.write(unit, serial_key)
    async with db.transaction() as tx:
        result = await unit(tx)
        note_result(result)  # a creation's new id, for the request's audit entry written at the commit
        return result


def store_of(settings: Settings) -> Database | PostgresDatabase:
    """The store the settings name, not opened yet: PostgreSQL when ``database_url`` is a ``postgresql://``
    URL (its local files, such as click journals, beside ``db_path``), else the SQLite file ``db_path``."""
    store = open_store(settings.db_path, settings.database_url or None, settings.db_synchronous,
                       settings.db_cache_mb * 1024)
    if isinstance(store, PostgresDatabase):
        store.max_size = settings.database_pool_size
        store.min_size = min(store.min_size, settings.database_pool_size)
        store.listen_url = settings.database_listen_url or store.url
        store.statement_cache = settings.database_statement_cache
    return store


class PerStore(Generic[T]):
    """One ``make(store)`` per store in this process, made at its first use and gone with the store: what a
    worker keeps beside a store (held answers, held domains, the event batches' coalescer)."""

    def __init__(self, make: Callable[[Any], T]) -> None:
        self._make = make
        self._made: WeakKeyDictionary[Any, T] = WeakKeyDictionary()

    def __call__(self, store: Any) -> T:
        found = self._made.get(store)
        if found is None:
            found = self._made[store] = self._make(store)
        return found


class WouldWait(Exception):
    """A read asked of :func:`at_once` that would have to wait (the store answers by awaiting)."""


def at_once(coroutine: Coroutine[Any, Any, T]) -> T:
    """The result of a coroutine that never suspends (a repository read on SQLite's reader), for callers that
    cannot await (a metrics scrape); one that would suspend (PostgreSQL) is closed and :class:`WouldWait`
    raised."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coroutine.close()
    raise WouldWait()
