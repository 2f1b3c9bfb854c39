"""Dead letters: what could not be stored on its own (a poison click) and was set aside with the reason.

The admin API lists an account's dead letters, newest first, so that nothing accepted disappears silently:
the payload is the click as it came (every text made valid and cut), the reason the error it met.
"""

from __future__ import annotations

from typing import Any

from linksvc.accounts.service import get_account
from linksvc.store import Store
from storage import dead_letters as repo


async def list_dead_letters(db: Store, account_id: str, limit: int, offset: int) -> tuple[list[dict[str, Any]], int]:
    await get_account(db.reader, account_id)  # 404 for an unknown account
    rows, total = await repo.list_for_account(db.reader, account_id, limit, offset)
    items = [{"id": row.id, "kind": row.kind, "reason": row.reason, "payload": row.payload,
              "created_at": row.created_at} for row in rows]
    return items, total


async def kind_gauge(db: Store) -> list[tuple[str, int]]:
    """(kind, count) of the writes set aside, for the metrics, read at scrape time."""
    return await repo.counts_by_kind(db.reader)
