"""Generation counters of the read models, published in shared memory beside the database.

A worker keeps in memory what its hot paths read (links by code, access tokens), and must drop what a write
made wrong, on any worker, before that write is answered. The ``generations`` table holds one counter per read
model; the triggers of migration 0015 advance it in the same transaction as the change, whichever code (or
process) made it. After every commit the writer reads the counters (one small statement) and publishes them to
a file mapped into memory by every process on this database (``<database>-generations``; an anonymous map for
``:memory:``). A reader compares one integer of that map with the value it holds: no statement, no system call.

Published values only grow (the larger is kept, under an ``flock``), so a process that publishes late never
moves a counter back. A database restored from a copy may hold smaller counters than the map: :meth:`open`
moves the database's past the map's, so that the next change is seen.
"""

from __future__ import annotations

import fcntl
import mmap
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

# Written by the triggers of migrations 0015, 0016, 0021 and 0042, and by open().
OWNS = ("generations", "wallet_buckets")

# New models go last: a map made for fewer is grown by open(). 'wallets' is the counter the buckets are stamped
# with, 'lookups' drops every held lookup (migration 0042).
MODELS = ("links", "access", "catalog", "domains", "wallets", "lookups")
# The customer lookup's answers are dropped by bucket of customers (migration 0042): the map holds each bucket's
# last stamp after the models' counters, named ``wallets/N`` for :meth:`Generations.value`'s callers.
WALLET_BUCKETS = 256
BUCKET_MODELS = tuple(f"wallets/{bucket}" for bucket in range(WALLET_BUCKETS))
_SIZE = 8 * (len(MODELS) + WALLET_BUCKETS)
_WALLETS = MODELS.index("wallets")


def wallet_bucket(customer_id: str) -> str:
    """The model name (``wallets/N``) of the bucket a change to this customer stamps: the expression of
    migration 0042's triggers, ``(unicode(last character) * 131 + unicode(the one before)) % 256`` (0 for a
    character that is not there). SQLite's text functions read a text up to its first NUL character; so does
    this."""
    customer_id = customer_id.partition("\x00")[0]
    last = ord(customer_id[-1]) if customer_id else 0
    before = ord(customer_id[-2]) if len(customer_id) > 1 else 0
    return BUCKET_MODELS[(last * 131 + before) % WALLET_BUCKETS]


class Generations:
    """The counters as this process sees them: :meth:`value` is one load from shared memory."""

    def __init__(self, database_path: str) -> None:
        self.path = None if database_path == ":memory:" else f"{database_path}-generations"
        self._fd: int | None = None
        self._map: mmap.mmap | None = None
        self._view: memoryview | None = None

    def open(self, conn: sqlite3.Connection) -> None:
        """Maps the counters (making the file if needed) and publishes the database's, moved past the map's
        first if the map holds larger ones. On the writer's thread, outside a transaction."""
        if self.path is None:
            self._map = mmap.mmap(-1, _SIZE)
        else:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            if os.fstat(self._fd).st_size < _SIZE:
                os.ftruncate(self._fd, _SIZE)
            self._map = mmap.mmap(self._fd, _SIZE, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        self._view = memoryview(self._map).cast("q")
        with self._locked():
            stored = _read(conn)
            behind = [name for index, name in enumerate(MODELS) if stored[name] < self._view[index]]
            if behind:
                conn.execute("BEGIN IMMEDIATE")
                for name in behind:
                    conn.execute("UPDATE generations SET value = ? WHERE name = ?",
                                 (self._view[MODELS.index(name)] + 1, name))
                conn.execute("COMMIT")
                stored = _read(conn)
            self._store_buckets(conn, -1)
            self._store(stored)

    def close(self) -> None:
        if self._view is not None:
            self._view.release()
        if self._map is not None:
            self._map.close()
        if self._fd is not None:
            os.close(self._fd)
        self._view = self._map = self._fd = None

    def value(self, index: int) -> int:
        """The counter of ``MODELS[index]`` now (or, past them, of bucket ``index - len(MODELS)``)."""
        view = self._view
        return 0 if view is None else int(view[index])

    def publish(self, conn: sqlite3.Connection) -> None:
        """After a commit, on the writer's thread: the database's counters into shared memory."""
        if self._view is None:
            return
        stored = _read(conn)
        if all(stored[name] <= self._view[index] for index, name in enumerate(MODELS)):
            return  # nothing a read model holds changed (the common case: clicks, events)
        with self._locked():
            if stored["wallets"] > self._view[_WALLETS]:  # buckets first: a reader that sees 'wallets' sees them
                self._store_buckets(conn, self._view[_WALLETS])
            self._store(stored)

    def _store_buckets(self, conn: sqlite3.Connection, published: int) -> None:
        """The buckets stamped past ``published`` (the last 'wallets' published) into the map."""
        assert self._view is not None
        view, base = self._view, len(MODELS)
        for bucket, value in conn.execute("SELECT bucket, value FROM wallet_buckets WHERE value > ?", (published,)):
            if 0 <= bucket < WALLET_BUCKETS and value > view[base + bucket]:
                view[base + bucket] = value

    def _store(self, stored: dict[str, int]) -> None:
        assert self._view is not None
        for index, name in enumerate(MODELS):
            if stored[name] > self._view[index]:
                self._view[index] = stored[name]

    @contextmanager
    def _locked(self) -> Iterator[None]:
        if self._fd is None:
            yield
            return
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)


def _read(conn: sqlite3.Connection) -> dict[str, int]:
    found = {str(name): int(value) for name, value in conn.execute("SELECT name, value FROM generations")}
    return {name: found.get(name, 0) for name in MODELS}
