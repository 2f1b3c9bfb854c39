"""Smart links on a real ``linksvc serve`` behind a trusted proxy (``LINKSVC_TRUSTED_PROXIES=127.0.0.1``): a link
with country and language rules made through the admin API, then clicks on one kept-alive connection, as a
proxy forwards them (``X-Forwarded-For``), answered by the resolver's fast lane (its counter on /metrics
moves) with each rule's target, and each click's country and rule in the clicks breakdown."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ADMIN_TOKEN
from tests.e2e.test_fast_lane_served import _answer, _lane_answers
from tests.processes import ServiceStore, free_port, ready, serve_command, stop

ACCOUNT = "3f6c1a52-8d4e-4b7a-9c21-5e0f7a9b1d01"  # the demo's account
AGENT = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
         "Version/17.4 Mobile/15E148 Safari/604.1")
# From the iptocc package's own tests: Japan, Brazil, the Netherlands (IPv6).
JAPAN, BRAZIL, NETHERLANDS_V6 = "1.0.16.1", "200.160.0.1", "2001:67c:18::1"


@pytest.fixture
def served(tmp_path: Path, store: ServiceStore) -> Iterator[tuple[int, Path]]:
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith("LINKSVC_")}
    env.update({"LINKSVC_ADMIN_TOKEN": ADMIN_TOKEN, "LINKSVC_TRUSTED_PROXIES": "127.0.0.1", **store.env()})
    log_path = tmp_path / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(serve_command(port, store), env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        assert ready(f"http://127.0.0.1:{port}"), log_path.read_text()
        yield port, log_path
    finally:
        stop(process)


def admin(port: int, method: str, path: str, body: object | None = None) -> tuple[int, dict[str, object]]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/api/admin/v1/accounts/{ACCOUNT}{path}", method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": f"Bearer {ADMIN_TOKEN}",
                                              "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=20) as response:
        return response.status, json.loads(response.read())


def clicks_through_a_proxy(port: int, clients: list[tuple[str, str]]) -> list[str]:
    """A GET /smart-e2e per (forwarded address, Accept-Language) on one kept-alive connection, as a proxy on
    127.0.0.1 sends them (the client's address appended to what the client itself wrote); the Locations."""
    locations = []
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        buffer = b""
        for address, language in clients:
            sock.sendall(f"GET /smart-e2e HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUser-Agent: {AGENT}\r\n"
                         f"Accept-Language: {language}\r\nX-Forwarded-For: 8.8.8.8, {address}\r\n\r\n".encode())
            reply, buffer = _answer(sock, buffer)
            assert reply.status == 302
            locations.append(reply.headers["location"])
    return locations


def test_rules_through_a_trusted_proxy_on_the_fast_lane(served: tuple[int, Path]) -> None:
    port, log_path = served
    status, created = admin(port, "POST", "/links", {
        "code": "smart-e2e", "kind": "external", "destination_url": "https://democoffee.example.com/menu",
        "rules": [
            {"name": "japan", "conditions": {"countries": ["JP"]},
             "target": {"destination_url": "https://democoffee.example.com/jp"}},
            {"name": "dutch", "conditions": {"languages": ["nl"], "countries": ["NL"]},
             "target": {"destination_url": "https://democoffee.example.com/nl"}},
        ]})
    assert status == 201
    before = _lane_answers(port)
    locations = clicks_through_a_proxy(port, [
        (JAPAN, "en-US,en;q=0.9"), (JAPAN, "en-US,en;q=0.9"), (BRAZIL, "pt-BR,pt;q=0.9"),
        (NETHERLANDS_V6, "nl-NL,nl;q=0.9,en-US;q=0.8,en;q=0.7"), (NETHERLANDS_V6, "en-GB,en;q=0.9")])
    assert [location.split("?")[0] for location in locations] == [
        "https://democoffee.example.com/jp", "https://democoffee.example.com/jp", "https://democoffee.example.com/menu",
        "https://democoffee.example.com/nl", "https://democoffee.example.com/menu"]
    assert all(re.search(r"[?&]tracking_id=[0-9a-f]{32}$", location) for location in locations)
    # the first request of a connection (and of a link not yet held) takes the handler; the rest the lane
    assert _lane_answers(port) - before >= 3
    link_id = created["data"]["id"]  # type: ignore[index]
    deadline = time.monotonic() + 20
    while True:  # clicks are written every half second
        _, clicks = admin(port, "GET", f"/links/{link_id}/clicks?days=1")
        data = clicks["data"]
        if data["human"] == 5 or time.monotonic() > deadline:  # type: ignore[index]
            break
        time.sleep(0.2)
    assert {row["country"]: row["human"] for row in data["by_country"]} == {"JP": 2, "BR": 1, "NL": 2}  # type: ignore[index]
    assert {row["rule"]: row["human"] for row in data["by_rule"]} == {"japan": 2, "dutch": 1, None: 2}  # type: ignore[index]
    assert "Traceback" not in log_path.read_text()
