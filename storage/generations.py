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

OWNS = ("generations",)  # written by the triggers of migrations 0015, 0016 and 0021 and by open()

MODELS = ("links", "access", "catalog", "domains")  # new models go last: a map made for fewer is grown by open()
_SIZE = 8 * len(MODELS)


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
        """The counter of ``MODELS[index]`` now."""
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
            self._store(stored)

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
