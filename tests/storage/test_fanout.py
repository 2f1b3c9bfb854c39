"""Accepting an event writes the same rows whatever the number of the account's connections (issue 33); the
fan-out then makes the deliveries ingest used to write, in the events' order per customer and connection,
also when several workers (nodes, on PostgreSQL) fan out at once. On both stores."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from functools import partial
from typing import Any

import pytest

from linksvc.errors import ServiceError
from linksvc.forwarding import outbox
from linksvc.loyalty import service as events
from linksvc.seed import load_seed
from linksvc.settings import Settings
from storage.db import AnyDatabase, fetch_all, fetch_one, open_store
from storage.postgres import PostgresDatabase
from tests.factories import A, B, two_accounts

CUSTOMERS = {A: "cust-aaaa", B: "cust-bbbb"}


def _seed(connections: dict[str, int]) -> dict[str, Any]:
    """The two accounts, alike, with ``connections[account]`` enabled webhooks each, every type allowed."""
    seed = two_accounts()
    for account in seed["accounts"]:
        webhook = account["connections"][0]
        made = []
        for n in range(connections[account["id"]]):
            connection = copy.deepcopy(webhook)
            connection["id"] = webhook["id"][:24] + f"{n:012d}"
            connection["enabled"] = True
            connection["event_types"] = ["*"]
            made.append(connection)
        account["connections"] = made
    return seed


async def _open(settings: Settings, connections: dict[str, int]) -> AnyDatabase:
    db = open_store(settings.db_path, settings.database_url)
    await db.open()
    await load_seed(db, _seed(connections), allow_private=True)
    return db


async def _rows(db: AnyDatabase) -> dict[str, int]:
    """How many rows each table holds."""
    names = await fetch_all(db.reader, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
                            if isinstance(db, PostgresDatabase) else
                            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    counts = {}
    for (name,) in names:
        row = await fetch_one(db.reader, f'SELECT count(*) FROM "{name}"')
        counts[str(name)] = int(row[0]) if row else 0
    return counts


def _purchases(account_id: str, first: int, count: int) -> list[dict[str, Any]]:
    return [{"type": "PURCHASE", "customer_id": CUSTOMERS[account_id], "order_id": f"o-{n}", "currency": "COP",
             "value": 10, "products": [{"sku": "LATTE-12"}]} for n in range(first, first + count)]


async def _fan_out(db: AnyDatabase) -> None:
    while await db.write(outbox.fan_out, outbox.FAN_OUT_TURN):
        pass


@pytest.fixture
async def store(settings: Settings) -> AsyncIterator[AnyDatabase]:
    db = await _open(settings, {A: 1, B: 8})
    yield db
    await db.close()


async def test_accepting_events_writes_the_same_rows_with_one_connection_and_with_eight(store: AnyDatabase) -> None:
    db = store
    written: dict[str, dict[str, int]] = {}
    for account_id in (A, B):  # A has one connection, B eight
        before = await _rows(db)
        results = await events.ingest(db, account_id, _purchases(account_id, 0, 20), "SERVER", datetime.now(UTC),
                                      bulk=True)
        assert not any(isinstance(r, ServiceError) for r in results), results
        after = await _rows(db)
        written[account_id] = {table: after[table] - before[table] for table in after if after[table] != before[table]}
        await _fan_out(db)  # as the dispatcher does
    assert written[A] == written[B], written
    # The fan-out makes every delivery ingest used to write: an event.accepted per connection and event (and
    # the webhooks' reward and tier kinds where the event did that), all pending.
    found = await fetch_all(db.reader, "SELECT account_id, kind, state, count(*) FROM deliveries "
                                       "WHERE kind = 'event.accepted' GROUP BY account_id, kind, state")
    assert {(str(r[0]), str(r[2])): int(r[3]) for r in found} == {(A, "pending"): 20, (B, "pending"): 160}
    kinds = await fetch_all(db.reader, "SELECT account_id, kind, count(*) FROM deliveries GROUP BY account_id, kind")
    per = {(str(r[0]), str(r[1])): int(r[2]) for r in kinds}
    assert all(per[B, kind] == 8 * per[A, kind] for account_id, kind in per if account_id == A), per


async def test_deliveries_keep_the_events_order_when_workers_fan_out_at_once(store: AnyDatabase) -> None:
    db = store
    accepted: list[str] = []
    for first in range(0, 60, 6):  # ten requests of six purchases of one customer of B (eight connections)
        results = await events.ingest(db, B, _purchases(B, first, 6), "SERVER", datetime.now(UTC), bulk=True)
        accepted += [r[0] for r in results if not isinstance(r, ServiceError)]
    assert len(accepted) == 60

    async def worker() -> None:  # small batches, several at once: they must take turns
        while await db.write(partial(outbox.fan_out, limit=4), outbox.FAN_OUT_TURN):
            await asyncio.sleep(0)

    await asyncio.gather(*(worker() for _ in range(4)))
    rows = await fetch_all(db.reader, "SELECT connection_id, event_id FROM deliveries ORDER BY seq")
    by_connection: dict[str, list[str]] = {}
    for connection_id, event_id in rows:
        by_connection.setdefault(str(connection_id), []).append(str(event_id))
    assert len(by_connection) == 8
    for found in by_connection.values():  # every event, in the events' order (a webhook's kinds of one together)
        assert list(dict.fromkeys(found)) == accepted
        assert [accepted.index(e) for e in found] == sorted(accepted.index(e) for e in found)
