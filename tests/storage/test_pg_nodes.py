"""Several nodes on one PostgreSQL database: two dispatchers (two ``PostgresDatabase`` objects, as two
processes have) share the outbox, and two exporters share the export.

- Every delivery reaches a local receiver, none twice: claims are ``FOR UPDATE SKIP LOCKED`` under a lease.
- A delivery claimed by a node that died (its lease written, no outcome ever) is sent by another node once
  the lease has run out, and not before; a node killed with its requests in flight loses none of them (each
  is sent once more by the survivor: the one duplicate at-least-once allows).
- Two exporters running at once while events keep arriving write every event exactly once.

Runs only with ``LINKSVC_TEST_DATABASE_URL`` (tests/pgstore.py); on SQLite there is one writer and the same
guarantees are tested by tests/http/test_forwarding.py and tests/storage/test_export.py.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from linksvc.clock import iso, utcnow
from linksvc.forwarding import outbox
from linksvc.forwarding.dispatcher import Dispatcher
from linksvc.forwarding.export import ExportTarget, export_events
from storage import deliveries as repo
from storage.db import execute, fetch_all, fetch_one
from storage.postgres import PgConnection, PostgresDatabase
from tests import pgstore

pytestmark = pytest.mark.skipif(pgstore.admin_url() is None, reason="needs LINKSVC_TEST_DATABASE_URL")

ACCOUNT = "acct-nodes"
CONNECTION = "conn-nodes"
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


@pytest.fixture
def url(pg_database: pgstore.TestDatabase | None) -> str:
    assert pg_database is not None
    pg_database.reset()
    return pg_database.url


@pytest.fixture
async def nodes(url: str, tmp_path: Path) -> AsyncIterator[tuple[PostgresDatabase, PostgresDatabase]]:
    first, second = PostgresDatabase(url, str(tmp_path / "a")), PostgresDatabase(url, str(tmp_path / "b"))
    await first.open()
    await second.open()
    yield first, second
    await first.close()
    await second.close()


class Receiver:
    """Counts each webhook by its ``webhook-id`` (the delivery's message id)."""

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()
        self.server: TestServer | None = None
        self.hang = False  # receive, then never answer (a node that dies mid-delivery never hears back)

    async def handle(self, request: web.Request) -> web.Response:
        await request.read()
        self.seen[request.headers["webhook-id"]] += 1
        if self.hang:
            await asyncio.Event().wait()
        await asyncio.sleep(0.005)
        return web.json_response({})


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    recv = Receiver()
    app = web.Application()
    app.router.add_post("/in", recv.handle)
    recv.server = TestServer(app, host="127.0.0.1")
    await recv.server.start_server()
    yield recv
    await recv.server.close()


async def _account(db: PostgresDatabase, endpoint: str) -> None:
    now = iso(utcnow())
    body = {"id": CONNECTION, "destination": "webhook", "enabled": True, "forward_events": True,
            "forward_purchases": True, "event_types": ["page_view"],
            "config": {"endpoint_url": endpoint, "secret": SECRET}}

    async def unit(tx: Any) -> None:
        await execute(tx, "INSERT INTO accounts (id, name, environment, created_at, updated_at) "
                          "VALUES (?, 'Nodes', 'sandbox', ?, ?)", (ACCOUNT, now, now))
        await execute(tx, "INSERT INTO connections (id, account_id, destination, enabled, body, created_at, "
                          "updated_at) VALUES (?, ?, 'webhook', 1, ?, ?, ?)",
                      (CONNECTION, ACCOUNT, json.dumps(body), now, now))

    await db.write(unit)


async def _events(db: PostgresDatabase, count: int, deliveries: bool = True) -> list[str]:
    """``count`` page views, each with its pending webhook delivery (one customer each: no ordering waits)."""
    now = iso(utcnow())
    ids = [f"evt-{uuid.uuid4().hex}" for _ in range(count)]

    async def unit(tx: Any) -> None:
        for event_id in ids:
            body = {"type": "page_view", "issued_at": now, "properties": {}}
            await execute(tx, "INSERT INTO events (id, account_id, type, customer_id, order_id, payload_hash, "
                              "issued_at, received_at, key_kind, body, effects) "
                              "VALUES (?, ?, 'page_view', NULL, NULL, 'h', ?, ?, 'SERVER', ?, '{}')",
                          (event_id, ACCOUNT, now, now, json.dumps(body)))
        if deliveries:  # as the service enqueues them with the event
            await outbox.enqueue_many(tx, ACCOUNT, [
                ({"id": event_id, "type": "page_view", "customer_id": None, "body": {"type": "page_view"}}, None,
                 "event", {}) for event_id in ids], now)

    await db.write(unit)
    return ids


async def _states(db: PostgresDatabase) -> Counter[str]:
    return Counter(str(r["state"]) for r in await fetch_all(db.reader, "SELECT state FROM deliveries"))


async def _settled(db: PostgresDatabase, expected: int, seconds: float = 30.0) -> None:
    for _ in range(int(seconds / 0.05)):
        if (await _states(db))["delivered"] == expected:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"not all delivered: {await _states(db)}")


def _dispatcher(db: PostgresDatabase, lease: float | None = None) -> Dispatcher:
    return Dispatcher(db, concurrency=8, max_tries=3, backoff=0.01, timeout=2.0, allow_private=True,
                      lease_seconds=lease)


async def test_two_dispatchers_deliver_every_delivery_once(nodes: tuple[PostgresDatabase, PostgresDatabase],
                                                           receiver: Receiver) -> None:
    first, second = nodes
    assert receiver.server is not None
    await _account(first, str(receiver.server.make_url("/in")))
    one, two = _dispatcher(first), _dispatcher(second)
    one.start()
    two.start()
    try:
        ids: list[str] = []
        for n in range(6):  # written by both nodes while both dispatch
            ids += await _events(first if n % 2 else second, 25)
            one.wake()
            two.wake()
        await _settled(first, len(ids))
    finally:
        await one.stop()
        await two.stop()
    assert len(receiver.seen) == len(ids)
    assert set(receiver.seen.values()) == {1}  # no duplicate: no node died
    assert one.sent > 0 and two.sent > 0  # both took part
    assert one.sent + two.sent == len(ids)
    left = await fetch_one(first.reader, "SELECT count(*) FROM deliveries WHERE claimed_by IS NOT NULL "
                                         "OR lease_until IS NOT NULL")
    assert left is not None and left[0] == 0


async def test_a_dead_nodes_claim_is_taken_over_after_its_lease(nodes: tuple[PostgresDatabase, PostgresDatabase],
                                                                receiver: Receiver) -> None:
    first, second = nodes
    assert receiver.server is not None
    await _account(first, str(receiver.server.make_url("/in")))
    await _events(first, 3)
    await first.write(outbox.fan_out, outbox.FAN_OUT_TURN)  # their deliveries, as a node's dispatcher makes them
    # A node claims them, then dies before sending (kill -9: no outcome is ever recorded).
    lease = 1.5
    now = utcnow()
    async with first.pool.acquire() as conn, conn.transaction(isolation="read_committed"):
        claimed = await repo.claim(PgConnection(conn), iso(now), iso(now + timedelta(seconds=lease)), 10,
                                   "dead-node:1:x")
    assert len(claimed) == 3
    survivor = _dispatcher(second, lease=lease)
    survivor.start()
    try:
        await asyncio.sleep(lease / 3)
        assert not receiver.seen  # still leased to the dead node
        assert (await _states(second))["pending"] == 3
        await _settled(second, 3, seconds=lease + 10)
    finally:
        await survivor.stop()
    assert datetime.now(UTC) >= now + timedelta(seconds=lease)
    assert sorted(receiver.seen) == sorted(c.dedup_key for c in claimed)
    assert set(receiver.seen.values()) == {1}
    # The dead node, were it to wake up and record an outcome now, would not overwrite the survivor's.
    async def late(tx: Any) -> bool:
        return await repo.record(tx, claimed[0].seq, "failed", 1, iso(utcnow()), 500, "late", None,
                                 iso(utcnow()), "dead-node:1:x")

    assert not await first.write(late)
    assert (await _states(first))["delivered"] == 3


async def test_a_node_killed_mid_delivery_loses_nothing(url: str, tmp_path: Path,
                                                       nodes: tuple[PostgresDatabase, PostgresDatabase],
                                                       receiver: Receiver) -> None:
    """A node that dies while its requests are in flight (no outcome recorded, its connections gone): the
    other node sends them again once the lease has run out. That second send is the one duplicate the
    at-least-once contract allows, and each delivery is recorded once, by the survivor."""
    _, second = nodes
    assert receiver.server is not None
    await _account(second, str(receiver.server.make_url("/in")))
    doomed = PostgresDatabase(url, str(tmp_path / "doomed"))
    await doomed.open()
    lease = 1.5
    dying = Dispatcher(doomed, concurrency=8, max_tries=3, backoff=0.01, timeout=30.0, allow_private=True,
                       lease_seconds=lease)
    receiver.hang = True
    ids = await _events(second, 3)
    dying.start()
    for _ in range(200):
        if len(receiver.seen) == 3:
            break
        await asyncio.sleep(0.02)
    assert len(receiver.seen) == 3  # all three in flight on the doomed node
    # kill -9: its tasks stop where they are and its connections to PostgreSQL drop; nothing is recorded.
    killed = [task for task in (dying._task, *dying._inflight) if task is not None]
    for task in killed:
        task.cancel()
    await asyncio.gather(*killed, return_exceptions=True)
    doomed.pool.terminate()
    receiver.hang = False
    survivor = _dispatcher(second, lease=lease)
    survivor.start()
    try:
        await _settled(second, 3, seconds=lease + 10)
    finally:
        await survivor.stop()
        assert dying._session is not None
        await dying._session.close()
        await doomed.close()
    assert survivor.sent == 3
    assert set(receiver.seen.values()) == {2}  # the killed node's send and the survivor's, no more
    assert len(ids) == len(receiver.seen) == 3


async def test_two_exporters_write_each_event_once_while_events_arrive(
        nodes: tuple[PostgresDatabase, PostgresDatabase], tmp_path: Path) -> None:
    first, second = nodes
    await _account(first, "http://127.0.0.1:9/in")
    folder = tmp_path / "exports"
    target = ExportTarget("local", folder=str(folder))
    written: list[str] = []
    stop = asyncio.Event()

    async def arrive() -> None:
        for n in range(20):
            written.extend(await _events(first if n % 2 else second, 7, deliveries=False))
            await asyncio.sleep(0.01)
        stop.set()

    async def export(db: PostgresDatabase) -> int:
        total = 0
        while not stop.is_set():
            total += (await export_events(db, target, utcnow(), batch=5)).events
        return total + (await export_events(db, target, utcnow(), batch=5)).events

    _, a, b = await asyncio.gather(arrive(), export(first), export(second))
    a += (await export_events(first, target, utcnow(), batch=5)).events
    lines = [json.loads(line)["id"] for path in sorted(folder.rglob("*.jsonl.gz"))
             for line in gzip.decompress(path.read_bytes()).splitlines()]
    assert Counter(lines) == Counter(written)  # every event, exactly once
    assert a + b == len(written)
    again = await export_events(second, target, utcnow())
    assert again.events == 0
