"""Three ``linksvc serve`` nodes on one PostgreSQL database, on loopback ports: events sent to all three are
applied once each and delivered at least once to a local receiver (duplicates counted), the customer
migration's rate limit holds across the nodes, and a ``kill -9`` of one node while the receiver is down
loses nothing: its claimed deliveries complete on the others once their lease is over (twice the delivery
timeout of 1 s plus 1 s here)."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from tests.factories import ADMIN_TOKEN, KEYS, A
from tests.pgstore import fresh_database
from tests.processes import WebhookRecorder, call, free_port, ready, start_forwarding_service, stop


@pytest.fixture
def database() -> Iterator[str]:
    """A fresh PostgreSQL database for the three nodes (created and dropped around the test)."""
    manager = fresh_database()
    loop = asyncio.new_event_loop()
    try:
        url = loop.run_until_complete(manager.__aenter__())
        yield url
    finally:
        loop.run_until_complete(manager.__aexit__(None, None, None))
        loop.close()


def _rows(url: str, sql: str) -> list[Any]:
    async def fetch() -> list[Any]:
        conn = await asyncpg.connect(url)
        try:
            return list(await conn.fetch(sql))
        finally:
            await conn.close()
    return asyncio.run(fetch())


def _delivered(handler: type[WebhookRecorder]) -> Counter[str]:
    return Counter(b["data"]["id"] for b in list(handler.bodies) if b.get("type") == "event.accepted")


def test_three_nodes_on_one_database(tmp_path: Path, database: str,
                                     receiver: tuple[str, type[WebhookRecorder]]) -> None:
    url, handler = receiver
    handler.up = True
    nodes, bases = [], []
    try:
        for n in range(3):  # the first start loads the accounts; the others find them there
            folder = tmp_path / f"node{n}"
            folder.mkdir()
            port = free_port()
            nodes.append(start_forwarding_service(folder, port, database_url=database))
            bases.append(f"http://127.0.0.1:{port}")
            assert ready(bases[-1], 60), (folder / f"server-{port}.log").read_text()[-3000:]
        admin = {"Authorization": f"Bearer {ADMIN_TOKEN}", "Content-Type": "application/json"}
        connection = {"destination": "webhook", "event_types": ["PURCHASE"],
                      "config": {"endpoint_url": url, "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}}
        status, body, _ = call(f"{bases[0]}/api/admin/v1/accounts/{A}/connections", admin, "POST",
                               json.dumps(connection).encode())
        assert status == 201, body
        status, body, _ = call(bases[1] + "/api/storefront/v1/auth/authorize", {"x-api-key": KEYS[(A, "SERVER")]})
        assert status == 200, body
        headers = {"Authorization": f"Bearer {body['data']}", "Content-Type": "application/json"}

        def send(n: int, prefix: str) -> str:
            event = {"type": "PURCHASE", "customer_id": "cust-aaaa", "order_id": f"{prefix}-{n}", "currency": "COP",
                     "value": 5, "products": [{"sku": "X"}]}
            status, body, _ = call(bases[n % 3] + "/api/storefront/v1/behavior/events", headers, "POST",
                                   json.dumps(event).encode())
            assert status == 202, body
            return str(body["data"]["id"])

        # Events to all three nodes: each applied once, each delivered at least once.
        accepted = [send(n, "multi") for n in range(45)]
        stored = _rows(database, "SELECT order_id, count(*) FROM events WHERE order_id LIKE 'multi-%' GROUP BY 1")
        assert len(stored) == 45 and all(r[1] == 1 for r in stored)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and set(_delivered(handler)) < set(accepted):
            time.sleep(0.2)
        delivered = _delivered(handler)
        assert set(accepted) <= set(delivered), f"{len(set(accepted) & set(delivered))} of 45 delivered"
        duplicates = sum(n - 1 for n in delivered.values())
        assert duplicates == 0, f"{duplicates} deliveries made twice with every node up"

        # The customer migration's limit (15 requests per 5 s per account) across the nodes.
        answers = Counter()
        for n in range(30):
            status, _, _ = call(bases[n % 3] + "/api/storefront/v1/customers/migrate", headers, "POST",
                                json.dumps({"customers": [{"document_number": f"MN-{n}"}]}).encode())
            answers[status] += 1
        assert answers[200] == 15 and answers[429] == 15, answers

        # kill -9 of one node while the receiver is down: its claims complete on the others after the lease.
        handler.up = False
        handler.bodies.clear()
        crash = [send(n, "crash") for n in range(30)]
        time.sleep(1.5)  # every node has tried (and claimed) some of them
        nodes[2].send_signal(signal.SIGKILL)
        nodes[2].wait(timeout=10)
        handler.up = True
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and set(_delivered(handler)) < set(crash):
            time.sleep(0.2)
        delivered = _delivered(handler)
        assert set(crash) <= set(delivered), f"{len(set(crash) & set(delivered))} of 30 delivered after the kill"
    finally:
        for node in nodes:
            if node.poll() is None:
                stop(node)
