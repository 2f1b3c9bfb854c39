"""An event answered 202 is on disk: concurrent events (one group commit), then ``kill -9``, then the store."""

from __future__ import annotations

import json
import signal
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.e2e.test_serve import server  # noqa: F401  (the fixture)
from tests.factories import KEYS, A
from tests.processes import ServiceStore, call


def test_every_accepted_event_survives_kill_9(server: tuple[str, subprocess.Popen[bytes], Path],  # noqa: F811
                                              store: ServiceStore) -> None:
    base, process, _ = server
    status, body, _ = call(base + "/api/storefront/v1/auth/authorize", {"x-api-key": KEYS[(A, "SERVER")]})
    assert status == 200
    headers = {"Authorization": f"Bearer {body['data']}", "Content-Type": "application/json"}

    def send(n: int) -> tuple[int, str]:
        event = {"type": "PURCHASE", "customer_id": "cust-aaaa", "order_id": f"kill-{n}", "currency": "COP",
                 "value": 10, "products": [{"sku": "LATTE"}], "attribution": {"utm_source": "kill", "utm_term": ""}}
        status, answer, _ = call(base + "/api/storefront/v1/behavior/events", headers, "POST",
                                 json.dumps(event).encode())
        return status, answer["data"]["id"] if status == 202 else json.dumps(answer)

    with ThreadPoolExecutor(max_workers=16) as pool:
        answers = list(pool.map(send, range(64)))
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    assert [status for status, _ in answers] == [202] * 64, answers
    accepted = {event_id for _, event_id in answers}
    stored = {row[0]: json.loads(row[1]) for row in store.rows("SELECT id, body FROM events")}
    assert store.integrity() == "ok"
    assert accepted <= set(stored)
    assert all(stored[i]["attribution_original"] == {"utm_source": "kill", "utm_term": ""} for i in accepted)
    # The ledger adds up after the crash.
    assert store.ledger_mismatches(A) == {A: []}
