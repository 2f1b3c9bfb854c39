"""One write unit of work of the customer services, on either store.

SQLite has one writer: an interactive transaction there sees nothing change under it. PostgreSQL runs every
write serializable and may refuse a commit when concurrent requests touched the same rows (two requests taking
the last place of a rate limit, two migrations of the same customer); only :meth:`write` runs a refused unit
again, whole, so there the unit goes through it. The unit must wait for nothing but the store.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from linksvc.store import Store
from storage.db import Tx
from storage.postgres import PostgresDatabase

T = TypeVar("T")


async def in_transaction(db: Store, unit: Callable[[Tx], Coroutine[Any, Any, T]]) -> T:
    """``unit`` run in one transaction, committed on success and rolled back on any exception; on PostgreSQL
    run again whole when refused as not serializable."""
    if isinstance(db, PostgresDatabase):
        return await db.write(unit)
    async with db.transaction() as tx:
        return await unit(tx)
