"""The customer lookup's fast lane (api.customers.lane.FastLookups on api.server's fast lanes), over raw sockets:
every request is sent twice, once with the lane on and once with it off (the handler alone), and the two
answers must be the same bytes but for the date and a fresh request id. The lane answers the 200s and 404s of a
held SERVER token; everything else (bad, unknown or revoked tokens, CLIENT keys, another account, malformed
queries, HEAD, HTTP/1.0, 409, large wallets) gets the handler's answer; pipelined answers keep their order; a
change is seen at once; redirects keep their own lane."""

from __future__ import annotations

import asyncio
import json
import re
import socket
from dataclasses import replace
from typing import Any, cast
from urllib.parse import quote

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import DB
from api.customers.lane import FastLookups
from api.server import FAST_LANE, FAST_LANES
from linksvc.app import create_app
from linksvc.customers.service import MAX_LINES_WITH_CUSTOMER
from linksvc.seed import load_seed
from linksvc.settings import Settings
from storage.postgres import PostgresDatabase
from tests.conftest import ADMIN, service_server, token_for
from tests.factories import A, B
from tests.http.test_fast_lane import converse
from tests.http.test_storefront_customers import REWARD, seed_doc
from tests.rawhttp import Reply

LOOKUP = "/api/storefront/v1/customers"
CODE = "lane-link"


def _seed() -> dict[str, Any]:
    seed = seed_doc()
    seed["accounts"][0]["customers"] += [
        {"id": "heavy", "document_number": "HEAVY", "wallet": {"lines": [
            {"amount": 1, "reward_id": REWARD, "expiration_date": f"2099-01-{n % 28 + 1:02d}T00:00:00Z"}
            for n in range(MAX_LINES_WITH_CUSTOMER + 1)]}},
        {"id": "only-expired", "document_number": "OLD", "wallet": {"lines": [
            {"amount": 5, "reward_id": REWARD, "expiration_date": "2020-01-01T00:00:00Z"}]}},
        {"id": "dona", "name": "Doña Núñez \u2603", "document_number": "Ñ-42", "phone": "+57 (310) 555.0000"},
    ]
    seed["accounts"][0]["links"] = [{"id": "aaaaaaaa-0008-4000-8000-0000000000aa", "code": CODE, "kind": "external",
                                     "destination_url": "https://shop.example/"}]
    return seed


@pytest.fixture
async def store(client: TestClient) -> dict[str, str]:
    """The seeded service and its tokens, each already used once (held by the worker from then on)."""
    await load_seed(client.app[DB], _seed(), allow_private=True)
    tokens = {"A": await token_for(client, A), "A-client": await token_for(client, A, "CLIENT"),
              "B": await token_for(client, B)}
    for token in tokens.values():
        assert (await client.get(f"{LOOKUP}?document_number=CC100", headers={"Authorization": f"Bearer {token}"})
                ).status in (200, 403)
    return tokens


def at_once(client: TestClient, count: int) -> int:
    """How many of ``count`` lookups the lane answers itself: all on SQLite; none on PostgreSQL, whose reads all
    await (storage.customers.lookup_now declines them), so that the handler answers every one."""
    return 0 if isinstance(client.app[DB], PostgresDatabase) else count


def lane(client: TestClient) -> FastLookups:
    return cast(FastLookups, client.app[FAST_LANES].lane_of(f"{LOOKUP}?phone=1"))


def request(target: str, token: str | None, method: str = "GET", version: str = "1.1", extra: str = "",
            body: str = "") -> bytes:
    auth = f"Authorization: Bearer {token}\r\n" if token is not None else ""
    return f"{method} {target} HTTP/{version}\r\nHost: 127.0.0.1\r\n{auth}{extra}\r\n{body}".encode()


def shape(reply: Reply) -> tuple[Any, ...]:
    """An answer without what differs between any two answers: its date and a request id made up for it."""
    headers = {name: value for name, value in reply.headers.items() if name != "date"}
    if re.fullmatch(r"[0-9a-f]{16}", headers.get("x-request-id", "")):
        headers["x-request-id"] = "made up"
    head = reply.raw.partition(b"\r\n")[0]  # the status line, reason included
    return head, list(reply.headers), headers, reply.body


async def both_ways(client: TestClient, sends: list[bytes], monkeypatch: pytest.MonkeyPatch
                    ) -> tuple[list[Reply], list[Reply], int]:
    """The answers to ``sends`` (one kept-alive connection, one request at a time) with the lane on, then off,
    and how many of them the lane answered."""
    before = lane(client).answered
    on = await converse(client, sends)
    answered = lane(client).answered - before
    with monkeypatch.context() as patch:
        patch.setattr(FastLookups, "__call__", lambda self, message: None)
        off = await converse(client, sends)
    assert lane(client).answered - before == answered
    return on, off, answered


ANSWERED = [
    "phone=573001234567", "phone=" + quote("+57 300 123 4567"), "phone=%2B57-300-123-4567",
    "phone=+57+300+123+4567",  # "+" is a space in a query: still the same phone
    "phone=" + quote("+57 (300) 123.4567"), "document_number=CC100", f"document_number={'D' * 50}",
    "phone=1234567890", "phone=123456789012345", "document_number=OLD", "document_number=" + quote("Ñ-42"),
    "phone=" + quote("+57 (310) 555.0000"), "document_number=F15",
    # nobody: 404
    "document_number=CC999", "document_number=cc100", "phone=3001234567", "document_number=%20CC100",
    "document_number=" + quote("<b>&\"'"),
]


async def test_the_lane_answers_with_the_handlers_bytes(client: TestClient, store: dict[str, str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    sends = [request(f"{LOOKUP}?{query}", store["A"]) for query in ANSWERED]
    on, off, answered = await both_ways(client, sends, monkeypatch)
    assert answered == at_once(client, len(sends))
    assert [shape(reply) for reply in on] == [shape(reply) for reply in off]
    assert [reply.status for reply in on] == [200] * 13 + [404] * 5
    assert list(on[0].headers) == ["content-type", "x-request-id", "content-length", "date", "server"]
    assert json.loads(on[0].body)["data"]["customer_id"] == "ana"
    assert json.loads(on[11].body)["data"]["customer"]["name"] == "Doña Núñez \u2603"
    assert json.loads(on[13].body) == {"error": "Customer not found",
                                       "details": "no customer matches the given document_number and phone"}


async def test_request_ids_are_echoed_or_made_up_as_the_middleware_does(client: TestClient, store: dict[str, str],
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    target = f"{LOOKUP}?document_number=CC100"
    sends = [request(target, store["A"], extra="X-Request-Id: trace.42\r\n"),
             request(target, store["A"], extra="X-Request-Id: not safe!\r\n"),
             request(target, store["A"], extra=f"X-Request-Id: {'x' * 65}\r\n")]
    on, off, answered = await both_ways(client, sends, monkeypatch)
    assert answered == at_once(client, 3)
    assert [shape(reply) for reply in on] == [shape(reply) for reply in off]
    assert on[0].headers["x-request-id"] == "trace.42"
    assert on[1].headers["x-request-id"] != on[2].headers["x-request-id"]


# (target, token, extra headers, body, status). Each is sent twice on one connection, with the lane on and off.
async def test_headers_the_handler_accepts_are_accepted_alike(client: TestClient, store: dict[str, str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    target = f"{LOOKUP}?document_number=CC100"
    sends = [request(target, store["A"], extra=f"x-account-id: {A}\r\n"),
             request(target, store["A"], extra=f"x-account-id:  {A.upper()} \r\n"),
             request(target, None, extra=f"Authorization: Bearer {store['A']}\r\nAuthorization: Bearer lt_other\r\n"),
             request(target, store["A"], extra="User-Agent: curl/8\r\nAccept: */*\r\nContent-Length: 0\r\n")]
    on, off, answered = await both_ways(client, sends, monkeypatch)
    assert answered == at_once(client, len(sends))
    assert [shape(reply) for reply in on] == [shape(reply) for reply in off]
    assert {reply.status for reply in on} == {200}


HANDLED = [
    # credentials
    (f"{LOOKUP}?document_number=CC100", None, "", "", 401),
    (f"{LOOKUP}?document_number=CC100", "lt_not-a-token", "", "", 401),
    (f"{LOOKUP}?document_number=CC100", "two words", "", "", 401),
    (f"{LOOKUP}?document_number=CC100", "{A-client}", "", "", 403),
    (f"{LOOKUP}?phone=1", "{A-client}", "", "", 403),
    (f"{LOOKUP}?document_number=CC100", "{A}", f"x-account-id: {B}\r\n", "", 403),
    (f"{LOOKUP}?document_number=CC100", "{A}", "x-account-id: \u00e9\r\n", "", 403),
    (f"{LOOKUP}?document_number=CC100", "{A}", "x-account-id: \r\n", "", 403),
    (f"{LOOKUP}?document_number=CC100", None, "Authorization: bearer {A}\r\n", "", 200),  # the scheme in lower case
    (f"{LOOKUP}?document_number=CC100", None, "Authorization: Bearer  {A}\r\n", "", 200),  # two spaces
    (f"{LOOKUP}?document_number=CC100", None, "Authorization: Basic {A}\r\n", "", 401),
    # queries
    (LOOKUP, "{A}", "", "", 400),
    (f"{LOOKUP}?", "{A}", "", "", 400),
    (f"{LOOKUP}?document_number=", "{A}", "", "", 400),
    (f"{LOOKUP}?document_number={'D' * 51}", "{A}", "", "", 400),
    (f"{LOOKUP}?phone=123456789", "{A}", "", "", 400),
    (f"{LOOKUP}?phone=1234567890123456", "{A}", "", "", 400),
    (f"{LOOKUP}?phone=57300abc4567", "{A}", "", "", 400),
    (f"{LOOKUP}?phone=%EF%BC%95%EF%BC%97300123456", "{A}", "", "", 400),  # full-width digits
    (f"{LOOKUP}?phone={'1' * 10}{'%20' * 31}", "{A}", "", "", 400),  # 41 characters
    (f"{LOOKUP}?phone=573001234567&phone=573001234567", "{A}", "", "", 400),
    (f"{LOOKUP}?document_number=CC100&document_number=CC100", "{A}", "", "", 400),
    (f"{LOOKUP}?Phone=573001234567", "{A}", "", "", 400),
    (f"{LOOKUP}?document_number=CC100&phone=573001234567", "{A}", "", "", 200),
    (f"{LOOKUP}?document_number=CC100&utm_source=x", "{A}", "", "", 200),
    (f"{LOOKUP}?document_number=a%00b", "{A}", "", "", 400),
    (f"{LOOKUP}?document_number=a%0Ab", "{A}", "", "", 404),
    (f"{LOOKUP}/?document_number=CC100", "{A}", "", "", 404),
    (f"{LOOKUP}%2F?document_number=CC100", "{A}", "", "", 404),
    ("/api/storefront/v1/%63ustomers?document_number=CC100", "{A}", "", "", 200),
    (f"http://127.0.0.1{LOOKUP}?document_number=CC100", "{A}", "", "", 200),
    # what the handler alone answers
    (f"{LOOKUP}?phone=525512345678", "{A}", "", "", 409),
    (f"{LOOKUP}?document_number=HEAVY", "{A}", "", "", 200),
    (f"{LOOKUP}?document_number=CC100", "{A}", "Expect: something\r\n", "", 417),
    (f"{LOOKUP}?document_number=CC100", "{A}", "Content-Length: 2\r\n", "{}", 200),
    (f"{LOOKUP}?document_number=CC100", "{A}", "Transfer-Encoding: chunked\r\n", "0\r\n\r\n", 200),
]


@pytest.mark.parametrize(("target", "token", "extra", "body", "status"), HANDLED)
async def test_what_the_lane_leaves_gets_the_handlers_answer(client: TestClient, store: dict[str, str],
                                                             monkeypatch: pytest.MonkeyPatch, target: str,
                                                             token: str | None, extra: str, body: str,
                                                             status: int) -> None:
    sends = [request(target, token.format(**store) if token else token, extra=extra.format(**store), body=body)] * 2
    on, off, answered = await both_ways(client, sends, monkeypatch)
    assert answered == 0
    assert [reply.status for reply in on] == [status, status]
    assert [shape(reply) for reply in on] == [shape(reply) for reply in off]


@pytest.mark.parametrize("value", ["%FF%FE", "%C3%28", "%ED%A0%80", "\u00e9".encode().decode("latin-1"), "%E2%80%AE"])
async def test_undecodable_and_odd_documents_get_the_handlers_answer(client: TestClient, store: dict[str, str],
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      value: str) -> None:
    for raw in (True, False):  # as sent, then escaped
        target = f"{LOOKUP}?document_number={value if raw else quote(value, safe='%')}"
        on, off, _ = await both_ways(client, [request(target, store["A"])], monkeypatch)
        assert [shape(reply) for reply in on] == [shape(reply) for reply in off]


def _head_then_get(port: int, head: bytes, get: bytes) -> bytes:
    """A HEAD (answered without a body) then a closing GET on one connection: everything the server sent."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head)
        first = b""
        while b"\r\n\r\n" not in first:
            chunk = sock.recv(65536)
            assert chunk
            first += chunk
        sock.sendall(get)
        rest = b""
        while chunk := sock.recv(65536):
            rest += chunk
    return first + rest


def _without_dates(raw: bytes) -> bytes:
    return re.sub(rb"\r\n(Date|X-Request-Id): [^\r]*", b"", raw)


async def test_head_and_http10_take_the_handler(client: TestClient, store: dict[str, str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    target = f"{LOOKUP}?document_number=CC100"
    port = client.server.port
    assert port is not None
    head, get = request(target, store["A"], method="HEAD"), request(target, store["A"], extra="Connection: close\r\n")
    before = lane(client).answered
    raw = await asyncio.to_thread(_head_then_get, port, head, get)
    http10 = await converse(client, [request(target, store["A"], version="1.0")])
    assert lane(client).answered == before
    with monkeypatch.context() as patch:
        patch.setattr(FastLookups, "__call__", lambda self, message: None)
        assert _without_dates(raw) == _without_dates(await asyncio.to_thread(_head_then_get, port, head, get))
        assert shape(http10[0]) == shape((await converse(client, [request(target, store["A"], version="1.0")]))[0])
    assert raw.startswith(b"HTTP/1.1 405 Method Not Allowed\r\n")  # the route is GET only, as it always was
    assert http10[0].status == 200


async def test_another_accounts_token_finds_only_its_own_customers(client: TestClient, store: dict[str, str]
                                                                   ) -> None:
    before = lane(client).answered
    replies = await converse(client, [request(f"{LOOKUP}?document_number=CC100", store["B"]),
                                      request(f"{LOOKUP}?phone=573001234567", store["B"]),
                                      request(f"{LOOKUP}?document_number=HEAVY", store["B"]),
                                      request(f"{LOOKUP}?document_number=CC100", store["A"])])
    assert lane(client).answered - before == at_once(client, 4)
    assert [reply.status for reply in replies] == [200, 200, 404, 200]
    assert [json.loads(reply.body)["data"]["customer_id"] for reply in (replies[0], replies[1], replies[3])] == [
        "b-ana", "b-ana", "ana"]


async def test_pipelined_requests_are_answered_in_order(client: TestClient, store: dict[str, str]) -> None:
    # the link is held from here on
    await converse(client, [f"GET /{CODE} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()])
    ok, nobody = f"{LOOKUP}?document_number=CC100", f"{LOOKUP}?document_number=NOBODY"
    burst = (request(ok, store["A"]) + request(nobody, store["A"]) + request(ok, "lt_bad")
             + f"GET /{CODE} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode() + request("/healthz", None)
             + request(f"{LOOKUP}?phone=525512345678", store["A"]) + request(ok, store["B"]) + request(ok, store["A"]))
    before = lane(client).answered
    replies = await converse(client, [request("/healthz", None), burst], [1, 8])
    assert [reply.status for reply in replies] == [200, 200, 404, 401, 302, 200, 409, 200, 200]
    assert [json.loads(replies[i].body)["data"]["customer_id"] for i in (1, 7, 8)] == ["ana", "b-ana", "ana"]
    assert lane(client).answered - before >= at_once(client, 2)  # the first two at least: the connection was idle


async def test_a_change_is_seen_at_once(client: TestClient, store: dict[str, str]) -> None:
    target = f"{LOOKUP}?document_number=CC100"
    replies = await converse(client, [request(target, store["A"])] * 2)
    assert json.loads(replies[1].body)["data"]["customer"]["name"] == "Ana"
    moved = await client.post(f"{LOOKUP}/migrate", headers={"Authorization": f"Bearer {store['A']}"},
                              json={"customers": [{"document_number": "CC100", "name": "Ana Renamed"}]})
    assert moved.status == 200, await moved.text()
    before = lane(client).answered
    replies = await converse(client, [request(target, store["A"])] * 2)
    assert lane(client).answered - before == at_once(client, 2)
    assert [json.loads(reply.body)["data"]["customer"]["name"] for reply in replies] == ["Ana Renamed"] * 2
    # A revoked key's token stops at once, on the lane's connection too.
    keys = await (await client.get(f"/api/admin/v1/accounts/{A}/api-keys", headers=ADMIN)).json()
    server_key = next(key for key in keys["data"] if key["kind"] == "SERVER")
    assert (await client.delete(f"/api/admin/v1/accounts/{A}/api-keys/{server_key['id']}", headers=ADMIN)).status == 200
    replies = await converse(client, [request(target, store["A"])] * 2)
    assert [reply.status for reply in replies] == [401, 401]


async def test_a_held_token_stops_when_it_expires(aiohttp_client: Any, settings: Settings) -> None:
    """The lane holds what a token it has checked grants (linksvc.accounts.service.held_principal); the token's
    expiry is still compared at every request, so a held token stops at its expiry, on the lane's connection."""
    client = await aiohttp_client(service_server(create_app(replace(settings, token_ttl_seconds=1))))
    await load_seed(client.app[DB], _seed(), allow_private=True)
    token = await token_for(client, A)
    target = f"{LOOKUP}?document_number=CC100"
    before = lane(client).answered
    replies = await converse(client, [request(target, token)] * 3)
    assert [reply.status for reply in replies] == [200] * 3
    assert lane(client).answered - before >= at_once(client, 2)  # the first may take the handler (not held yet)
    await asyncio.sleep(1.1)  # past the token's lifetime
    replies = await converse(client, [request(target, token)] * 2)
    assert [(reply.status, json.loads(reply.body)["error"]) for reply in replies] == [(401, "Token expired")] * 2


async def test_answers_are_counted_under_the_route(client: TestClient, store: dict[str, str]) -> None:
    def counted(text: str, status: int) -> float:
        line = f'linksvc_http_requests_total{{method="GET",route="{LOOKUP}",status="{status}"}} '
        return next((float(row[len(line):]) for row in text.splitlines() if row.startswith(line)), 0.0)

    metrics = await (await client.get("/metrics")).text()
    before = lane(client).answered
    await converse(client, [request(f"{LOOKUP}?document_number=CC100", store["A"])] * 3
                   + [request(f"{LOOKUP}?document_number=NOBODY", store["A"])] * 2)
    assert lane(client).answered - before == at_once(client, 5)
    after = await (await client.get("/metrics")).text()
    assert (counted(after, 200) - counted(metrics, 200), counted(after, 404) - counted(metrics, 404)) == (3, 2)

    def answers(text: str, answer: str) -> float:  # the lane's 200s, given again from the worker's held answers
        line = f'linksvc_customer_lookups_total{{answer="{answer}"}} '
        return next((float(row[len(line):]) for row in text.splitlines() if row.startswith(line)), 0.0)

    # The first of the three reads the store and is held (the fixture's lookup took the handler, which holds
    # nothing), the other two are given again; on PostgreSQL the handler answers all three.
    assert [answers(after, kind) - answers(metrics, kind) for kind in ("held", "read")] == (
        [2, 1] if at_once(client, 1) else [0, 0])
    assert f'linksvc_http_request_duration_seconds_count{{method="GET",route="{LOOKUP}"}}' in after


async def test_redirects_keep_their_own_lane(client: TestClient, store: dict[str, str]) -> None:
    redirects = client.app[FAST_LANE]
    assert client.app[FAST_LANES].lane_of(f"/{CODE}") is redirects
    assert client.app[FAST_LANES].lane_of(f"{LOOKUP}/migrate") is lane(client)
    replies = await converse(client, [f"GET /{CODE} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()] * 3)
    assert [reply.status for reply in replies] == [302] * 3
    # A redirect with an expectation is the route's to answer (417), as for any other request.
    expecting = f"GET /{CODE} HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: nonsense\r\n\r\n".encode()
    replies = await converse(client, [expecting] * 2)
    assert [reply.status for reply in replies] == [417, 417]
