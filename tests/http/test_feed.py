"""The live feed (``GET /api/admin/v1/accounts/{id}/feed``, issue 37), on both stores: its messages, its
filters, one account's feed never showing another's clicks or events, resuming after ``Last-Event-ID``, the
backlog's bound and the heartbeat."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import DB
from linksvc.app import create_app
from linksvc.seed import load_seed
from linksvc.settings import Settings
from tests.agents import AGENTS
from tests.conftest import ADMIN, bearer, service_server, token_for
from tests.factories import A, B, two_accounts
from tests.sse import Stream

CODE_A, CODE_B = f"lnk{A[:4]}", f"lnk{B[:4]}"
EVENTS = "/api/storefront/v1/behavior/events"
IPHONE = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 Version/17.1 Mobile/15E148 "
          "Safari/604.1")


def feed_url(account: str, query: str = "") -> str:
    return f"/api/admin/v1/accounts/{account}/feed{query}"


@pytest.fixture
async def service(aiohttp_client: Any, settings: Settings) -> TestClient:
    """The two accounts, clicks written every 0.1 s and passed (the horizon of the feed's clicks on PostgreSQL)
    every 0.2 s, the feeds read every 0.2 s (events on PostgreSQL once 1 s old), heartbeats every 0.3 s."""
    app = create_app(replace(settings, click_flush_seconds=0.1, click_rollup_seconds=0.2, feed_poll_seconds=0.2,
                             feed_event_settle_seconds=1.0, feed_heartbeat_seconds=0.3))
    client: TestClient = await aiohttp_client(service_server(app))
    await load_seed(client.app[DB], two_accounts(), allow_private=True)
    return client


@pytest.fixture
async def opened(service: TestClient) -> AsyncIterator[list[Stream]]:
    streams: list[Stream] = []
    yield streams
    for stream in streams:
        stream.close()


async def follow(client: TestClient, opened: list[Stream], account: str = A, query: str = "",
                 last: str | None = None) -> Stream:
    headers = {**ADMIN, **({"Last-Event-ID": last} if last is not None else {})}
    response = await client.get(feed_url(account, query), headers=headers)
    assert response.status == 200, await response.text()
    assert response.headers["Content-Type"].startswith("text/event-stream")
    stream = Stream(response)
    opened.append(stream)
    return stream


async def click(client: TestClient, code: str = CODE_A, query: str = "", agent: str = IPHONE,
                referer: str | None = None) -> None:
    headers = {"User-Agent": agent, **({"Referer": referer} if referer else {})}
    response = await client.get(f"/{code}{query}", headers=headers, allow_redirects=False)
    assert response.status == 302


async def purchase(client: TestClient, order: str, account: str = A, **fields: Any) -> str:
    event = {"type": "PURCHASE", "customer_id": f"cust-{account[:4]}", "order_id": order, "currency": "COP",
             "value": 50, "products": [{"sku": "LATTE-12"}], **fields}
    response = await client.post(EVENTS, json=event, headers=bearer(await token_for(client, account)))
    assert response.status == 202, await response.text()
    return str((await response.json())["data"]["id"])


async def test_a_click_and_an_event_as_they_are_stored(service: TestClient, opened: list[Stream]) -> None:
    stream = await follow(service, opened)
    await click(service, query="?tracking_id=trk-feed&utm_campaign=spring", referer="https://News.example.com/a?b")
    first = await stream.next()
    assert first.event == "click"
    data = first.json
    assert data["code"] == CODE_A and data["tracking_id"] == "trk-feed" and data["platform"] == "ios"
    assert data["bot"] is False and data["referrer_host"] == "news.example.com"
    assert data["utm"]["utm_campaign"] == "spring" and data["utm"]["utm_medium"] == "email"
    assert set(data) == {"time", "link_id", "code", "tracking_id", "platform", "bot", "country", "referrer_host",
                         "utm", "rule", "variant", "route"}
    assert "127.0.0.1" not in "\n".join(first.data)  # never the client's address
    event_id = await purchase(service, "o-feed-1", tracking_id="trk-feed")
    second = await stream.next()
    assert second.event == "event"
    assert second.json["id"] == event_id and second.json["type"] == "PURCHASE"
    assert second.json["customer_id"] == f"cust-{A[:4]}"
    assert second.json["attribution"]["tracking_id"] == "trk-feed"
    assert first.id and second.id and first.id != second.id


async def test_a_feed_shows_only_its_own_accounts_clicks_and_events(service: TestClient,
                                                                     opened: list[Stream]) -> None:
    feed_a, feed_b = await follow(service, opened, A), await follow(service, opened, B)
    await click(service, CODE_B, "?tracking_id=of-b")
    await purchase(service, "o-b", account=B)
    await click(service, CODE_A, "?tracking_id=of-a")
    await purchase(service, "o-a", account=A)
    seen_a = await feed_a.take(2)
    seen_b = await feed_b.take(2)
    assert [(m.event, m.json.get("tracking_id") or m.json["customer_id"]) for m in seen_a] == [
        ("click", "of-a"), ("event", f"cust-{A[:4]}")]
    assert [(m.event, m.json.get("tracking_id") or m.json["customer_id"]) for m in seen_b] == [
        ("click", "of-b"), ("event", f"cust-{B[:4]}")]


async def test_filters_by_kind_link_and_bots(service: TestClient, opened: list[Stream]) -> None:
    events_only = await follow(service, opened, query="?kinds=event")
    bots_only = await follow(service, opened, query="?bots=only")
    people_of_link = await follow(service, opened, query=f"?bots=exclude&link_id={two_link_id()}")
    await click(service, query="?tracking_id=bot-1", agent=AGENTS["googlebot"])
    await click(service, query="?tracking_id=human-1")
    await purchase(service, "o-filter")
    assert (await events_only.next()).event == "event"
    bot = await bots_only.next()
    assert bot.json["tracking_id"] == "bot-1" and bot.json["bot"] is True
    human = await people_of_link.next()
    assert human.json["tracking_id"] == "human-1"
    # what the filters left out never comes: the next message of each is the next click or event it wants
    await click(service, query="?tracking_id=bot-2", agent=AGENTS["googlebot"])
    assert (await bots_only.next()).json["tracking_id"] == "bot-2"
    await purchase(service, "o-filter-2")
    assert (await events_only.next()).event == "event"


def two_link_id() -> str:
    return str(two_accounts()["accounts"][0]["links"][0]["id"])


async def test_resumes_after_last_event_id_exactly(service: TestClient, opened: list[Stream]) -> None:
    stream = await follow(service, opened)
    for n in range(3):
        await click(service, query=f"?tracking_id=r-{n}")
    seen = await stream.take(3)
    assert [m.json["tracking_id"] for m in seen] == ["r-0", "r-1", "r-2"]
    stream.close()
    await purchase(service, "o-away")
    for n in range(3, 5):
        await click(service, query=f"?tracking_id=r-{n}")
    resumed = await follow(service, opened, last=seen[0].id)
    got = []
    while len(got) < 5:
        message = await resumed.next()
        got.append(message.json.get("tracking_id") or message.event)
    # after the first message seen: the two others, then what was stored while away, each once
    assert got[:2] == ["r-1", "r-2"] and sorted(got[2:]) == ["event", "r-3", "r-4"]
    # and live again afterwards
    await click(service, query="?tracking_id=r-5")
    assert (await resumed.next()).json["tracking_id"] == "r-5"


async def test_a_client_away_too_long_gets_a_gap_then_the_newest(service: TestClient, opened: list[Stream]) -> None:
    stream = await follow(service, opened)
    watcher = await follow(service, opened)  # stays: once it saw the last click, the worker has read them all
    await click(service, query="?tracking_id=before")
    last = (await stream.next()).id
    stream.close()
    for n in range(502):
        await click(service, query=f"?tracking_id=away-{n}")
    while (await watcher.next()).json["tracking_id"] != "away-501":
        pass
    resumed = await follow(service, opened, last=last)
    gap = await resumed.next()
    assert gap.event == "gap" and gap.id is None and gap.json == {"missed": True, "shown": 500}
    first = await resumed.next()
    assert first.json["tracking_id"] == "away-2"  # the newest 500 of the 502 missed


async def test_heartbeat_comments_keep_an_idle_stream_open(service: TestClient, opened: list[Stream]) -> None:
    stream = await follow(service, opened)
    assert await stream.comment() == ": ping"


@pytest.mark.parametrize("query, last, status, error", [
    ("?kinds=click,visit", None, 400, "Invalid query"),
    ("?bots=sometimes", None, 400, "Invalid query"),
    ("", "not-a-cursor", 400, "Invalid Last-Event-ID"),
    ("", base64.urlsafe_b64encode(b"12:x y").decode(), None, None),
])
async def test_refusals_are_json_errors(service: TestClient, query: str, last: str | None, status: int | None,
                                        error: str | None) -> None:
    headers = {**ADMIN, **({"Last-Event-ID": last} if last else {})}
    response = await service.get(feed_url(A, query), headers=headers)
    try:
        if status is None:  # a cursor of the other store's shape: refused on SQLite, taken on PostgreSQL
            assert response.status in (200, 400)
            return
        assert response.status == status
        body = await response.json()
        assert set(body) == {"error", "details"} and body["error"] == error
    finally:
        response.close()


async def test_an_unknown_account_and_another_accounts_member(service: TestClient) -> None:
    response = await service.get(feed_url("no-such-account"), headers=ADMIN)
    assert response.status == 404 and (await response.json())["error"] == "Account not found"
    response = await service.get(feed_url(A))
    assert response.status == 401 and set(await response.json()) == {"error", "details"}
    response.close()
