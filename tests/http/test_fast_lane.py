"""The resolver's fast lane (api.links.resolver.FastRedirects on api.server's FAST_LANE), over raw sockets: a
redirect of a held link is answered with the bytes the handler sends, its click recorded and counted the same,
answers stay in order when requests are pipelined, a link the worker does not hold is read and answered on the
lane (SQLite), and whatever the lane does not answer (unknown codes, pages, HEAD, HTTP/1.0, the service's own
paths) gets the handler's answer."""

from __future__ import annotations

import asyncio
import re
import socket
import sqlite3
from typing import Any, cast

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import CLICKS, DB
from api.server import FAST_LANE
from linksvc.links import service
from linksvc.links.previews import plain_redirect_now
from linksvc.seed import load_seed
from storage.db import fetch_all, fetch_one
from tests.agents import AGENTS
from tests.conftest import ADMIN
from tests.http.test_resolver import ANDROID, CODE, DESKTOP, GOOGLEBOT, _links
from tests.rawhttp import Reply, parse

if False:  # typing only
    from api.links.resolver import FastRedirects


@pytest.fixture
async def links(client: TestClient) -> TestClient:
    await load_seed(client.app[DB], _links(), allow_private=True)
    return client


FACEBOOK_ANDROID = ("Mozilla/5.0 (Linux; Android 13; SM-S911B Build/TP1A.220624.014; wv) AppleWebKit/537.36 "
                    "(KHTML, like Gecko) Version/4.0 Chrome/119.0.6045.163 Mobile Safari/537.36 "
                    "[FB_IAB/FB4A;FBAV/442.0.0.33.113;]")


def lane(client: TestClient) -> FastRedirects:
    return cast("FastRedirects", client.app[FAST_LANE])


def _get(path: str, ua: str = DESKTOP, method: str = "GET", version: str = "1.1", extra: str = "") -> bytes:
    return f"{method} {path} HTTP/{version}\r\nHost: 127.0.0.1\r\nUser-Agent: {ua}\r\n{extra}\r\n".encode()


def _split(raw: bytes) -> tuple[Reply, bytes] | None:
    """The first whole answer in ``raw`` (with a Content-Length, or a HEAD answer without one) and the rest."""
    head, found, rest = raw.partition(b"\r\n\r\n")
    if not found:
        return None
    reply = parse(head + b"\r\n\r\n")
    length = int(reply.headers.get("content-length", "0"))
    if len(rest) < length:
        return None
    return parse(head + b"\r\n\r\n" + rest[:length]), rest[length:]


def _converse(port: int, sends: list[bytes], answers_each: list[int]) -> list[Reply]:
    """On one kept-alive connection: each of ``sends`` in turn, reading that many answers after it."""
    replies: list[Reply] = []
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        buffer = b""
        for data, count in zip(sends, answers_each, strict=True):
            sock.sendall(data)
            while count:
                split = _split(buffer)
                if split is None:
                    chunk = sock.recv(65536)
                    assert chunk, "the server closed the connection"
                    buffer += chunk
                    continue
                reply, buffer = split
                replies.append(reply)
                count -= 1
    return replies


async def converse(client: TestClient, sends: list[bytes], answers_each: list[int] | None = None) -> list[Reply]:
    assert client.server.port is not None
    return await asyncio.to_thread(_converse, client.server.port, sends, answers_each or [1] * len(sends))


def _shape(reply: Reply) -> tuple[Any, ...]:
    """An answer without what differs between any two answers (date, request id, the new tracking id)."""
    headers = {name: value for name, value in reply.headers.items() if name not in ("date", "x-request-id")}
    headers["location"] = re.sub(r"tracking_id=[0-9a-f]{32}", "tracking_id=T", headers.get("location", ""))
    return reply.status, list(reply.headers), headers, reply.body


async def clicks_of(client: TestClient, code: str) -> int:
    await client.app[CLICKS].flush()
    row = await fetch_one(client.app[DB].reader, "SELECT count(*) FROM clicks JOIN links ON links.id = clicks.link_id "
                                                 "WHERE links.code = ?", (code,))
    assert row is not None
    return int(row[0])


async def test_the_lane_answers_with_the_handlers_bytes_and_records_the_click(links: TestClient) -> None:
    before = lane(links).answered
    # The link was made after the start: on SQLite the lane reads it at its first click; on PostgreSQL (whose
    # reader answers only by awaiting) the handler does, and the lane answers from the second.
    replies = await converse(links, [_get(f"/{CODE}"), _get(f"/{CODE}"), _get(f"/{CODE}", ANDROID),
                                     _get(f"/{CODE}?utm_source=ig&tracking_id=kept-1")])
    assert lane(links).answered - before == (4 if isinstance(links.app[DB].reader, sqlite3.Connection) else 3)
    assert [reply.status for reply in replies] == [302] * 4
    assert _shape(replies[0]) == _shape(replies[1])
    assert list(replies[0].headers) == ["location", "cache-control", "x-request-id", "content-length", "date",
                                        "server"]
    assert re.fullmatch(r"[0-9a-f]{16}", replies[1].headers["x-request-id"])
    assert replies[0].headers["location"] != replies[1].headers["location"]  # a fresh tracking id each click
    assert "utm_source=ig" in replies[3].headers["location"] and "tracking_id=kept-1" in replies[3].headers["location"]
    assert await clicks_of(links, CODE) == 4
    metrics = (await (await links.get("/metrics")).text()).splitlines()
    assert 'linksvc_http_requests_total{method="GET",route="/{code}",status="302"} 4.0' in metrics


async def test_a_plain_links_next_clicks_get_its_kept_answer_with_a_fresh_tracking_id(links: TestClient) -> None:
    # The first click of a connection takes the handler, the second works the lane's answer out (its plan), the
    # rest reuse it: every answer is the handler's, with its own tracking id, and every click is stored with it.
    agents = [DESKTOP, ANDROID, GOOGLEBOT, AGENTS["iphone"], AGENTS["firefox_android"], FACEBOOK_ANDROID]
    sent: list[str] = []
    for agent in agents:
        replies = await converse(links, [_get("/app-link", agent)] * 4)
        locations = [reply.headers["location"] for reply in replies]
        assert len({re.sub(r"[0-9a-f]{32}", "T", location) for location in locations}) == 1, locations
        assert all(_shape(reply)[:2] == _shape(replies[0])[:2] for reply in replies)
        tracking = [re.findall(r"[0-9a-f]{32}", location)[0] for location in locations]
        assert len(set(tracking)) == 4
        sent += tracking
    assert lane(links).answered >= 3 * len(agents)
    await links.app[CLICKS].flush()
    rows = await fetch_all(links.app[DB].reader, "SELECT tracking_id FROM clicks WHERE link_id = ?",
                           ("aaaaaaaa-0008-4000-8000-000000000004",))
    assert sorted(row[0] for row in rows) == sorted(sent)


async def test_an_incoming_request_id_is_echoed_as_the_handler_does(links: TestClient) -> None:
    replies = await converse(links, [_get(f"/{CODE}", extra="X-Request-Id: trace.42\r\n")] * 2
                             + [_get(f"/{CODE}", extra="X-Request-Id: not safe!\r\n")])
    assert [reply.headers["x-request-id"] for reply in replies[:2]] == ["trace.42", "trace.42"]
    assert re.fullmatch(r"[0-9a-f]{16}", replies[2].headers["x-request-id"])


async def test_pipelined_requests_are_answered_in_order(links: TestClient) -> None:
    await converse(links, [_get(f"/{CODE}")])  # the link is held from here on
    burst = (_get(f"/{CODE}") + _get("/no-such-code") + _get(f"/{CODE}", ANDROID) + _get("/healthz")
             + _get("/off-link") + _get(f"/{CODE}"))
    replies = await converse(links, [_get("/healthz"), burst], [1, 6])
    assert [reply.status for reply in replies] == [200, 302, 404, 302, 200, 410, 302]
    assert replies[4].body == b'{"status":"ok"}'
    assert await clicks_of(links, CODE) == 4


async def test_what_the_lane_leaves_gets_the_handlers_answer(links: TestClient) -> None:
    await converse(links, [_get(f"/{CODE}")])
    before, clicks = lane(links).answered, await clicks_of(links, CODE)
    replies = await converse(links, [
        _get("/healthz"),
        _get(f"/{CODE}", method="HEAD"),  # answered, nothing recorded
        _get("/off-link"), _get("/old-link"),
        _get(f"/{CODE}?$app-found=true", extra="Accept: application/json\r\n"),
        _get("/metrics"),
    ]) + await converse(links, [_get("/healthz"), _get(f"/{CODE}", version="1.0")])  # 1.0: then closed
    assert [reply.status for reply in replies] == [200, 302, 410, 410, 200, 200, 200, 302]
    assert replies[4].headers["content-type"].startswith("application/json")
    assert replies[5].headers["content-type"].startswith("text/plain")
    assert lane(links).answered == before
    assert await clicks_of(links, CODE) == clicks + 2  # the HTTP/1.0 GET and the JSON answer


async def test_an_edited_link_is_answered_from_its_new_version_at_once(links: TestClient) -> None:
    link_id = "aaaaaaaa-0008-4000-8000-000000000004"
    account = "aaaaaaaa-0000-4000-8000-000000000001"
    replies = await converse(links, [_get("/app-link")] * 2)
    assert replies[1].headers["location"].startswith("https://shop.example/app?a=1&")
    edited = await links.patch(f"/api/admin/v1/accounts/{account}/links/{link_id}", headers=ADMIN,
                               json={"destination_url": "https://shop.example/new"})
    assert edited.status == 200, await edited.text()
    replies = await converse(links, [_get("/app-link")] * 2)
    assert all(reply.headers["location"].startswith("https://shop.example/new?") for reply in replies)
    disabled = await links.patch(f"/api/admin/v1/accounts/{account}/links/{link_id}", headers=ADMIN,
                                 json={"disabled": True})
    assert disabled.status == 200
    assert [reply.status for reply in await converse(links, [_get("/app-link")] * 2)] == [410, 410]


async def test_a_link_not_held_is_read_and_answered_on_the_lane(links: TestClient) -> None:
    # A change to any link drops every link a worker holds. On SQLite the lane then reads a link it does not hold
    # (one indexed read on the event loop's reader) and answers it, instead of leaving its click to the handler:
    # an unchanged link, the changed one and a link made after the start are answered on the lane from their
    # first click after the change, with the handler's answer. PostgreSQL's reader answers only by awaiting: there
    # the handler reads them, as before, and the lane answers from a link's second click.
    account = "aaaaaaaa-0000-4000-8000-000000000001"
    await converse(links, [_get(f"/{CODE}", ANDROID)] * 2)  # held, and its answer for Android kept
    edited = await links.patch(f"/api/admin/v1/accounts/{account}/links/aaaaaaaa-0008-4000-8000-000000000004",
                               headers=ADMIN, json={"destination_url": "https://shop.example/new"})
    assert edited.status == 200, await edited.text()
    made = await links.post(f"/api/admin/v1/accounts/{account}/links", headers=ADMIN, json={
        "code": "made-later", "kind": "external", "destination_url": "https://shop.example/made?a=1"})
    assert made.status == 201, await made.text()
    before, clicks = lane(links).answered, await clicks_of(links, CODE)
    replies = await converse(links, [_get("/healthz"), _get(f"/{CODE}", ANDROID), _get("/made-later"),
                                     _get("/app-link"), _get(f"/{CODE}", ANDROID)])
    on_lane = isinstance(links.app[DB].reader, sqlite3.Connection)
    assert lane(links).answered - before == (4 if on_lane else 1)
    assert [reply.status for reply in replies] == [200, 302, 302, 302, 302]
    assert replies[2].headers["location"].startswith("https://shop.example/made?a=1&")
    assert replies[3].headers["location"].startswith("https://shop.example/new?")
    # The handler's answers to the same clicks (HTTP/1.0 takes the handler, then closes the connection).
    for index, path, agent in ((1, f"/{CODE}", ANDROID), (2, "/made-later", DESKTOP), (3, "/app-link", DESKTOP)):
        handler = await converse(links, [_get("/healthz"), _get(path, agent, version="1.0")])
        assert _shape(handler[1]) == _shape(replies[index]), path
    assert await clicks_of(links, CODE) == clicks + 3


async def test_a_preview_fetcher_gets_the_bots_302_on_the_lane_until_a_card_is_set(links: TestClient) -> None:
    # With no card on the link nor on its account, a preview fetcher's click is a bot's click: answered on the
    # lane (SQLite: the account's preview defaults read at once), with the handler's 302. Once the account sets
    # a card, the next fetch gets the preview page from the handler.
    account = "aaaaaaaa-0000-4000-8000-000000000001"
    whatsapp = AGENTS["whatsapp"]
    await converse(links, [_get(f"/{CODE}", whatsapp)] * 2)  # the link held, its plan made
    before = lane(links).answered
    replies = await converse(links, [_get("/healthz"), _get(f"/{CODE}", whatsapp), _get(f"/{CODE}", whatsapp)])
    on_lane = isinstance(links.app[DB].reader, sqlite3.Connection)
    assert lane(links).answered - before == (2 if on_lane else 0)
    handler = await converse(links, [_get("/healthz"), _get(f"/{CODE}", whatsapp, version="1.0")])
    assert [reply.status for reply in replies[1:]] == [302, 302]
    assert _shape(replies[1]) == _shape(replies[2]) == _shape(handler[1])
    card = await links.put(f"/api/admin/v1/accounts/{account}/link-preview", headers=ADMIN,
                           json={"title": "Coffee deals"})
    assert card.status == 200, await card.text()
    before = lane(links).answered
    replies = await converse(links, [_get("/healthz"), _get(f"/{CODE}", whatsapp), _get(f"/{CODE}", DESKTOP)])
    assert replies[1].status == 200 and replies[1].headers["content-type"].startswith("text/html")
    assert b'property="og:title" content="Coffee deals"' in replies[1].body
    assert replies[2].status == 302  # a person's click: the lane, as before
    assert lane(links).answered - before == 1


async def test_a_store_that_fails_on_the_lane_leaves_the_click_to_the_handler(links: TestClient) -> None:
    # The lane's reads at once (a link not held, an account's preview defaults) answer "the handler's" when the
    # store fails, instead of failing the connection: the handler then answers as it answers any store failure.
    db = links.app[DB]
    reader = db.reader
    if not isinstance(reader, sqlite3.Connection):
        pytest.skip("PostgreSQL's reader answers only by awaiting: the lane never reads it")
    account = "aaaaaaaa-0000-4000-8000-000000000001"
    assert service.hold_now(db, CODE) is not None and plain_redirect_now(db, account, None)
    edited = await links.patch(f"/api/admin/v1/accounts/{account}/links/aaaaaaaa-0008-4000-8000-000000000004",
                               headers=ADMIN, json={"destination_url": "https://shop.example/new"})
    assert edited.status == 200  # nothing held any more
    with sqlite3.connect(":memory:") as other:  # a reader on a database without the service's tables
        db._reader = other  # type: ignore[attr-defined]
        try:
            assert service.hold_now(db, CODE) is None
            assert plain_redirect_now(db, account, None) is False
        finally:
            db._reader = reader  # type: ignore[attr-defined]
