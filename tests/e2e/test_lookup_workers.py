"""``linksvc serve --workers 2``: customer lookups answered on either worker's fast lane see a change answered by
the other worker at once, on connections kept alive from before the change and on new ones (on PostgreSQL, a
revoked key's token is refused by the other worker once the database's notification reaches it)."""

from __future__ import annotations

import http.client
import json
import subprocess
import time

from tests.e2e.test_workers import _call, supervisor  # noqa: F401 (the fixture)
from tests.processes import ServiceStore

API = "/api/storefront/v1"
DOCUMENT = "1020304050"  # the demo's Ana
SERVER_KEY = "lk_demo_server_4f8a2c9e7b1d3a5f6c8e0b2d"
ACCOUNT = "3f6c1a52-8d4e-4b7a-9c21-5e0f7a9b1d01"


def _lookups(conn: http.client.HTTPConnection, token: str, count: int = 3) -> list[tuple[int, dict]]:
    """``count`` lookups of Ana on one kept-alive connection (from the second on, the worker's lane answers)."""
    found = []
    for _ in range(count):
        conn.request("GET", f"{API}/customers?document_number={DOCUMENT}", headers={"Authorization": f"Bearer {token}"})
        answer = conn.getresponse()
        found.append((answer.status, json.loads(answer.read())))
    return found


def test_a_change_through_one_worker_is_seen_by_both_lanes_at_once(
    supervisor: tuple[int, subprocess.Popen[bytes], ServiceStore],  # noqa: F811
) -> None:
    port, _, store = supervisor
    status, answer = _call(port, "GET", f"{API}/auth/authorize", headers={"x-api-key": SERVER_KEY})
    assert status == 200, answer
    token = answer["data"]  # type: ignore[index]
    kept = [http.client.HTTPConnection("127.0.0.1", port, timeout=10) for _ in range(8)]  # over both workers
    try:
        for conn in kept:
            assert all(status == 200 for status, _ in _lookups(conn, token))
        for version in range(3):
            name = f"Ana read-your-writes {version}"
            status, moved = _call(port, "POST", f"{API}/customers/migrate", {"customers": [
                {"document_number": DOCUMENT, "name": name}]}, headers={"Authorization": f"Bearer {token}"})
            assert status == 200 and moved["data"]["updated"] == 1, moved  # type: ignore[index]
            fresh = [http.client.HTTPConnection("127.0.0.1", port, timeout=10) for _ in range(4)]
            for conn in kept + fresh:
                for status, body in _lookups(conn, token):
                    assert status == 200 and body["data"]["customer"]["name"] == name, (version, body)
            for conn in fresh:
                conn.close()
        # The key revoked through one worker: its token is refused on every kept-alive connection.
        status, keys = _call(port, "GET", f"/api/admin/v1/accounts/{ACCOUNT}/api-keys")
        key_id = next(k["id"] for k in keys["data"] if k["kind"] == "SERVER")  # type: ignore[index]
        assert _call(port, "DELETE", f"/api/admin/v1/accounts/{ACCOUNT}/api-keys/{key_id}")[0] == 200
        for conn in kept:
            seen = [status for status, _ in _lookups(conn, token, 2)]
            if store.url is not None:
                # PostgreSQL: a worker that did not make the change follows it when the database's notification
                # reaches it (storage/postgres.py, "Read models follow every node's writes"), a moment after the
                # answer; SQLite's workers share the counters in memory, at once.
                deadline = time.monotonic() + 10
                while seen[-1] != 401 and time.monotonic() < deadline:
                    seen = [status for status, _ in _lookups(conn, token, 1)]
                seen = [status for status, _ in _lookups(conn, token, 2)]
            assert seen == [401, 401]
    finally:
        for conn in kept:
            conn.close()
