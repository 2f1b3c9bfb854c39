"""``linksvc serve --workers 2``: two processes on one port, one database, metrics added up, a clean stop."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.factories import ADMIN_TOKEN
from tests.processes import ServiceStore, children, free_port, ready, serve_command, wait_for


def _get(port: int, path: str) -> tuple[int, str]:
    """One request on a new connection (so the kernel picks a worker each time), redirects not followed."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path, headers={"User-Agent": "Mozilla/5.0 (Windows NT 10.0; Win64; x64)"})
        answer = conn.getresponse()
        return answer.status, answer.read().decode()
    finally:
        conn.close()


@pytest.fixture
def supervisor(tmp_path: Path, store: ServiceStore) -> Iterator[tuple[int, subprocess.Popen[bytes], ServiceStore]]:
    port = free_port()
    env = {**os.environ, "LINKSVC_ADMIN_TOKEN": ADMIN_TOKEN, "LINKSVC_LOAD_DEMO": "1", "LINKSVC_LOG_LEVEL": "WARNING"}
    log_path = tmp_path / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(serve_command(port, store, "--workers", "2"), env=env, stdout=log,
                                   stderr=subprocess.STDOUT)
    if not ready(f"http://127.0.0.1:{port}") or not wait_for(lambda: len(children(process.pid)) == 2):
        process.kill()
        raise AssertionError("workers did not start: " + log_path.read_text())
    yield port, process, store
    if process.poll() is None:
        process.kill()
        process.wait()


def test_two_workers_share_the_port_the_store_and_the_metrics(
    supervisor: tuple[int, subprocess.Popen[bytes], ServiceStore],
) -> None:
    port, process, store = supervisor
    # A worker that dies is started again.
    first, second = children(process.pid)
    os.kill(first, signal.SIGKILL)
    assert wait_for(lambda: len(children(process.pid)) == 2 and first not in children(process.pid))
    assert second in children(process.pid)
    assert ready(f"http://127.0.0.1:{port}")

    demo_week = _welcome_clicks(store)  # the demo's own week of clicks, there before the workers start
    clicks = 120
    answers = [_get(port, "/welcome")[0] for _ in range(clicks)]
    assert answers == [302] * clicks
    # Every scrape, whichever worker answers it, counts the redirects of both (shared every second).
    time.sleep(1.5)
    for _ in range(4):
        text = _get(port, "/metrics")[1]
        counted = re.search(r'linksvc_http_requests_total\{method="GET",route="/\{code[^}]*\}",status="302"\} (\S+)',
                            text)
        assert counted is not None and float(counted.group(1)) == clicks

    workers = children(process.pid)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0
    for pid in workers:
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()
    # A clean stop writes every worker's buffered clicks.
    assert _welcome_clicks(store) == demo_week + clicks


def _welcome_clicks(store: ServiceStore) -> int:
    return store.count("clicks JOIN links ON links.id = clicks.link_id", "links.code = 'welcome'")


def test_several_workers_need_a_fixed_port(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "linksvc", "serve", "--port", "0", "--db", str(tmp_path / "x.db"), "--workers", "2"],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 2
    assert "fixed port" in done.stderr


def _redirects(port: int, path: str, count: int) -> list[tuple[int, str]]:
    """``count`` GETs on one kept-alive connection (from the second on, a held link takes the fast lane)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        found = []
        for _ in range(count):
            conn.request("GET", path, headers={"User-Agent": "Mozilla/5.0 (Windows NT 10.0; Win64; x64)"})
            answer = conn.getresponse()
            answer.read()
            found.append((answer.status, answer.getheader("Location") or ""))
        return found
    finally:
        conn.close()


def test_a_changed_link_is_seen_at_once_by_every_worker(
    supervisor: tuple[int, subprocess.Popen[bytes], ServiceStore],
) -> None:
    """Each worker holds links in memory; a change answered by one is what the next click gets from either.
    On PostgreSQL the workers are nodes of their own: the one that wrote answers the change at once, the other
    follows within the NOTIFY's delay (storage/postgres.py), so a stale answer there is asked again until the
    change shows, for at most a few seconds; it must never go back to an older destination."""
    port, _, store = supervisor
    account_id, link_id, code = next(
        (account_id, link_id, code) for account_id, link_id, code, body
        in store.rows("SELECT account_id, id, code, body FROM links ORDER BY code")
        if not json.loads(body).get("disabled") and json.loads(body).get("expires_at") is None)
    path = f"/api/admin/v1/accounts/{account_id}/links/{link_id}"
    for version in range(12):
        destination = f"https://shop.example/read-your-writes-{version}"
        status, _ = _call(port, "PATCH", path, {"destination_url": destination})
        assert status == 200
        previous = f"https://shop.example/read-your-writes-{version - 1}"
        for _ in range(6):  # new connections: the kernel spreads them over both workers
            deadline = time.monotonic() + 5
            while True:
                answers = _redirects(port, f"/{code}", 3)
                assert all(status == 302 for status, _ in answers), answers
                stale = [location for _, location in answers if not location.startswith(destination)]
                if not stale or store.url is None or time.monotonic() > deadline:
                    break
                assert not version or all(location.startswith(previous + "?") for location in stale), (version, stale)
                time.sleep(0.05)
            assert not stale, (version, stale)


def _call(port: int, method: str, path: str, body: object | None = None,
          headers: dict[str, str] | None = None) -> tuple[int, object]:
    """One request on a new connection (the kernel picks a worker each time); the status and the JSON answer."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        sent = {"Authorization": f"Bearer {ADMIN_TOKEN}", **(headers or {})}
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            sent["Content-Type"] = "application/json"
        conn.request(method, path, body=payload, headers=sent)
        answer = conn.getresponse()
        return answer.status, json.loads(answer.read() or b"null")
    finally:
        conn.close()


def test_a_changed_catalog_is_seen_at_once_by_every_worker(
    supervisor: tuple[int, subprocess.Popen[bytes], ServiceStore],
) -> None:
    """Each worker holds the account's catalog (tiers, campaigns, custom event types, ...) in memory; a change
    answered by one is what the next request to either lists, and what its next event is checked against."""
    port, _, store = supervisor
    account_id, type_id, kind = store.rows(
        "SELECT account_id, id, name FROM custom_event_types WHERE active = 1 ORDER BY name LIMIT 1")[0]
    tier_id, customer_id = store.rows(
        "SELECT t.id, c.id FROM tiers t JOIN customers c ON c.account_id = t.account_id "
        "WHERE t.account_id = ? ORDER BY t.id, c.id LIMIT 1", account_id)[0]
    status, answer = _call(port, "GET", "/api/storefront/v1/auth/authorize",
                           headers={"x-api-key": "lk_demo_server_4f8a2c9e7b1d3a5f6c8e0b2d"})
    assert status == 200, answer
    storefront = {"Authorization": f"Bearer {answer['data']}"}  # type: ignore[index]
    admin = f"/api/admin/v1/accounts/{account_id}"
    for version in range(4):
        name = f"Tier read-your-writes {version}"
        assert _call(port, "PATCH", f"{admin}/tiers/{tier_id}", {"name": name})[0] == 200
        active = version % 2 == 1
        assert _call(port, "PATCH", f"{admin}/custom-event-types/{type_id}", {"active": active})[0] == 200
        for _ in range(6):  # new connections: the kernel spreads them over both workers
            status, listed = _call(port, "GET", "/api/storefront/v1/tiers", headers=storefront)
            assert status == 200 and name in [t["name"] for t in listed["data"]], (version, listed)  # type: ignore[index]
            status, answer = _call(port, "POST", "/api/storefront/v1/behavior/events",
                                   {"type": kind, "customer_id": customer_id}, headers=storefront)
            assert status == (202 if active else 400), (version, answer)
