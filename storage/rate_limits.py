"""The request log behind sliding-window rate limits. Check and record run in one write transaction,
so concurrent requests and other processes see each other's admitted requests."""

from __future__ import annotations

from storage.db import Tx, execute, fetch_one

OWNS = ("rate_events",)


async def count_since(conn: Tx, account_id: str, scope: str, since_ms: int) -> int:
    """How many requests were admitted after ``since_ms``."""
    row = await fetch_one(
        conn,
        "SELECT count(*) FROM rate_events WHERE account_id = ? AND scope = ? AND at_ms > ?",
        (account_id, scope, since_ms),
    )
    return int(row[0]) if row else 0


async def nth_newest(conn: Tx, account_id: str, scope: str, since_ms: int, n: int) -> int | None:
    """The time of the n-th newest admitted request after ``since_ms`` (1 = the newest)."""
    row = await fetch_one(
        conn,
        "SELECT at_ms FROM rate_events WHERE account_id = ? AND scope = ? AND at_ms > ? "
        "ORDER BY at_ms DESC LIMIT 1 OFFSET ?",
        (account_id, scope, since_ms, n - 1),
    )
    return None if row is None else int(row[0])


async def record(conn: Tx, account_id: str, scope: str, at_ms: int) -> None:
    await execute(
        conn, "INSERT INTO rate_events (account_id, scope, at_ms) VALUES (?, ?, ?)", (account_id, scope, at_ms)
    )


async def forget_before(conn: Tx, account_id: str, scope: str, before_ms: int) -> None:
    await execute(
        conn, "DELETE FROM rate_events WHERE account_id = ? AND scope = ? AND at_ms <= ?",
        (account_id, scope, before_ms),
    )
