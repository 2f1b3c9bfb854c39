"""The outbox of deliveries: enqueue with the event, claim due ones under a lease, record outcomes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from storage.db import Conn, Row, Tx, execute, fetch_all, fetch_one

OWNS = ("deliveries",)

COLUMNS = ("id", "account_id", "connection_id", "destination", "event_id", "trigger", "kind", "order_key", "state",
           "reason", "next_attempt_at", "created_at", "updated_at")
_MARKS = "(" + ", ".join("?" for _ in COLUMNS) + ")"
_ROWS_PER_STATEMENT = 500


async def enqueue(tx: Tx, rows: Sequence[dict[str, Any]]) -> None:
    """New deliveries in order, a few hundred per statement."""
    for start in range(0, len(rows), _ROWS_PER_STATEMENT):
        chunk = rows[start:start + _ROWS_PER_STATEMENT]
        await execute(tx, f"INSERT INTO deliveries ({', '.join(COLUMNS)}) VALUES {', '.join([_MARKS] * len(chunk))}",
                      [row[c] for row in chunk for c in COLUMNS])


async def connections(conn: Conn, account_id: str) -> list[Row]:
    """The account's enabled connections (a disabled one gets no deliveries at all)."""
    return await fetch_all(conn, "SELECT id, body FROM connections WHERE account_id = ? AND enabled = 1 ORDER BY id",
                           (account_id,))


async def claim(tx: Tx, now: str, lease_until: str, limit: int) -> list[Row]:
    """Due pending deliveries not leased by anyone, each the first pending one of its connection and
    order key (so one customer's deliveries reach a connection in order); leased to the caller."""
    rows = await fetch_all(
        tx,
        "SELECT d.* FROM deliveries d WHERE d.state = 'pending' AND d.next_attempt_at <= ? "
        "AND (d.lease_until IS NULL OR d.lease_until < ?) "
        "AND NOT EXISTS (SELECT 1 FROM deliveries e WHERE e.state = 'pending' AND e.connection_id = d.connection_id "
        "AND e.order_key = d.order_key AND e.seq < d.seq) ORDER BY d.next_attempt_at, d.seq LIMIT ?",
        (now, now, limit),
    )
    if rows:
        marks = ", ".join("?" for _ in rows)
        await execute(tx, f"UPDATE deliveries SET lease_until = ? WHERE seq IN ({marks})",
                      [lease_until, *(r["seq"] for r in rows)])
    return rows


async def record(tx: Tx, seq: int, state: str, tries: int, next_attempt_at: str, status: int | None,
                 error: str | None, reason: str | None, now: str) -> None:
    await execute(
        tx,
        "UPDATE deliveries SET state = ?, tries = ?, next_attempt_at = ?, lease_until = NULL, last_status = ?, "
        "last_error = ?, reason = coalesce(?, reason), updated_at = ?, "
        "delivered_at = CASE WHEN ? = 'delivered' THEN ? ELSE delivered_at END WHERE seq = ?",
        (state, tries, next_attempt_at, status, error, reason, now, state, now, seq),
    )


async def next_due(conn: Conn) -> str | None:
    row = await fetch_one(conn, "SELECT min(next_attempt_at) AS at FROM deliveries WHERE state = 'pending'")
    return row["at"] if row else None


async def by_id(conn: Conn, account_id: str, delivery_id: str) -> Row | None:
    return await fetch_one(conn, "SELECT * FROM deliveries WHERE account_id = ? AND id = ?", (account_id, delivery_id))


async def of_event(conn: Conn, account_id: str, event_id: str) -> list[Row]:
    return await fetch_all(conn, "SELECT * FROM deliveries WHERE account_id = ? AND event_id = ? ORDER BY seq",
                           (account_id, event_id))


async def of_connection(conn: Conn, account_id: str, connection_id: str, state: str | None, limit: int,
                        offset: int) -> list[Row]:
    where = "account_id = ? AND connection_id = ?" + (" AND state = ?" if state else "")
    params: list[Any] = [account_id, connection_id, *([state] if state else [])]
    return await fetch_all(conn, f"SELECT * FROM deliveries WHERE {where} ORDER BY seq DESC LIMIT ? OFFSET ?",
                           [*params, limit, offset])


async def retry(tx: Tx, account_id: str, delivery_id: str, now: str) -> bool:
    """A failed or dead delivery back to pending, due now; False when it is in another state."""
    changed = await execute(
        tx,
        "UPDATE deliveries SET state = 'pending', next_attempt_at = ?, lease_until = NULL, updated_at = ? "
        "WHERE account_id = ? AND id = ? AND state IN ('failed', 'dead')",
        (now, now, account_id, delivery_id),
    )
    return changed == 1


def counts_by_state(conn: Any) -> list[tuple[str, str, int]]:
    """(destination, state, count) for the metrics; a plain sqlite3 connection (called from a scrape)."""
    return [(r[0], r[1], int(r[2])) for r in
            conn.execute("SELECT destination, state, count(*) FROM deliveries GROUP BY destination, state")]
