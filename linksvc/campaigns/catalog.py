"""Brands and tiers of an account as the storefront API shows them."""

from __future__ import annotations

from typing import Any

from linksvc.store import Store
from storage import documents
from storage.db import Conn


async def list_bodies(conn: Conn, table: str, account_id: str) -> list[dict[str, Any]]:
    return [doc.body for doc in await documents.list_all(conn, table, account_id)]


async def brands(store: Store, account_id: str) -> list[dict[str, Any]]:
    return await list_bodies(store.reader, "brands", account_id)


async def tiers(store: Store, account_id: str) -> list[dict[str, Any]]:
    """Ordered by level, lowest first."""
    return await list_bodies(store.reader, "tiers", account_id)
