"""The ``link.clicked`` webhook across processes (issue 37): with two processes serving one store (``linksvc serve
--workers 2`` on SQLite, two nodes on PostgreSQL) each click, answered by either, is sent once; and clicks answered
while the receiver is down reach it after a ``kill -9`` and a restart (at least once)."""

from __future__ import annotations

import json
import signal
import urllib.request
from collections import Counter
from pathlib import Path

from tests.e2e.multinode import two_processes
from tests.factories import ADMIN_TOKEN, A
from tests.processes import (
    NoRedirect,
    ServiceStore,
    WebhookRecorder,
    call,
    free_port,
    ready,
    start_forwarding_service,
    wait_for,
)

CODE = f"lnk{A[:4]}"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}", "Content-Type": "application/json"}
FAST = {"LINKSVC_CLICK_FLUSH_SECONDS": "0.2"}


def subscribe(base: str, url: str) -> str:
    connection = {"destination": "webhook", "event_types": ["PURCHASE"],
                  "config": {"endpoint_url": url, "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "clicks": {}}}
    status, body, _ = call(f"{base}/api/admin/v1/accounts/{A}/connections", ADMIN, "POST",
                           json.dumps(connection).encode())
    assert status == 201, body
    return str(body["data"]["id"])


def click(base: str, tracking_id: str) -> None:
    """A click through the redirect, on a connection of its own (the kernel spreads them over the workers)."""
    request = urllib.request.Request(f"{base}/{CODE}?tracking_id={tracking_id}",
                                     headers={"User-Agent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0"})
    try:
        urllib.request.build_opener(NoRedirect).open(request, timeout=10)
    except urllib.error.HTTPError as answer:
        assert answer.code == 302
        return
    raise AssertionError("the link was not redirected")


def received(handler: type[WebhookRecorder]) -> Counter[str]:
    """How many times the receiver got each click, by tracking id."""
    return Counter(c["tracking_id"] for b in list(handler.bodies) if b.get("type") == "link.clicked"
                   for c in b["data"]["clicks"])


def test_each_click_on_either_process_is_sent_once(tmp_path: Path, store: ServiceStore,
                                                   receiver: tuple[str, type[WebhookRecorder]]) -> None:
    url, handler = receiver
    handler.up = True
    with two_processes(tmp_path, store, FAST) as bases:
        subscribe(bases[0], url)
        made = [f"w-{n}" for n in range(16)]
        for n, tracking_id in enumerate(made):
            click(bases[n % 2], tracking_id)
        assert wait_for(lambda: set(received(handler)) >= set(made), 60), received(handler)
        # the last click's webhook is in: another look a pass later finds no second one of any
        click(bases[0], "last")
        assert wait_for(lambda: "last" in received(handler), 60)
    got = received(handler)
    assert {t: n for t, n in got.items() if n != 1} == {}, "a click sent twice"
    assert set(got) == {*made, "last"}


def test_clicks_reach_the_receiver_after_kill_9_and_a_restart(tmp_path: Path, store: ServiceStore,
                                                              receiver: tuple[str, type[WebhookRecorder]]) -> None:
    url, handler = receiver  # down: answers 503
    port = free_port()
    process = start_forwarding_service(tmp_path, port, database_url=store.url, extra=FAST)
    try:
        base = f"http://127.0.0.1:{port}"
        assert ready(base)
        connection = subscribe(base, url)
        made = [f"crash-{n}" for n in range(10)]
        for tracking_id in made:
            click(base, tracking_id)

        def tried() -> bool:  # some deliveries made and tried against the receiver that is down
            status, body, _ = call(f"{base}/api/admin/v1/accounts/{A}/connections/{connection}/deliveries", ADMIN)
            return status == 200 and any(d["tries"] > 0 for d in body["data"])

        assert wait_for(tried, 30)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
    handler.up = True
    port = free_port()
    again = start_forwarding_service(tmp_path, port, database_url=store.url, extra=FAST)
    try:
        assert ready(f"http://127.0.0.1:{port}")
        assert wait_for(lambda: set(received(handler)) >= set(made), 60), received(handler)
    finally:
        again.send_signal(signal.SIGTERM)
        again.wait(timeout=30)
