"""``kill -9`` of the whole service (supervisor and two workers) while purchases and redirects arrive, then a
restart on the same database: the store is intact, every event answered 202 is stored once and reaches the
webhook, the ledger adds up. Clicks still in a worker's buffer at the kill are in its click journal
(linksvc.links.click_journal): the restart stores them, so that every 302 answered has its click stored (and
at most the redirects in flight at the kill besides), every row of a real link with a tracking id, and the
restarted service records every click it takes before a clean stop."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import aiohttp
import pytest

from tests.factories import ADMIN_TOKEN, KEYS, A, B
from tests.processes import (
    NoRedirect,
    ServiceStore,
    WebhookRecorder,
    call,
    children,
    free_port,
    ready,
    start_forwarding_service,
    stop,
    wait_for,
    webhook_receiver,
)

WORKERS = 2
CUSTOMERS = {A: "cust-aaaa", B: "cust-bbbb"}  # the demo customers (tests.factories.two_accounts)
LINKS = ("/lnkaaaa", "/lnkbbbb")  # the demo short links
VALUE = 5  # of every purchase
EVENT_CLIENTS = 6
CLICK_CLIENTS = 6
MIN_ACCEPTED = 30  # before the kill
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


@dataclass(repr=False)
class Load:
    """What the clients saw up to the kill."""

    accepted: dict[str, str] = field(default_factory=dict)  # order id -> event id, of every 202
    redirected: int = 0  # 302s
    answers: Counter[int] = field(default_factory=Counter)  # every status answered
    cut: int = 0  # requests that got no answer (the kill)
    in_flight: int = 0
    in_flight_at_kill: int = 0
    redirects_in_flight: int = 0
    redirects_in_flight_at_kill: int = 0
    killed_after: float = 0.0  # seconds of load

    def __repr__(self) -> str:
        return (f"killed after {self.killed_after:.1f} s with {self.in_flight_at_kill} requests in flight: "
                f"{len(self.accepted)} events accepted, {self.redirected} redirects, {self.cut} cut, "
                f"answers {dict(self.answers)}")


def _kill_9(supervisor: subprocess.Popen[bytes]) -> None:
    """SIGKILL to every process of the service. Workers run in process groups of their own and get SIGTERM
    (a clean stop) when the supervisor dies, so the supervisor is frozen first, the workers killed, then it."""
    os.kill(supervisor.pid, signal.SIGSTOP)
    workers = children(supervisor.pid)
    for pid in workers:
        os.kill(pid, signal.SIGKILL)
    supervisor.kill()
    supervisor.wait(timeout=10)
    assert wait_for(lambda: all(_gone(pid) for pid in workers), 10)


def _gone(pid: int) -> bool:
    try:
        return "zombie" in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True


async def _run_load(base: str, tokens: dict[str, str], supervisor: subprocess.Popen[bytes]) -> Load:
    load = Load()
    stopping = asyncio.Event()
    timeout = aiohttp.ClientTimeout(total=10)

    async def purchases(session: aiohttp.ClientSession, client: int) -> None:
        account = (A, B)[client % 2]
        headers = {"Authorization": f"Bearer {tokens[account]}"}
        n = 0
        while not stopping.is_set():
            n += 1
            order_id = f"mixed-{client}-{n}"
            event = {"type": "PURCHASE", "customer_id": CUSTOMERS[account], "order_id": order_id,
                     "currency": "COP", "value": VALUE, "products": [{"sku": "LATTE"}]}
            load.in_flight += 1
            try:
                async with session.post(base + "/api/storefront/v1/behavior/events", json=event,
                                        headers=headers) as response:
                    body = await response.read()
                    load.answers[response.status] += 1
                    if response.status == 202:
                        load.accepted[order_id] = json.loads(body)["data"]["id"]
            except (aiohttp.ClientError, TimeoutError):
                load.cut += 1
            finally:
                load.in_flight -= 1

    async def redirects(session: aiohttp.ClientSession, client: int) -> None:
        while not stopping.is_set():
            load.in_flight += 1
            load.redirects_in_flight += 1
            try:
                async with session.get(base + LINKS[client % 2], allow_redirects=False) as response:
                    await response.read()
                    load.answers[response.status] += 1
                    load.redirected += response.status == 302
            except (aiohttp.ClientError, TimeoutError):
                load.cut += 1
            finally:
                load.in_flight -= 1
                load.redirects_in_flight -= 1

    async def killer() -> None:
        # Somewhere between one and two seconds in, and not before a few events were accepted.
        began = time.monotonic()
        kill_at = began + random.uniform(1.0, 2.0)
        try:
            while time.monotonic() < kill_at or len(load.accepted) < MIN_ACCEPTED:
                if time.monotonic() > began + 30:
                    raise AssertionError(f"too few events accepted: {load}")
                await asyncio.sleep(0.02)
            load.in_flight_at_kill = load.in_flight
            load.redirects_in_flight_at_kill = load.redirects_in_flight
            load.killed_after = time.monotonic() - began
            _kill_9(supervisor)
        finally:
            stopping.set()

    async with aiohttp.ClientSession(timeout=timeout) as session:
        await asyncio.gather(killer(), *(purchases(session, c) for c in range(EVENT_CLIENTS)),
                             *(redirects(session, c) for c in range(CLICK_CLIENTS)))
    return load


def _start(tmp_path: Path, store: ServiceStore) -> tuple[str, subprocess.Popen[bytes]]:
    port = free_port()
    process = start_forwarding_service(tmp_path, port, workers=WORKERS, database_url=store.url)
    base = f"http://127.0.0.1:{port}"
    if not ready(base) or not wait_for(lambda: len(children(process.pid)) == WORKERS):
        stop(process)
        raise AssertionError("the service did not start: " + (tmp_path / f"server-{port}.log").read_text())
    return base, process


STRAYS = ("clicks LEFT JOIN links ON links.id = clicks.link_id AND links.account_id = clicks.account_id",
          "links.id IS NULL OR clicks.tracking_id = ''")  # clicks of no link, or without a tracking id


def test_kill_9_under_mixed_load_then_restart(tmp_path: Path, store: ServiceStore,
                                              receiver: tuple[str, type[WebhookRecorder]]) -> None:
    # Account A's webhook is down until after the restart (everything of A waits in the outbox at the kill);
    # B's is up throughout (B's deliveries are being sent when the kill comes).
    with webhook_receiver() as live:
        live[1].up = True
        _kill_9_then_restart(tmp_path, store, {A: receiver, B: live})


def _kill_9_then_restart(tmp_path: Path, store: ServiceStore,
                         receivers: dict[str, tuple[str, type[WebhookRecorder]]]) -> None:
    base, process = _start(tmp_path, store)
    try:
        admin = {"Authorization": f"Bearer {ADMIN_TOKEN}", "Content-Type": "application/json"}
        tokens = {}
        for account, (url, _) in receivers.items():
            connection = {"destination": "webhook", "event_types": ["PURCHASE"],
                          "config": {"endpoint_url": url, "secret": SECRET}}
            status, body, _ = call(f"{base}/api/admin/v1/accounts/{account}/connections", admin, "POST",
                                   json.dumps(connection).encode())
            assert status == 201, body
            status, body, _ = call(base + "/api/storefront/v1/auth/authorize", {"x-api-key": KEYS[(account, "SERVER")]})
            assert status == 200, body
            tokens[account] = body["data"]
        load = asyncio.run(_run_load(base, tokens, process))
    finally:
        if process.poll() is None:
            _kill_9(process)
    assert len(load.accepted) >= MIN_ACCEPTED and load.in_flight_at_kill > 0, load  # killed mid-request
    assert set(load.answers) <= {202, 302, 503}, load  # 503: the store busy past its timeout, by design

    # The store right after the crash, before the service opens it again.
    assert store.integrity() == "ok"
    stored = store.rows("SELECT id, order_id, customer_id FROM events WHERE order_id LIKE 'mixed-%'")
    issued = store.rows("SELECT event_id FROM wallet_lines WHERE event_id IS NOT NULL")
    totals = {row[0]: (row[1], Decimal(row[2])) for row in store.rows(
        "SELECT customer_id, purchase_count, purchase_total FROM customer_stats")}
    clicks_before = store.count("clicks")
    strays = store.count(*STRAYS)
    # Every event answered 202 is stored under the id it was answered with (ids and order ids are unique in
    # the schema, so that is once); events cut off by the kill may be stored or not.
    by_order = {order_id: event_id for event_id, order_id, _ in stored}
    lost = {order: event for order, event in load.accepted.items() if by_order.get(order) != event}
    assert not lost, f"{len(lost)} of {len(load.accepted)} accepted events are not stored: {lost} ({load})"
    # Each stored purchase issued its one line and counts once in its customer's running totals.
    stored_of = {account: {e for e, _, c in stored if c == customer} for account, customer in CUSTOMERS.items()}
    assert Counter(event_id for (event_id,) in issued) == Counter(event_id for event_id, _, _ in stored)
    for account, customer in CUSTOMERS.items():
        count = len(stored_of[account])
        assert totals.get(customer, (0, Decimal(0))) == (count, Decimal(VALUE * count)), account
    assert store.ledger_mismatches(*CUSTOMERS) == {A: [], B: []}
    # Clicks: those still buffered wait in the journals; none is invented or half written.
    assert clicks_before <= load.redirected
    assert strays == 0
    assert list(tmp_path.glob("*.journal")), "the killed workers left no click journal"

    receivers[A][1].up = True
    base, process = _start(tmp_path, store)
    try:
        # Every stored event (each accepted one among them) reaches its account's webhook, at least once: a
        # delivery in flight at the kill is sent again once its lease has run out. Nothing else is forwarded.
        def forwarded(account: str) -> set[str]:
            bodies = list(receivers[account][1].bodies)
            return {b["data"]["id"] for b in bodies if b["type"] == "event.accepted"}

        assert wait_for(lambda: all(forwarded(a) >= stored_of[a] for a in CUSTOMERS), 60), \
            {a: f"{len(stored_of[a] - forwarded(a))} of {len(stored_of[a])} not forwarded" for a in CUSTOMERS}
        assert all(forwarded(a) == stored_of[a] for a in CUSTOMERS)
        # The restarted service redirects and, stopped cleanly, stores every click it took.
        opener = urllib.request.build_opener(NoRedirect)
        clicks_after = 30
        for n in range(clicks_after):
            with pytest.raises(urllib.error.HTTPError) as answer:
                opener.open(base + LINKS[n % 2], timeout=10)
            assert answer.value.code == 302
    finally:
        stop(process, grace=30)
    assert process.returncode == 0
    assert store.integrity() == "ok"
    first_run = store.count("clicks") - clicks_after
    strays = store.count(*STRAYS)
    # Every click answered before the kill is stored, with at most the redirects cut off by the kill besides.
    assert load.redirected <= first_run <= load.redirected + load.redirects_in_flight_at_kill, (first_run, load)
    assert strays == 0
    assert not list(tmp_path.glob("*.journal")) and not list(tmp_path.glob("*.spill.jsonl*"))
    assert store.ledger_mismatches(*CUSTOMERS) == {A: [], B: []}
