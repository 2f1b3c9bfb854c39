"""The side tables of campaigns: restriction lists (stores, channels, products) and coupon codes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from storage.db import Conn, Row, Tx, execute, execute_many, fetch_all

DIMENSIONS = ("store", "channel", "product")


async def replace_restrictions(
    conn: Tx, campaign_id: str, dimension: str, values: Iterable[str] | None
) -> None:
    if dimension not in DIMENSIONS:
        raise KeyError(dimension)
    await execute(
        conn,
        "DELETE FROM campaign_restrictions WHERE campaign_id = ? AND dimension = ?",
        (campaign_id, dimension),
    )
    if values:
        await execute_many(
            conn,
            "INSERT OR IGNORE INTO campaign_restrictions (campaign_id, dimension, value) VALUES (?, ?, ?)",
            ((campaign_id, dimension, v) for v in values),
        )


async def replace_codes(
    conn: Tx, campaign_id: str, codes: Sequence[tuple[str, str, str | None]]
) -> None:
    await execute(conn, "DELETE FROM coupon_codes WHERE campaign_id = ?", (campaign_id,))
    if codes:
        await execute_many(
            conn,
            "INSERT OR REPLACE INTO coupon_codes (campaign_id, code, status, expires_at) "
            "VALUES (?, ?, ?, ?)",
            ((campaign_id, code, status, expires) for code, status, expires in codes),
        )


async def list_codes(conn: Conn, campaign_id: str) -> list[Row]:
    return await fetch_all(
        conn,
        "SELECT code, status, expires_at FROM coupon_codes WHERE campaign_id = ? ORDER BY code",
        (campaign_id,),
    )
