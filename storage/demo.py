"""Demo accounts: the mark a demo seed file leaves on its accounts, whether their activity was added, and the
connections the demo's receivers check signatures against."""

from __future__ import annotations

import orjson

from storage.db import Conn, Tx, execute, fetch_all, fetch_one
from storage.documents import Document

OWNS = ("demo_accounts",)


async def mark(tx: Tx, account_id: str, now: str) -> None:
    """Marks the account as demo data (again: nothing changes)."""
    await execute(tx, "INSERT OR IGNORE INTO demo_accounts (account_id, loaded_at) VALUES (?, ?)", (account_id, now))


async def without_activity(tx: Tx) -> list[str]:
    """Demo accounts whose activity has not been added yet (read inside the transaction that adds it)."""
    rows = await fetch_all(tx, "SELECT account_id FROM demo_accounts WHERE activity_at IS NULL ORDER BY loaded_at, "
                               "account_id")
    return [row[0] for row in rows]


async def set_activity(tx: Tx, account_id: str, now: str) -> None:
    await execute(tx, "UPDATE demo_accounts SET activity_at = ? WHERE account_id = ?", (now, account_id))


async def accounts(conn: Conn) -> list[str]:
    return [row[0] for row in await fetch_all(conn, "SELECT account_id FROM demo_accounts ORDER BY account_id")]


async def any_account(conn: Conn) -> bool:
    return await fetch_one(conn, "SELECT 1 FROM demo_accounts LIMIT 1") is not None


async def webhook_connections(conn: Conn) -> list[Document]:
    """The enabled webhook connections of demo accounts, with their bodies (the config holds the secrets)."""
    rows = await fetch_all(
        conn,
        "SELECT c.id, c.account_id, c.body, c.created_at, c.updated_at FROM connections c "
        "JOIN demo_accounts d ON d.account_id = c.account_id "
        "WHERE c.destination = 'webhook' AND c.enabled = 1 ORDER BY c.id",
    )
    return [Document(r[0], r[1], orjson.loads(r[2]), r[3], r[4]) for r in rows]
