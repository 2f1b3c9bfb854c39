"""Behavior events: insert, find by id or order, the customer's purchase history, the reversal."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from storage.db import Conn, Row, Tx, execute, fetch_all, fetch_one

OWNS = ("events",)

COLUMNS = ("id", "account_id", "type", "customer_id", "order_id", "payload_hash", "issued_at", "received_at",
           "key_kind", "body", "effects")


async def insert(tx: Tx, values: dict[str, Any]) -> None:
    marks = ", ".join("?" for _ in COLUMNS)
    await execute(tx, f"INSERT INTO events ({', '.join(COLUMNS)}) VALUES ({marks})", [values[c] for c in COLUMNS])


async def by_id(conn: Conn, account_id: str, event_id: str) -> Row | None:
    return await fetch_one(conn, "SELECT * FROM events WHERE account_id = ? AND id = ?", (account_id, event_id))


async def by_order(conn: Conn, account_id: str, order_id: str) -> Row | None:
    return await fetch_one(conn, "SELECT id, payload_hash FROM events WHERE account_id = ? AND order_id = ?",
                           (account_id, order_id))


async def purchase_totals(conn: Conn, account_id: str, customer_id: str) -> tuple[Decimal, int]:
    """(sum of order values, count) of the customer's purchases that are not reversed."""
    rows = await fetch_all(
        conn,
        "SELECT json_extract(body, '$.value') AS value FROM events WHERE account_id = ? AND customer_id = ? "
        "AND type = 'PURCHASE' AND reversed_at IS NULL",
        (account_id, customer_id),
    )
    total = sum((Decimal(str(r["value"])) for r in rows if r["value"] is not None), Decimal(0))
    return total, len(rows)


async def set_reversal(tx: Tx, event_id: str, reversed_at: str, reversal: str) -> bool:
    """Marks the event reversed; False when it already was (a concurrent reversal won)."""
    changed = await execute(tx, "UPDATE events SET reversed_at = ?, reversal = ? WHERE id = ? AND reversed_at IS NULL",
                            (reversed_at, reversal, event_id))
    return changed == 1


async def behavior_campaigns(conn: Conn, account_id: str) -> list[Row]:
    return await fetch_all(conn, "SELECT body FROM campaigns WHERE account_id = ? AND type = 'BEHAVIOR'",
                           (account_id,))


async def tiers(conn: Conn, account_id: str) -> list[Row]:
    return await fetch_all(conn, "SELECT body FROM tiers WHERE account_id = ?", (account_id,))


async def active_custom_type(conn: Conn, account_id: str, name: str) -> bool:
    row = await fetch_one(conn, "SELECT active FROM custom_event_types WHERE account_id = ? AND name = ?",
                          (account_id, name))
    return row is not None and bool(row["active"])


async def other_custom_type_named(conn: Conn, account_id: str, name: str, type_id: str) -> Row | None:
    """A custom event type of the account other than ``type_id`` named ``name`` (names are unique per account)."""
    return await fetch_one(
        conn, "SELECT id FROM custom_event_types WHERE account_id = ? AND name = ? AND id != ?",
        (account_id, name, type_id),
    )


async def active_custom_type_names(conn: Conn, account_id: str, limit: int) -> list[str]:
    rows = await fetch_all(conn, "SELECT name FROM custom_event_types WHERE account_id = ? AND active = 1 "
                                 "ORDER BY name LIMIT ?", (account_id, limit))
    return [str(row["name"]) for row in rows]
