"""Hostile bytes over raw sockets against the service's own HTTP protocol (``api.server``): malformed requests
answered as ``{error, details}`` JSON that quotes nothing, slow headers cut off, undecodable credentials,
content encodings a body does not have, JSON nested too deep, and clicks whose headers are not UTF-8."""

from __future__ import annotations

import asyncio
import gzip
import json
import logging
import socket
import sqlite3
import time
import zlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import CLICKS, DB
from linksvc.app import create_app
from linksvc.links.clicks import Click
from linksvc.seed import load_seed
from linksvc.settings import Settings
from storage.db import fetch_all, fetch_one, open_store
from tests.conftest import ADMIN, bearer, service_server, token_for
from tests.factories import ADMIN_TOKEN, A, B, ids, two_accounts
from tests.http.test_storage_locked import held_write_lock
from tests.processes import wait_for
from tests.rawhttp import Reply, exchange, request

EVENTS = "/api/storefront/v1/behavior/events"


def port_of(client: TestClient) -> int:
    assert client.server.port is not None
    return client.server.port


async def raw(client: TestClient, data: bytes, timeout: float = 10.0) -> Reply:
    return await asyncio.to_thread(exchange, port_of(client), data, timeout)


def assert_error_json(reply: Reply, status: int) -> dict[str, Any]:
    assert reply.status == status, reply.raw[:500]
    assert reply.headers["content-type"].startswith("application/json"), reply.headers
    body: dict[str, Any] = json.loads(reply.body)
    assert set(body) == {"error", "details"}
    return body


@pytest.mark.parametrize("data", [
    # a control character in a header, after the admin token: aiohttp would quote the header block
    request("GET", "/api/admin/v1/accounts", [("Authorization", f"Bearer {ADMIN_TOKEN}"), ("X-Note", b"a\x01b")]),
    request("GET", "/api/admin/v1/accounts", [("X-Note", b"a\x7fb"), ("Authorization", f"Bearer {ADMIN_TOKEN}")]),
    request("GET", "/api/admin/v1/accounts", [("Bad Name", "x"), ("Authorization", f"Bearer {ADMIN_TOKEN}")]),
    # a request line that is not HTTP
    f"G\x00T /api/admin/v1/accounts HTTP/1.1\r\nAuthorization: Bearer {ADMIN_TOKEN}\r\n\r\n".encode(),
    # conflicting framing
    request("POST", "/api/storefront/v1/auth/totp", [("Authorization", f"Bearer {ADMIN_TOKEN}"),
                                                      ("Content-Length", "5"), ("Content-Length", "6")], b"{}"),
    request("POST", "/api/storefront/v1/auth/totp", [("Authorization", f"Bearer {ADMIN_TOKEN}"),
                                                      ("Transfer-Encoding", "chunked")], b"zz\r\n{}\r\n0\r\n\r\n"),
])
async def test_a_malformed_request_is_json_and_quotes_nothing(client: TestClient, data: bytes,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    reply = await raw(client, data)
    body = assert_error_json(reply, 400)
    assert ADMIN_TOKEN.encode() not in reply.raw and b"X-Note" not in reply.raw and b"\\x01" not in reply.raw
    assert body["error"] == "Malformed request"
    assert ADMIN_TOKEN not in caplog.text and "X-Note" not in caplog.text


async def test_over_long_lines_are_414_and_431_without_the_line(client: TestClient,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    secret = "sekret-" + "k" * 9000
    reply = await raw(client, request("GET", "/api/admin/v1/accounts", [("Authorization", f"Bearer {secret}")]))
    assert assert_error_json(reply, 431)["error"] == "Header too large"
    reply = await raw(client, request("GET", "/api/admin/v1/accounts?q=" + secret, []))
    assert_error_json(reply, 414)
    assert "sekret" not in caplog.text


@pytest.mark.parametrize("header, value", [
    ("Authorization", b"Bearer \xff\xfe\xfd"),
    ("Authorization", b"Bearer tok\xc3\xa9n"),
])
async def test_undecodable_bearer_tokens_are_401(seeded: TestClient, header: str, value: bytes) -> None:
    for path in ("/api/storefront/v1/brands", "/api/admin/v1/accounts"):
        reply = await raw(seeded, request("GET", path, [(header, value)]))
        assert assert_error_json(reply, 401)["error"] == "Malformed token"


async def test_undecodable_api_key_and_account_header(seeded: TestClient) -> None:
    reply = await raw(seeded, request("GET", "/api/storefront/v1/auth/authorize", [("x-api-key", b"lk_\xff\xfe")]))
    assert assert_error_json(reply, 401)["error"] == "Malformed API key"
    token = await token_for(seeded, A)
    reply = await raw(seeded, request("GET", "/api/storefront/v1/contacts?email=a@b.c",
                                      [("Authorization", f"Bearer {token}"), ("x-account-id", b"\xff" + A.encode())]))
    assert_error_json(reply, 403)


async def test_slow_headers_are_cut_off(aiohttp_client: Any, settings: Settings) -> None:
    client = await aiohttp_client(service_server(create_app(replace(settings, header_timeout_seconds=0.5))))

    def trickle() -> tuple[bytes, float]:
        started = time.monotonic()
        with socket.create_connection(("127.0.0.1", port_of(client)), timeout=5) as sock:
            answer = b""
            try:
                for byte in b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100:
                    sock.sendall(bytes([byte]))
                    time.sleep(0.05)
            except OSError:  # the server closed the connection
                pass
            try:
                while chunk := sock.recv(4096):
                    answer += chunk
            except OSError:
                pass
        return answer, time.monotonic() - started

    answer, took = await asyncio.to_thread(trickle)
    assert answer.startswith(b"HTTP/1.1 408") and b'"error":"Request timeout"' in answer
    assert took < 3  # closed by the deadline, not by the end of the trickle (5 s)

    def silent() -> bytes:
        with socket.create_connection(("127.0.0.1", port_of(client)), timeout=5) as sock:
            return sock.recv(4096)

    assert (await asyncio.to_thread(silent)).startswith(b"HTTP/1.1 408")
    # a request sent at once is answered as usual
    assert (await raw(client, request("GET", "/healthz"))).status == 200


async def events_token(client: TestClient) -> dict[str, str]:
    return {**bearer(await token_for(client, A)), "Content-Type": "application/json"}


def nested(depth: int) -> Any:
    """``depth - 1`` lists around a number."""
    value: Any = 1
    for _ in range(depth - 1):
        value = [value]
    return value


async def test_json_depth_is_bounded_on_every_body(seeded: TestClient) -> None:
    headers = await events_token(seeded)
    event = {"type": "page_view", "customer_id": ids(A)["customers"]}
    ok = await seeded.post(EVENTS, headers=headers, json={**event, "properties": {"x": nested(63)}})
    assert ok.status == 202, await ok.text()  # the body, properties, then 62 lists: 64 levels
    too_deep = await seeded.post(EVENTS, headers=headers, json={**event, "properties": {"x": nested(64)}})
    assert too_deep.status == 400 and (await too_deep.json())["error"] == "JSON too deep"
    for depth in (63, 300, 1000, 100_000):  # the deepest ones unbalanced: refused without parsing them
        data = json.dumps({**event, "properties": {"x": "#"}}).replace('"#"', "[" * depth + "]" * min(depth, 300))
        response = await seeded.post(EVENTS, headers=headers, data=data)
        body = await response.json()
        assert response.status == 400 and set(body) == {"error", "details"}, (depth, body)
    response = await seeded.post(f"/api/admin/v1/accounts/{A}/brands", headers=ADMIN,
                                 json={"name": "Deep", "attributes": nested(100)})
    assert response.status == 400 and (await response.json())["error"] == "JSON too deep"


async def test_a_deep_event_in_a_bulk_fails_alone(seeded: TestClient) -> None:
    headers = await events_token(seeded)
    event = {"type": "page_view", "customer_id": ids(A)["customers"]}
    response = await seeded.post(EVENTS + "/bulk", headers=headers, json={"events": [
        event, {**event, "properties": {"x": nested(300)}}, event]})
    assert response.status == 200, await response.text()
    results = (await response.json())["data"]["results"]
    assert [r["status"] for r in results] == [202, 400, 202]
    assert "64 levels" in json.dumps(results[1]["details"])


async def test_content_encodings(seeded: TestClient) -> None:
    headers = await events_token(seeded)
    body = json.dumps({"type": "page_view", "customer_id": ids(A)["customers"]}).encode()
    for encoding, data in (("gzip", gzip.compress(body)), ("deflate", zlib.compress(body)), ("identity", body)):
        response = await seeded.post(EVENTS, headers={**headers, "Content-Encoding": encoding}, data=data)
        assert response.status == 202, (encoding, await response.text())
    for encoding in ("gzip", "deflate"):  # says so, but is not
        reply = await raw(seeded, request("POST", EVENTS, [("Authorization", headers["Authorization"]),
                                                           ("Content-Type", "application/json"),
                                                           ("Content-Encoding", encoding)], body))
        assert assert_error_json(reply, 400)["error"] == "Malformed body", encoding
    for encoding in ("br", "zstd", "compress", "gzip, gzip", "bogus"):
        reply = await raw(seeded, request("POST", EVENTS, [("Authorization", headers["Authorization"]),
                                                           ("Content-Type", "application/json"),
                                                           ("Content-Encoding", encoding)], body))
        assert_error_json(reply, 415)


async def clicks_stored(client: TestClient) -> list[Any]:
    await client.app[CLICKS].flush()
    return await fetch_all(client.app[DB].reader, "SELECT account_id, user_agent, referer FROM clicks ORDER BY id")


async def test_clicks_with_headers_that_are_not_utf8_are_recorded_for_everyone(seeded: TestClient) -> None:
    hostile = request("GET", f"/lnk{A[:4]}", [("User-Agent", b"Mozilla/5.0 \xff\xfe\xc3("), ("Referer", b"https://x/\xe9")])
    assert (await raw(seeded, hostile)).status == 302
    assert (await raw(seeded, request("GET", f"/lnk{B[:4]}", [("User-Agent", "curl/8.5")]))).status == 302
    rows = await clicks_stored(seeded)
    assert [row["account_id"] for row in rows] == [A, B]
    assert rows[0]["user_agent"] == "Mozilla/5.0 \ufffd\ufffd\ufffd(" and rows[0]["referer"] == "https://x/\ufffd"
    overview = await seeded.get(f"/api/admin/v1/accounts/{A}/links/overview", headers=ADMIN)
    assert overview.status == 200


async def test_a_click_that_cannot_be_stored_is_set_aside_and_the_others_are_written(seeded: TestClient) -> None:
    recorder = seeded.app[CLICKS]
    link = ids(A)["links"]

    def click(n: int, utm: dict[str, Any]) -> Click:
        return Click(A, link, f"t{n}", time.time(), "desktop", False, "web", "UA", "", utm)

    for n in range(7):  # the fourth holds a value no row can hold (a fault elsewhere in the code)
        recorder.record(click(n, {"utm_source": object()} if n == 3 else {"utm_source": "mail"}))
    await recorder.flush()
    assert recorder.pending == 0
    rows = await fetch_all(seeded.app[DB].reader, "SELECT tracking_id FROM clicks ORDER BY id")
    assert [row["tracking_id"] for row in rows] == ["t0", "t1", "t2", "t4", "t5", "t6"]
    listed = await seeded.get(f"/api/admin/v1/accounts/{A}/dead-letters", headers=ADMIN)
    page = await listed.json()
    assert page["count"] == 1 and page["data"][0]["kind"] == "click"
    assert page["data"][0]["payload"]["tracking_id"] == "t3" and "AttributeError" in page["data"][0]["reason"]
    other = await (await seeded.get(f"/api/admin/v1/accounts/{B}/dead-letters", headers=ADMIN)).json()
    assert other["count"] == 0  # an account sees only its own
    metrics = await (await seeded.get("/metrics")).text()
    assert 'linksvc_dead_letters{kind="click"} 1.0' in metrics


async def test_clicks_buffered_at_shutdown_are_written(tmp_path: Any, settings: Settings, aiohttp_client: Any) -> None:
    app = create_app(replace(settings, click_flush_seconds=3600))
    client = await aiohttp_client(service_server(app))
    await load_seed(app[DB], two_accounts(), allow_private=True)
    for ua in (b"\xff", b"ok", b"\xc3"):
        assert (await raw(client, request("GET", f"/lnk{A[:4]}", [("User-Agent", b"UA " + ua)]))).status == 302
    assert app[CLICKS].pending == 3
    await client.close()  # a clean stop
    if settings.database_url:  # PostgreSQL: read back through a store of its own
        store = open_store(settings.db_path, settings.database_url)
        await store.open()
        try:
            row = await fetch_one(store.reader, "SELECT count(*) FROM clicks")
        finally:
            await store.close()
        assert row is not None and row[0] == 3
        return
    with sqlite3.connect(settings.db_path) as conn:
        assert conn.execute("SELECT count(*) FROM clicks").fetchone()[0] == 3


async def test_clicks_the_store_refuses_at_stop_are_written_by_the_next_start(settings: Settings,
                                                                             aiohttp_client: Any) -> None:
    app = create_app(replace(settings, click_flush_seconds=3600))
    client = await aiohttp_client(service_server(app))
    await load_seed(app[DB], two_accounts(), allow_private=True)
    for ua in (b"UA \xff", b"UA ok"):
        assert (await raw(client, request("GET", f"/lnk{A[:4]}", [("User-Agent", ua)]))).status == 302
    with held_write_lock(settings.db_path):  # another process holds the write lock while the service stops
        await client.close()
    spilled = list(Path(settings.db_path).parent.glob("*.spill.jsonl"))
    assert len(spilled) == 1
    with sqlite3.connect(settings.db_path) as conn:
        assert conn.execute("SELECT count(*) FROM clicks").fetchone()[0] == 0

    def stored(query: str) -> list[Any]:
        with sqlite3.connect(settings.db_path) as conn:
            return conn.execute(query).fetchall()

    restarted = await aiohttp_client(service_server(create_app(settings)))
    assert await asyncio.to_thread(wait_for, lambda: stored("SELECT count(*) FROM clicks")[0][0] == 2, 10)
    agents = {row[0] for row in stored("SELECT user_agent FROM clicks")}
    assert agents == {"UA \ufffd", "UA ok"}
    assert not list(Path(settings.db_path).parent.glob("*.spill.jsonl*"))  # written, then gone
    await restarted.close()
