"""The log of failed credential attempts (``auth_failures``) behind the throttle of guesses.

One row per failed admin-token, API-key or sign-in attempt: its kind, the client address it came from and
when. The throttle reads one indexed range per attempt; rows are written only for failures and pruned when
they leave the window, so the table never holds more than the failures of one window.
"""

from __future__ import annotations

from storage.db import Conn, Tx, dialect, execute, fetch_one

OWNS = ("auth_failures",)


async def nth_newest(conn: Conn, kind: str, client: str, since_ms: int, n: int) -> int | None:
    """The time of the n-th newest failure after ``since_ms`` (1 = the newest); None when there are fewer."""
    row = await fetch_one(
        conn,
        "SELECT at_ms FROM auth_failures WHERE kind = ? AND client = ? AND at_ms > ? "
        "ORDER BY at_ms DESC LIMIT 1 OFFSET ?",
        (kind, client, since_ms, n - 1),
    )
    return None if row is None else int(row[0])


async def count_since(conn: Conn, kind: str, client: str, since_ms: int) -> int:
    row = await fetch_one(
        conn,
        "SELECT count(*) FROM auth_failures WHERE kind = ? AND client = ? AND at_ms > ?",
        (kind, client, since_ms),
    )
    return int(row[0]) if row else 0


async def record(conn: Tx, kind: str, client: str, at_ms: int) -> None:
    await execute(conn, "INSERT INTO auth_failures (kind, client, at_ms) VALUES (?, ?, ?)", (kind, client, at_ms))


async def keep_newest(conn: Tx, kind: str, client: str, keep: int) -> None:
    """Deletes all but the ``keep`` newest rows of one kind and address."""
    if dialect(conn) == "postgresql":  # no rowid: the row's ctid; no LIMIT -1: an OFFSET alone
        await execute(
            conn,
            "DELETE FROM auth_failures WHERE ctid IN (SELECT ctid FROM auth_failures WHERE kind = ? AND client = ? "
            "ORDER BY at_ms DESC OFFSET ?)",
            (kind, client, keep),
        )
        return
    await execute(
        conn,
        "DELETE FROM auth_failures WHERE rowid IN (SELECT rowid FROM auth_failures WHERE kind = ? AND client = ? "
        "ORDER BY at_ms DESC LIMIT -1 OFFSET ?)",
        (kind, client, keep),
    )


async def any_before(conn: Conn, before_ms: int) -> bool:
    return await fetch_one(conn, "SELECT 1 FROM auth_failures WHERE at_ms <= ? LIMIT 1", (before_ms,)) is not None


async def forget_before(conn: Tx, before_ms: int) -> int:
    """Deletes every address's failures at or before ``before_ms``; returns how many."""
    return await execute(conn, "DELETE FROM auth_failures WHERE at_ms <= ?", (before_ms,))
