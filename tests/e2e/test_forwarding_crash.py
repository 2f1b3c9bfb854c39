"""At least once across a crash: events accepted while the destination is down, ``kill -9`` of the server,
a restart on the same database, and every accepted event reaches the webhook."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.e2e.test_serve import _call, _free_port, _ready
from tests.factories import ADMIN_TOKEN, KEYS, A, two_accounts


class Recorder(BaseHTTPRequestHandler):
    up = False
    bodies: list[dict] = []  # noqa: RUF012 (shared by the server's threads on purpose)

    def do_POST(self) -> None:  # noqa: N802 (the http.server name)
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if type(self).up:
            type(self).bodies.append(json.loads(body))
            self.send_response(200)
        else:
            self.send_response(503)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[tuple[str, type[Recorder]]]:
    handler = type("Handler", (Recorder,), {"up": False, "bodies": []})
    http = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{http.server_address[1]}/hook", handler
    http.shutdown()


def _start(tmp_path: Path, port: int) -> subprocess.Popen[bytes]:
    demo = tmp_path / "demo.json"
    demo.write_text(json.dumps(two_accounts()))
    env = {**os.environ, "LINKSVC_ADMIN_TOKEN": ADMIN_TOKEN, "LINKSVC_DEMO_FILE": str(demo),
           "LINKSVC_ALLOW_PRIVATE_DESTINATIONS": "1", "LINKSVC_DELIVERY_BACKOFF_SECONDS": "0.2",
           "LINKSVC_DELIVERY_TIMEOUT_SECONDS": "1", "LINKSVC_DELIVERY_MAX_TRIES": "1000",
           "LINKSVC_LOG_LEVEL": "WARNING"}
    log = (tmp_path / f"server-{port}.log").open("wb")
    return subprocess.Popen([sys.executable, "-m", "linksvc", "serve", "--port", str(port),
                             "--db", str(tmp_path / "svc.db")], env=env, stdout=log, stderr=subprocess.STDOUT)


def test_accepted_events_are_delivered_after_kill_9_and_restart(
    tmp_path: Path, receiver: tuple[str, type[Recorder]],
) -> None:
    url, handler = receiver
    port = _free_port()
    process = _start(tmp_path, port)
    try:
        base = f"http://127.0.0.1:{port}"
        assert _ready(base)
        admin = {"Authorization": f"Bearer {ADMIN_TOKEN}", "Content-Type": "application/json"}
        connection = {"destination": "webhook", "event_types": ["PURCHASE"],
                      "config": {"endpoint_url": url, "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}}
        status, body, _ = _call(f"{base}/api/admin/v1/accounts/{A}/connections", admin, "POST",
                                json.dumps(connection).encode())
        assert status == 201, body
        status, body, _ = _call(base + "/api/storefront/v1/auth/authorize", {"x-api-key": KEYS[(A, "SERVER")]})
        headers = {"Authorization": f"Bearer {body['data']}", "Content-Type": "application/json"}
        accepted = []
        for n in range(20):
            event = {"type": "PURCHASE", "customer_id": "cust-aaaa", "order_id": f"crash-{n}", "currency": "COP",
                     "value": 5, "products": [{"sku": "X"}]}
            status, body, _ = _call(base + "/api/storefront/v1/behavior/events", headers, "POST",
                                    json.dumps(event).encode())
            assert status == 202
            accepted.append(body["data"]["id"])
        process.send_signal(signal.SIGKILL)  # the destination was down: everything is still in the outbox
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
    handler.up = True
    port = _free_port()
    again = _start(tmp_path, port)
    try:
        assert _ready(f"http://127.0.0.1:{port}")
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
