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
    write: Callable[[Any], Coroutine[Any, Any, None]]
    written: bool = False


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
        await entry.write(tx)
    except BaseException:
        entry.written = False
        raise
