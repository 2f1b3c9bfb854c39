"""Dead letters: writes that failed on their own and were set aside with the reason (owns ``dead_letters``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from storage.db import Conn, Tx, execute, fetch_all, fetch_one

OWNS = ("dead_letters",)


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """A write set aside: its kind, why, and its payload (decoded here: what the write was, free-form by kind)."""

    id: int
    kind: str
    reason: str
    payload: Any
    created_at: str


async def insert(tx: Tx, kind: str, account_id: str | None, reason: str, payload: str, created_at: str) -> None:
    await execute(tx, "INSERT INTO dead_letters (kind, account_id, reason, payload, created_at) VALUES (?, ?, ?, ?, ?)",
                  (kind, account_id, reason, payload, created_at))


async def list_for_account(conn: Conn, account_id: str, limit: int, offset: int) -> tuple[list[DeadLetter], int]:
    rows = await fetch_all(conn, "SELECT id, kind, reason, payload, created_at FROM dead_letters "
                                 "WHERE account_id = ? ORDER BY id DESC LIMIT ? OFFSET ?", (account_id, limit, offset))
    total = await fetch_one(conn, "SELECT count(*) AS n FROM dead_letters WHERE account_id = ?", (account_id,))
    letters = [DeadLetter(r[0], r[1], r[2], orjson.loads(r[3]), r[4]) for r in rows]
    return letters, int(total["n"]) if total is not None else 0


async def counts_by_kind(conn: Conn) -> list[tuple[str, int]]:
    """(kind, count) for the metrics (on SQLite's reader it never waits: a scrape calls it)."""
    return [(r[0], int(r[1])) for r in await fetch_all(conn, "SELECT kind, count(*) FROM dead_letters GROUP BY kind")]
