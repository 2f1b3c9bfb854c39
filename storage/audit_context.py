"""The pending audit entry of a request (see :mod:`storage.audit_log`), apart so that :mod:`storage.db` and
:mod:`storage.postgres` can carry it into a write unit without importing the module that writes it."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

OWNS: tuple[str, ...] = ()  # no table: the entry is written by storage.audit_log
T = TypeVar("T")


@dataclass
class Pending:
    """The entry a request's change is to carry: ``write`` inserts it in a transaction; ``written`` once a
    committed unit carried it (a request's later units carry nothing more)."""

    record: Any
    write: Callable[[Any, str | None], Coroutine[Any, Any, None]]  # (tx, the id of what the unit made)
    written: bool = False
    made: str | None = None  # the id of the object the request's unit returned (a creation's new id)


PENDING: ContextVar[Pending | None] = ContextVar("linksvc_audit_pending", default=None)


def pending() -> Pending | None:
    """The request's entry while no committed unit has carried it yet."""
    entry = PENDING.get()
    return entry if entry is not None and not entry.written else None


def carried(unit: Callable[[Any], Coroutine[Any, Any, T]], entry: Pending | None
            ) -> Callable[[Any], Coroutine[Any, Any, T]]:
    """``unit`` that, when it succeeds, also writes ``entry`` in its transaction."""
    if entry is None:
        return unit

    async def with_entry(tx: Any) -> T:
        result = await unit(tx)
        if entry.made is None:  # this unit may run on the writer's thread: the entry itself, not the context
            entry.made = id_of(result)
        await claim(entry, tx)
        return result

    return with_entry


async def claim(entry: Pending, tx: Any) -> None:
    """Writes ``entry`` in ``tx`` unless another unit of the request claimed it already (units of one request
    at once); a failed write leaves it to the next."""
    if entry.written:
        return
    entry.written = True
    try:
        await entry.write(tx, entry.made)
    except BaseException:
        entry.written = False
        raise


def id_of(result: Any) -> str | None:
    """The id of what a unit returned: a view's ``id``, a record's, or the first item's of a tuple."""
    if isinstance(result, dict):
        found = result.get("id")
        return found if isinstance(found, str) else None
    if isinstance(result, tuple | list):
        return id_of(result[0]) if result and not isinstance(result, list) else None
    found = getattr(result, "id", None)
    return found if isinstance(found, str) else None


def note_result(result: Any) -> None:
    """Notes, for the request's pending entry, the id of what its unit returned (a creation's new id: the
    entry names it when the path named none). Called by the store's write units and ``linksvc.store``'s
    transactions, before the entry is written."""
    entry = pending()
    if entry is not None and entry.made is None:
        entry.made = id_of(result)
