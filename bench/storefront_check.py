"""Proof that the bulk-inserted rows are the rows the service itself writes.

The first campaigns and customers are generated again (the generator is seeded) and

1. saved through the real save path (:func:`linksvc.resources.service.save`, the code behind seed files
   and the admin API) into a scratch in-memory database seeded with the same account;
2. compared column by column, side tables included (``campaign_restrictions``, ``wallet_lines``), with the
   scratch rows and with the rows of the cached benchmark database.

Only ``created_at``/``updated_at`` may differ from the save path (it stamps "now"); they must still have
the format of :func:`linksvc.clock.iso`.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from itertools import islice
from pathlib import Path
from typing import Any

from bench import data
from bench import storefront_docs as docs
from linksvc.resources.kinds import KINDS
from linksvc.resources.service import save
from linksvc.seed import load_seed
from storage.db import Database, fetch_all
from storage.wallet import LINE_COLUMNS

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
STAMPS = (3, 4)  # created_at, updated_at in the row tuples of bench.data


class Mismatch(AssertionError):
    """A generated row differs from what the service writes."""


def _same(what: str, generated: Sequence[Any], stored: Sequence[Any], ignore: tuple[int, ...] = ()) -> None:
    for i, (ours, theirs) in enumerate(zip(generated, stored, strict=True)):
        if i in ignore:
            if not ISO.match(str(theirs)):
                raise Mismatch(f"{what}: column {i} is not an ISO timestamp: {theirs!r}")
            continue
        if ours != theirs:
            raise Mismatch(f"{what}: column {i} differs:\n  generated {ours!r}\n  stored    {theirs!r}")


async def _rows(conn: Any, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in await fetch_all(conn, sql, params)]


def _select(table: str, columns: Sequence[str]) -> str:
    return f"SELECT {', '.join(columns)} FROM {table} WHERE id = ?"


async def _restrictions(conn: Any, campaign_id: str) -> list[tuple[Any, ...]]:
    return sorted(await _rows(conn, "SELECT dimension, value FROM campaign_restrictions WHERE campaign_id = ?",
                              campaign_id))


async def _lines(conn: Any, customer_id: str) -> list[tuple[Any, ...]]:
    return sorted(await _rows(conn, f"SELECT {', '.join(LINE_COLUMNS)} FROM wallet_lines WHERE customer_id = ?",
                              customer_id))


async def _compare(conn: Any, campaigns: list[docs.Campaign], customers: list[docs.Customer],
                   where: str, ignore: tuple[int, ...], customer_offset: int) -> None:
    """``customer_offset``: the row index of the first customer (its created_at follows the campaigns')."""
    for i, c in enumerate(campaigns):
        found = await _rows(conn, _select("campaigns", data.CAMPAIGN_COLUMNS), c.id)
        if not found:
            raise Mismatch(f"{where}: campaign {c.id} is missing")
        _same(f"{where}: campaign {i}", data.campaign_row(c, i), found[0], ignore)
        _same(f"{where}: restrictions of campaign {i}", [sorted(c.restrictions)], [await _restrictions(conn, c.id)])
    for i, u in enumerate(customers):
        found = await _rows(conn, _select("customers", data.CUSTOMER_COLUMNS), u.id)
        if not found:
            raise Mismatch(f"{where}: customer {u.id} is missing")
        _same(f"{where}: customer {i}", data.customer_row(u, customer_offset + i), found[0], ignore)
        _same(f"{where}: wallet lines of customer {i}", [sorted(data.line_rows(u))], [await _lines(conn, u.id)])


async def _through_save_path(campaigns: list[docs.Campaign], customers: list[docs.Customer]) -> None:
    db = Database(":memory:")
    await db.open()
    try:
        await load_seed(db, docs.seed_document(), allow_private=False)
        async with db.transaction() as tx:
            for c in campaigns:
                await save(tx, KINDS["campaigns"], docs.ACCOUNT_ID, c.body, must_exist=False)
            for u in customers:
                await save(tx, KINDS["customers"], docs.ACCOUNT_ID, u.body, must_exist=False)
        await _compare(db.reader, campaigns, customers, "save path", STAMPS, 0)
    finally:
        await db.close()


def check(path: Path, campaigns: int, sample: int = 300) -> int:
    """Check the first ``sample`` campaigns and customers; returns how many documents were compared.

    The campaign sample covers the pool of campaigns that wallet lines refer to, so that the save path's
    reference checks pass in the scratch database.
    """
    n_campaigns = min(campaigns, max(sample, data.WALLET_CAMPAIGN_POOL))
    camps = list(islice(data.generate_campaigns(campaigns), n_campaigns))
    custs = list(islice(data.generate_customers(sample, campaigns), sample))
    asyncio.run(_through_save_path(camps, custs))
    with data.readonly(path) as conn:
        asyncio.run(_compare(conn, camps, custs, str(path), (), campaigns))
    return len(camps) + len(custs)
