"""What the api layer hands to the services: the store, named by what the services use of it.

``storage.db.Database`` (SQLite) satisfies it today; another store (PostgreSQL) is to satisfy it later. The
api layer types the application's store with this and passes it along untouched; it never opens a
transaction or reads through a connection itself.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Protocol, TypeVar

from storage.db import Conn, Tx

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

    def transaction(self) -> AbstractAsyncContextManager[Tx]:
        """One write unit of work: committed on success, rolled back on any exception."""
        ...

    async def run_in_writer(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Runs ``work`` on the writer's thread, under the write lock."""
        ...

    async def ping(self) -> bool:
        """Whether the store answers."""
        ...
