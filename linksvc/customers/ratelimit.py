"""Sliding-window rate limits (product decisions, section 7), kept in the store.

A request is admitted when, for every window, fewer than ``limit`` requests were admitted in the last
``seconds``; an admitted request is recorded, a refused one is not. Check and record share one write
transaction, so concurrent requests cannot both take the last place, and the log survives a restart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from linksvc.errors import RateLimited
from storage import rate_limits as repo
from storage.db import Tx


@dataclass(frozen=True)
class Window:
    limit: int
    seconds: int


MIGRATE_WINDOWS = (Window(15, 5), Window(10_000, 3600))


async def admit(tx: Tx, account_id: str, scope: str, windows: tuple[Window, ...], now_ms: int) -> None:
    """Record the request, or raise RateLimited with the whole seconds until it would be admitted."""
    wait_ms = 0
    for window in windows:
        since = now_ms - window.seconds * 1000
        if await repo.count_since(tx, account_id, scope, since) >= window.limit:
            # Admitted again when the limit-th newest request leaves the window.
            pivot = await repo.nth_newest(tx, account_id, scope, since, window.limit)
            if pivot is not None:
                wait_ms = max(wait_ms, pivot + window.seconds * 1000 - now_ms)
    if wait_ms > 0:
        retry = max(1, math.ceil(wait_ms / 1000))
        raise RateLimited(retry, f"rate limit exceeded: at most {windows[0].limit} requests in {windows[0].seconds} "
                                 f"seconds and {windows[-1].limit} an hour; retry after {retry} seconds")
    longest = max(w.seconds for w in windows)
    await repo.forget_before(tx, account_id, scope, now_ms - longest * 1000)
    await repo.record(tx, account_id, scope, now_ms)
