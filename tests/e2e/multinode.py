"""Several ``linksvc serve`` nodes on one PostgreSQL database, driven over HTTP: what
tests/e2e/test_multinode_pg.py and tests/e2e/test_pgbouncer.py both do (start the nodes, send events to them
in turn, wait for their deliveries, try the customer migration's rate limit across them)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg

from tests.factories import ADMIN_TOKEN, KEYS, A
from tests.processes import ServiceStore, WebhookRecorder, call, free_port, ready, start_forwarding_service, stop

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}", "Content-Type": "application/json"}


@dataclass
class Nodes:
    """The nodes' processes and base URLs, in the order they were started."""

    processes: list[subprocess.Popen[bytes]]
    bases: list[str]


@contextmanager
def nodes(tmp_path: Path, count: int, database_url: str, extra: dict[str, str] | None = None) -> Iterator[Nodes]:
    """``count`` nodes on ``database_url``, each answering ``/readyz`` (the first start loads the accounts; the
    others find them there); those still running are stopped at the end."""
    started = Nodes([], [])
    try:
        for n in range(count):
            folder = tmp_path / f"node{n}"
            folder.mkdir()
            port = free_port()
            started.processes.append(start_forwarding_service(folder, port, database_url=database_url, extra=extra))
            started.bases.append(f"http://127.0.0.1:{port}")
            assert ready(started.bases[-1], 60), (folder / f"server-{port}.log").read_text()[-3000:]
        yield started
    finally:
        for process in started.processes:
            if process.poll() is None:
                stop(process)


def rows(url: str, sql: str) -> list[Any]:
    """The rows of one query, on a connection of its own."""
    async def fetch() -> list[Any]:
        conn = await asyncpg.connect(url)
        try:
            return list(await conn.fetch(sql))
        finally:
            await conn.close()
    return asyncio.run(fetch())


def delivered(handler: type[WebhookRecorder]) -> Counter[str]:
    """How many times the receiver got each accepted event, by event id."""
    return Counter(b["data"]["id"] for b in list(handler.bodies) if b.get("type") == "event.accepted")


def storefront(bases: list[str], receiver_url: str) -> dict[str, str]:
    """A webhook connection of account A to ``receiver_url`` (made on the first node) and the headers of a
    storefront token (got from the second)."""
    connection = {"destination": "webhook", "event_types": ["PURCHASE"],
                  "config": {"endpoint_url": receiver_url, "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}}
    status, body, _ = call(f"{bases[0]}/api/admin/v1/accounts/{A}/connections", ADMIN, "POST",
                           json.dumps(connection).encode())
    assert status == 201, body
    status, body, _ = call(bases[1 % len(bases)] + "/api/storefront/v1/auth/authorize",
                           {"x-api-key": KEYS[(A, "SERVER")]})
    assert status == 200, body
    return {"Authorization": f"Bearer {body['data']}", "Content-Type": "application/json"}


def send(base: str, headers: dict[str, str], order_id: str) -> str:
    """One purchase event, accepted (202); its id."""
    event = {"type": "PURCHASE", "customer_id": "cust-aaaa", "order_id": order_id, "currency": "COP",
             "value": 5, "products": [{"sku": "X"}]}
    status, body, _ = call(base + "/api/storefront/v1/behavior/events", headers, "POST", json.dumps(event).encode())
    assert status == 202, body
    return str(body["data"]["id"])


def wait_delivered(handler: type[WebhookRecorder], ids: list[str], seconds: float = 60) -> Counter[str]:
    """What the receiver got once every one of ``ids`` arrived (or ``seconds`` passed)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and set(delivered(handler)) < set(ids):
        time.sleep(0.2)
    return delivered(handler)


def delivered_once(database_url: str, bases: list[str], headers: dict[str, str], handler: type[WebhookRecorder],
                   prefix: str, count: int) -> None:
    """``count`` events sent to the nodes in turn are each stored once (read on ``database_url``) and each
    delivered exactly once to the receiver, which is up."""
    accepted = [send(bases[n % len(bases)], headers, f"{prefix}-{n}") for n in range(count)]
    stored = rows(database_url, f"SELECT order_id, count(*) FROM events WHERE order_id LIKE '{prefix}-%' GROUP BY 1")
    assert len(stored) == count and all(r[1] == 1 for r in stored)
    got = wait_delivered(handler, accepted)
    assert set(accepted) <= set(got), f"{len(set(accepted) & set(got))} of {count} delivered"
    duplicates = sum(n - 1 for n in got.values())
    assert duplicates == 0, f"{duplicates} deliveries made twice with every node up"


def migrations(bases: list[str], headers: dict[str, str], count: int = 30) -> Counter[int]:
    """The statuses of ``count`` customer migrations sent to the nodes in turn (the limit: 15 per 5 s per
    account, across the nodes)."""
    answers: Counter[int] = Counter()
    for n in range(count):
        status, _, _ = call(bases[n % len(bases)] + "/api/storefront/v1/customers/migrate", headers, "POST",
                            json.dumps({"customers": [{"document_number": f"MN-{n}"}]}).encode())
        answers[status] += 1
    return answers


@contextmanager
def two_processes(tmp_path: Path, store: ServiceStore, extra: dict[str, str]) -> Iterator[list[str]]:
    """Base URLs of two processes serving the same store with the settings ``extra``: one port and two workers
    on SQLite, two nodes on PostgreSQL."""
    if store.url:
        with nodes(tmp_path, 2, store.url, extra) as started:
            yield started.bases
        return
    port = free_port()
    process = start_forwarding_service(tmp_path, port, workers=2, extra=extra)
    try:
        base = f"http://127.0.0.1:{port}"
        assert ready(base, 60), (tmp_path / f"server-{port}.log").read_text()[-3000:]
        yield [base, base]
    finally:
        stop(process)
