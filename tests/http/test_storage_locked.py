"""A database locked by another process gives a clear 503, not a 500 and not half-written data; reads go on.

Another ``sqlite3`` connection (a backup tool, ``sqlite3`` in a shell, a second service pointed at the same
file) takes the write lock with ``BEGIN IMMEDIATE`` and a pending write, and holds it longer than the
service's busy timeout. In WAL mode readers never wait for that lock, so lookups, campaign lists and
redirects keep answering; every write waits the busy timeout, then answers 503 ``Storage unavailable`` with
``Retry-After``, whichever path it takes: a plain transaction (admin API, migrate, the rate limiter) or the
group commit of the write queue (behavior events). Once the lock is gone the very same writes are
accepted, once, and the ledger adds up.

The busy timeout is 5 s, fixed in ``storage/writer.py``; like the full-disk test, this test shortens it on the
writer connection (``PRAGMA busy_timeout``) so that a refused write takes a quarter of a second.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import DB
from storage import wallet as wallet_repo
from storage.db import fetch_one
from tests import pgstore
from tests.conftest import ADMIN, bearer, token_for
from tests.factories import A, B, ids

# Another process holding SQLite's file write lock is SQLite's own situation: a PostgreSQL server has no file
# lock to hold (its own faults, a full disk, are tests/http/test_storage_faults.py's on both stores).
pytestmark = pytest.mark.skipif(bool(pgstore.admin_url()), reason="SQLite's file lock; PostgreSQL has none")

STOREFRONT = "/api/storefront/v1"
ADMIN_API = "/api/admin/v1"
BUSY_MS = 250
TABLES = ("events", "ledger_entries", "wallet_lines", "customers", "brands", "rate_events", "deliveries",
          "clicks", "access_tokens")


async def _counts(client: TestClient) -> dict[str, int]:
    counts = {}
    for table in TABLES:
        row = await fetch_one(client.app[DB].reader, f"SELECT count(*) AS n FROM {table}")
        counts[table] = int(row["n"]) if row else 0
    return counts


@contextmanager
def held_write_lock(path: str) -> Iterator[sqlite3.Connection]:
    """Another connection holding the write lock with a write in progress, until the block ends."""
    holder = sqlite3.connect(path, isolation_level=None, timeout=0)
    try:
        holder.execute("BEGIN IMMEDIATE")
        holder.execute("UPDATE accounts SET name = name || ' (being edited)'")
        yield holder
    finally:
        if holder.in_transaction:
            holder.execute("ROLLBACK")
        holder.close()


def _purchase(order_id: str, customer_id: str) -> dict[str, Any]:
    return {"type": "PURCHASE", "customer_id": customer_id, "order_id": order_id, "currency": "COP",
            "value": 25000, "products": [{"sku": "SKU-1"}]}


def _writes(server_a: dict[str, str], server_b: dict[str, str]) -> list[tuple[str, str, dict[str, Any],
                                                                              dict[str, str]]]:
    """(name, path, body, headers) of one write on each path a write can take."""
    return [
        ("event (group commit)", f"{STOREFRONT}/behavior/events", _purchase("locked-1", "cust-aaaa"), server_a),
        ("bulk events (group commit)", f"{STOREFRONT}/behavior/events/bulk",
         {"events": [_purchase("locked-2", "cust-bbbb"), _purchase("locked-3", "cust-bbbb")]}, server_b),
        ("migrate, production (rate limiter)", f"{STOREFRONT}/customers/migrate",
         {"customers": [{"external_id": "locked-a", "name": "Luz"}]}, server_a),
        ("migrate, sandbox", f"{STOREFRONT}/customers/migrate",
         {"customers": [{"external_id": "locked-b", "name": "Luz"}]}, server_b),
        ("admin create", f"{ADMIN_API}/accounts/{A}/brands", {"name": "Brand made while locked"}, ADMIN),
    ]


async def test_a_locked_database_refuses_writes_with_503_and_keeps_reading(seeded: TestClient) -> None:
    client = seeded
    db = client.app[DB]
    server_a, server_b = bearer(await token_for(client, A)), bearer(await token_for(client, B))
    async with db.transaction() as tx:  # the writer's connection waits this long for the lock
        await fetch_one(tx, f"PRAGMA busy_timeout = {BUSY_MS}")
    before = await _counts(client)

    with held_write_lock(db.path):
        await _refused_writes(client, server_a, server_b)
        await _reads_go_on(client, server_a)
        # A new token is a write too: refused the same way, and the key stays good for later.
        authorize = await client.get(f"{STOREFRONT}/auth/authorize",
                                     headers={"x-api-key": "lk_test_a_client_000000000000000001"})
        assert authorize.status == 503, await authorize.text()
        # Nothing of any refused write is there, not even the rate limiter's record of the migrate.
        assert await _counts(client) == before

    # The lock is gone: the same writes go through, each once.
    answers = {}
    for name, path, body, headers in _writes(server_a, server_b):
        response = await client.post(path, json=body, headers=headers)
        answers[name] = (response.status, await response.json())
    assert {name: status for name, (status, _) in answers.items()} == {
        "event (group commit)": 202, "bulk events (group commit)": 200,
        "migrate, production (rate limiter)": 200, "migrate, sandbox": 200, "admin create": 201}
    assert answers["bulk events (group commit)"][1]["data"]["accepted"] == 2
    assert answers["migrate, production (rate limiter)"][1]["data"]["created"] == 1
    after = await _counts(client)
    assert after["events"] == before["events"] + 3
    assert after["customers"] == before["customers"] + 2
    assert after["brands"] == before["brands"] + 1
    assert after["rate_events"] == before["rate_events"] + 1
    assert after["ledger_entries"] > before["ledger_entries"]  # the Welcome campaign issued points
    # The click taken while the lock was held was kept in memory and is stored now.
    clicks = await client.get(f"{ADMIN_API}/accounts/{A}/links/{ids(A)['links']}/clicks", headers=ADMIN)
    assert clicks.status == 200 and (await clicks.json())["data"]["human"] == 1
    for account in (A, B):
        assert await wallet_repo.ledger_mismatches(db.reader, account) == []
    async with db.transaction() as tx:
        integrity = await fetch_one(tx, "PRAGMA integrity_check")
    assert integrity is not None and integrity[0] == "ok"
    # The holder's uncommitted edit was rolled back, never mixed with the service's writes.
    row = await fetch_one(db.reader, "SELECT count(*) AS n FROM accounts WHERE name LIKE '%being edited%'")
    assert row is not None and row["n"] == 0


async def _refused_writes(client: TestClient, server_a: dict[str, str], server_b: dict[str, str]) -> None:
    for name, path, body, headers in _writes(server_a, server_b):
        response = await client.post(path, json=body, headers=headers)
        answer = await response.json()
        assert response.status == 503, (name, answer)
        assert set(answer) == {"error", "details"}, name
        assert answer["error"] == "Storage unavailable", name
        assert "locked" in answer["details"] and "retry" in answer["details"], name
        assert int(response.headers["Retry-After"]) > 0, name
        assert "Traceback" not in answer["details"]


async def _reads_go_on(client: TestClient, server_a: dict[str, str]) -> None:
    lookup = await client.get(f"{STOREFRONT}/customers?document_number=CC100", headers=server_a)
    assert lookup.status == 200, await lookup.text()
    assert (await lookup.json())["data"]["customer"]["id"] == "cust-aaaa"
    campaigns = await client.get(f"{STOREFRONT}/campaigns?from=0&to=9", headers=server_a)
    assert campaigns.status == 200, await campaigns.text()
    assert [c["name"] for c in (await campaigns.json())["data"]] == ["Welcome"]
    redirect = await client.get("/lnkaaaa", allow_redirects=False, headers={
        "User-Agent": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
                      "Chrome/124.0 Safari/537.36"})
    assert redirect.status == 302
    assert redirect.headers["Location"].startswith("https://shop.example/p?x=1")
    brands = await client.get(f"{ADMIN_API}/accounts/{A}/brands", headers=ADMIN)
    assert brands.status == 200 and (await brands.json())["count"] == 1
    ready = await client.get("/readyz")
    assert ready.status == 200
    # Click counts: the click just taken waits in memory (it cannot be written yet); what is stored is counted.
    clicks = await client.get(f"{ADMIN_API}/accounts/{A}/links/{ids(A)['links']}/clicks", headers=ADMIN)
    assert clicks.status == 200, await clicks.text()
    assert (await clicks.json())["data"]["human"] == 0
    overview = await client.get(f"{ADMIN_API}/accounts/{A}/links/overview", headers=ADMIN)
    assert overview.status == 200, await overview.text()


async def test_a_burst_of_writes_on_a_locked_database_is_all_503_and_nothing_stored(seeded: TestClient) -> None:
    """Concurrent writers queue for the one writer connection: each group or transaction waits the busy
    timeout once, and every request still gets its 503 (none a 500, none a 408), none stored."""
    client = seeded
    db = client.app[DB]
    server_a = bearer(await token_for(client, A))
    async with db.transaction() as tx:  # the writer's connection waits this long for the lock
        await fetch_one(tx, f"PRAGMA busy_timeout = {BUSY_MS}")
    before = await _counts(client)
    with held_write_lock(db.path):
        requests = [client.post(f"{STOREFRONT}/behavior/events", json=_purchase(f"burst-{n}", "cust-aaaa"),
                                headers=server_a) for n in range(20)]
        requests += [client.post(f"{ADMIN_API}/accounts/{A}/brands", json={"name": f"Burst {n}"}, headers=ADMIN)
                     for n in range(4)]
        responses = await asyncio.gather(*requests)
        assert [r.status for r in responses] == [503] * len(responses)
        for response in responses:
            assert (await response.json())["error"] == "Storage unavailable"
        assert await _counts(client) == before
    retried = await client.post(f"{STOREFRONT}/behavior/events", json=_purchase("burst-0", "cust-aaaa"),
                                headers=server_a)
    assert retried.status == 202
    assert (await _counts(client))["events"] == before["events"] + 1
    assert await wallet_repo.ledger_mismatches(db.reader, A) == []
