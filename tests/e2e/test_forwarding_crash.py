"""At least once across a crash: events accepted while the destination is down, ``kill -9`` of the server,
a restart on the same database, and every accepted event reaches the webhook."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

from tests.factories import ADMIN_TOKEN, KEYS, A
from tests.processes import ServiceStore, WebhookRecorder, call, free_port, ready, start_forwarding_service


def test_accepted_events_are_delivered_after_kill_9_and_restart(
    tmp_path: Path, store: ServiceStore, receiver: tuple[str, type[WebhookRecorder]],
) -> None:
    url, handler = receiver
    port = free_port()
    process = start_forwarding_service(tmp_path, port, database_url=store.url)
    try:
        base = f"http://127.0.0.1:{port}"
        assert ready(base)
        admin = {"Authorization": f"Bearer {ADMIN_TOKEN}", "Content-Type": "application/json"}
        connection = {"destination": "webhook", "event_types": ["PURCHASE"],
                      "config": {"endpoint_url": url, "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}}
        status, body, _ = call(f"{base}/api/admin/v1/accounts/{A}/connections", admin, "POST",
                               json.dumps(connection).encode())
        assert status == 201, body
        status, body, _ = call(base + "/api/storefront/v1/auth/authorize", {"x-api-key": KEYS[(A, "SERVER")]})
        headers = {"Authorization": f"Bearer {body['data']}", "Content-Type": "application/json"}
        accepted = []
        for n in range(20):
            event = {"type": "PURCHASE", "customer_id": "cust-aaaa", "order_id": f"crash-{n}", "currency": "COP",
                     "value": 5, "products": [{"sku": "X"}]}
            status, body, _ = call(base + "/api/storefront/v1/behavior/events", headers, "POST",
                                   json.dumps(event).encode())
            assert status == 202
            accepted.append(body["data"]["id"])
        process.send_signal(signal.SIGKILL)  # the destination was down: everything is still in the outbox
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
    handler.up = True
    port = free_port()
    again = start_forwarding_service(tmp_path, port, database_url=store.url)
    try:
        assert ready(f"http://127.0.0.1:{port}")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            delivered = {b["data"]["id"] for b in list(handler.bodies) if b["type"] == "event.accepted"}
            if delivered >= set(accepted):
                break
            time.sleep(0.2)
        assert delivered >= set(accepted), f"{len(delivered)} of {len(accepted)} delivered"
    finally:
        again.send_signal(signal.SIGTERM)
        again.wait(timeout=30)
