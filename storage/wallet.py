"""Wallet lines of customers. Amounts are decimal text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from storage.db import Conn, Row, Tx, execute, execute_many, fetch_all

LINE_COLUMNS = (
    "id", "account_id", "customer_id", "reward_id", "campaign_id", "brand_id", "amount",
    "issued_at", "expiration_date", "reservation_expires_at", "source",
)


async def replace_opening_lines(
    conn: Tx, account_id: str, customer_id: str, lines: Sequence[dict[str, Any]]
) -> None:
    """The lines a customer was created or migrated with; issued and spent lines are not touched."""
    await execute(
        conn,
        "DELETE FROM wallet_lines WHERE account_id = ? AND customer_id = ? AND source = 'opening'",
        (account_id, customer_id),
    )
    marks = ", ".join("?" for _ in LINE_COLUMNS)
    await execute_many(
        conn,
        f"INSERT INTO wallet_lines ({', '.join(LINE_COLUMNS)}) VALUES ({marks})",
        ([line[c] for c in LINE_COLUMNS] for line in lines),
    )


async def unexpired_lines(conn: Conn, account_id: str, customer_id: str, now: str) -> list[Row]:
    """The lines not yet expired, earliest expiration first, each with its reward's document."""
    return await fetch_all(
        conn,
        "SELECT w.*, r.body AS reward_body FROM wallet_lines w "
        "LEFT JOIN rewards r ON r.id = w.reward_id AND r.account_id = w.account_id "
        "WHERE w.account_id = ? AND w.customer_id = ? AND (w.expiration_date IS NULL OR w.expiration_date > ?) "
        "ORDER BY w.expiration_date IS NULL, w.expiration_date, w.issued_at, w.id",
        (account_id, customer_id, now),
    )
