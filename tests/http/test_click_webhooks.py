"""The ``link.clicked`` webhook (issue 37), on both stores: clicks made through the real redirect reach a receiver
on 127.0.0.1 as signed webhooks (one per click, or batched), filtered by link, tag and bots (left out unless the
connection asks), retried after a 500 under the same ``webhook-id``, each click once, of its own account only; the
admin API lists a click delivery with its clicks' count and links, filters the deliveries by kind and shows one
with its clicks."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any, get_args

import pytest
from aiohttp.test_utils import TestClient
from standardwebhooks.webhooks import Webhook

from api.appkeys import DB
from api.forwarding.admin import DeliveryKind
from api.forwarding.webhooks import WEBHOOKS
from linksvc.app import create_app
from linksvc.forwarding.outgoing import WEBHOOK_KINDS
from linksvc.forwarding.webhook import LINK_CLICKED
from linksvc.seed import load_seed
from linksvc.settings import Settings
from tests.conftest import ADMIN, bearer, service_server, token_for
from tests.factories import A, B, ids, two_accounts
from tests.http.conftest import Receiver

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
ADMIN_API = f"/api/admin/v1/accounts/{A}"
CODE_A, CODE_B = f"lnk{A[:4]}", f"lnk{B[:4]}"
IPHONE = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 Version/17.1 Mobile/15E148 "
          "Safari/604.1")
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"


@pytest.fixture
async def service(aiohttp_client: Any, settings: Settings) -> TestClient:
    """The two accounts; clicks written every 0.1 s; deliveries to 127.0.0.1 allowed and retried at once."""
    app = create_app(replace(settings, click_flush_seconds=0.1, allow_private_destinations=True,
                             delivery_backoff_seconds=0.01, delivery_max_tries=3, delivery_timeout_seconds=2))
    client: TestClient = await aiohttp_client(service_server(app))
    await load_seed(client.app[DB], two_accounts(), allow_private=True)
    return client


async def subscribe(client: TestClient, receiver: Receiver, path: str = "/in", **clicks: Any) -> str:
    doc = {"destination": "webhook", "event_types": ["PURCHASE"],
           "config": {"endpoint_url": receiver.url(path), "secret": SECRET, "clicks": clicks}}
    response = await client.post(f"{ADMIN_API}/connections", json=doc, headers=ADMIN)
    assert response.status == 201, await response.text()
    return str((await response.json())["data"]["id"])


async def link(client: TestClient, code: str, tags: list[str]) -> str:
    doc = {"code": code, "kind": "email", "destination_url": "https://shop.example/p", "tags": tags}
    response = await client.post(f"{ADMIN_API}/links", json=doc, headers=ADMIN)
    assert response.status == 201, await response.text()
    return str((await response.json())["data"]["id"])


async def click(client: TestClient, code: str, tracking_id: str, agent: str = IPHONE) -> None:
    response = await client.get(f"/{code}?tracking_id={tracking_id}", headers={"User-Agent": agent},
                                allow_redirects=False)
    assert response.status == 302


def clicked(receiver: Receiver, path: str = "/in") -> list[dict[str, Any]]:
    """The link.clicked webhooks the receiver got at ``path``, in order."""
    return [r for r in receiver.received if r["path"] == path and r["json"]["type"] == "link.clicked"]


def tracking_ids(receiver: Receiver, path: str = "/in") -> list[str]:
    return [c["tracking_id"] for r in clicked(receiver, path) for c in r["json"]["data"]["clicks"]]


async def until(condition: Any, seconds: float = 60, what: Any = None) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, f"not received in time: {what() if what else ''}"
        await asyncio.sleep(0.05)


async def test_each_click_is_a_signed_link_clicked_webhook_and_bots_are_left_out(service: TestClient,
                                                                                  receiver: Receiver) -> None:
    await subscribe(service, receiver)
    await click(service, CODE_A, "bot-1", GOOGLEBOT)
    await click(service, CODE_B, "other-account")
    await click(service, CODE_A, "person-1")
    await click(service, CODE_A, "person-2")
    await until(lambda: len(tracking_ids(receiver)) >= 2)
    # bots are left out by default, and account B's click never reaches account A's connection
    assert sorted(tracking_ids(receiver)) == ["person-1", "person-2"]
    for request in clicked(receiver):
        Webhook(SECRET).verify(request["body"], request["headers"])  # Standard Webhooks' signature
        WEBHOOKS["link.clicked"].model_validate(request["json"])  # the body the OpenAPI document describes
        [one] = request["json"]["data"]["clicks"]
        assert (one["link_id"], one["code"], one["account_id"], one["platform"], one["bot"]) == (
            ids(A)["links"], CODE_A, A, "ios", False)
    assert len({r["headers"]["webhook-id"] for r in clicked(receiver)}) == 2

    document = await (await service.get("/api/admin/v1/openapi.json")).json()
    assert "link.clicked" in document["webhooks"]


async def test_filters_by_link_by_tag_and_bots_only(service: TestClient, receiver: Receiver) -> None:
    tagged = f"spring{A[:2]}"
    await link(service, tagged, ["spring"])
    await link(service, "plain", [])
    await subscribe(service, receiver, "/by-link", link_ids=[ids(A)["links"]])
    await subscribe(service, receiver, "/by-tag", tags=["spring"])
    await subscribe(service, receiver, "/bots", bots="only")
    await subscribe(service, receiver, "/everyone", bots="include")
    await click(service, "plain", "plain-1")
    await click(service, tagged, "tagged-1")
    await click(service, CODE_A, "bot-1", GOOGLEBOT)
    await click(service, CODE_A, "a-1")
    await click(service, tagged, "tagged-2")
    await click(service, "plain", "bot-2", GOOGLEBOT)
    def seen() -> dict[str, list[str]]:
        return {path: tracking_ids(receiver, path) for path in ("/everyone", "/by-tag", "/by-link", "/bots")}

    # each click is its own webhook, sent side by side: they may arrive in any order
    await until(lambda: len(tracking_ids(receiver, "/everyone")) == 6 and sorted(tracking_ids(receiver, "/by-tag"))
                == ["tagged-1", "tagged-2"] and tracking_ids(receiver, "/by-link") == ["a-1"]
                and sorted(tracking_ids(receiver, "/bots")) == ["bot-1", "bot-2"], what=seen)
    assert sorted(tracking_ids(receiver, "/everyone")) == sorted(
        ["plain-1", "tagged-1", "bot-1", "a-1", "tagged-2", "bot-2"])


async def test_batched_per_connection_setting(service: TestClient, receiver: Receiver) -> None:
    await subscribe(service, receiver, batch_size=3, batch_seconds=2)
    made = [f"b-{n}" for n in range(7)]
    for tracking_id in made:
        await click(service, CODE_A, tracking_id)
    await until(lambda: len(tracking_ids(receiver)) >= 7)
    assert sorted(tracking_ids(receiver)) == sorted(made)  # each once
    sizes = [len(r["json"]["data"]["clicks"]) for r in clicked(receiver)]
    assert max(sizes) == 3 and len(sizes) >= 3  # batches of three, the last one sent once it waited
    for request in clicked(receiver):
        WEBHOOKS["link.clicked"].model_validate(request["json"])
        Webhook(SECRET).verify(request["body"], request["headers"])


async def test_a_500_is_retried_under_the_same_webhook_id(service: TestClient, receiver: Receiver) -> None:
    connection = await subscribe(service, receiver)
    receiver.script = [(500, {}), (500, {})]
    await click(service, CODE_A, "retried")
    await until(lambda: len(clicked(receiver)) == 3)
    tries = clicked(receiver)
    assert len({r["headers"]["webhook-id"] for r in tries}) == 1  # the same message, tried three times
    assert tracking_ids(receiver) == ["retried"] * 3
    delivery: dict[str, Any] = {}

    async def delivered() -> bool:
        listed = await service.get(f"{ADMIN_API}/connections/{connection}/deliveries", headers=ADMIN)
        delivery.update((await listed.json())["data"][0])
        return delivery["state"] == "delivered"

    deadline = asyncio.get_running_loop().time() + 60
    while not await delivered():
        assert asyncio.get_running_loop().time() < deadline, delivery
        await asyncio.sleep(0.05)
    assert (delivery["kind"], delivery["trigger"], delivery["event_id"], delivery["tries"], delivery["last_status"]) \
        == ("link.clicked", "click", "retried", 3, 200)
    assert delivery["message_id"] == tries[0]["headers"]["webhook-id"]


async def test_settings_are_checked_and_another_accounts_link_refused(service: TestClient,
                                                                      receiver: Receiver) -> None:
    doc = {"destination": "webhook", "event_types": ["PURCHASE"],
           "config": {"endpoint_url": receiver.url(), "secret": SECRET,
                      "clicks": {"batch_size": 0, "bots": "some", "link_ids": [ids(B)["links"]]}}}
    response = await service.post(f"{ADMIN_API}/connections", json=doc, headers=ADMIN)
    assert response.status == 400
    fields = {issue["path"] for issue in (await response.json())["details"]["issues"]}
    assert {"config.clicks.batch_size", "config.clicks.bots", "config.clicks.link_ids[0]"} <= fields


async def test_a_connection_without_clicks_gets_none(service: TestClient, receiver: Receiver) -> None:
    doc = {"destination": "webhook", "event_types": ["PURCHASE"],
           "config": {"endpoint_url": receiver.url("/events"), "secret": SECRET}}
    response = await service.post(f"{ADMIN_API}/connections", json=doc, headers=ADMIN)
    assert response.status == 201
    await subscribe(service, receiver)
    await click(service, CODE_A, "seen")
    await until(lambda: tracking_ids(receiver) == ["seen"])
    assert [r for r in receiver.received if r["path"] == "/events"] == []


async def test_a_click_delivery_in_the_admin_api_names_its_clicks(service: TestClient, receiver: Receiver) -> None:
    connection = await subscribe(service, receiver, batch_size=2, batch_seconds=30)
    for tracking_id in ("shown-1", "shown-2"):
        await click(service, CODE_A, tracking_id)
    headers = bearer(await token_for(service, A))
    event = {"type": "PURCHASE", "customer_id": "cust-shown", "order_id": "o-shown", "currency": "COP", "value": 5,
             "products": [{"sku": "LATTE-12", "quantity": 1, "price": 5}]}
    response = await service.post("/api/storefront/v1/behavior/events", json=event, headers=headers)
    assert response.status == 202, await response.text()
    await until(lambda: len(tracking_ids(receiver)) == 2)
    listed = f"{ADMIN_API}/connections/{connection}/deliveries"

    async def page(query: str = "") -> list[dict[str, Any]]:
        answer = await service.get(f"{listed}{query}", headers=ADMIN)
        assert answer.status == 200, await answer.text()
        return list((await answer.json())["data"])

    [made] = await page("?kind=link.clicked")
    assert (made["kind"], made["trigger"], made["event_id"], made["click_count"], made["link_codes"]) == (
        "link.clicked", "click", "shown-1", 2, [CODE_A])
    events = await page("?kind=event.accepted")
    assert [(d["kind"], d["click_count"], d["link_codes"]) for d in events] == [("event.accepted", None, None)]
    assert {d["kind"] for d in await page()} >= {"link.clicked", "event.accepted"}

    # One delivery: a click delivery's clicks as its webhook sent them; an event's has none. Its outcome is
    # stored once the receiver's answer is read, which may be just after the receiver saw the request.
    async def delivery(delivery_id: str) -> dict[str, Any]:
        answer = await service.get(f"{ADMIN_API}/deliveries/{delivery_id}", headers=ADMIN)
        assert answer.status == 200, await answer.text()
        return dict((await answer.json())["data"])

    deadline = asyncio.get_running_loop().time() + 60
    while (detail := await delivery(made["id"]))["state"] == "pending":
        assert asyncio.get_running_loop().time() < deadline, detail
        await asyncio.sleep(0.05)
    assert [c["tracking_id"] for c in detail["clicks"]] == ["shown-1", "shown-2"]
    assert detail["clicks"] == next(r["json"]["data"]["clicks"] for r in clicked(receiver))
    assert (detail["click_count"], detail["link_codes"], detail["state"]) == (2, [CODE_A], "delivered")
    answer = await service.get(f"{ADMIN_API}/deliveries/{events[0]['id']}", headers=ADMIN)
    assert (await answer.json())["data"]["clicks"] is None

    # Another account's delivery is not found; an unknown kind is the query's error, named.
    answer = await service.get(f"/api/admin/v1/accounts/{B}/deliveries/{made['id']}", headers=ADMIN)
    assert answer.status == 404
    assert set(await answer.json()) == {"error", "details"}
    answer = await service.get(f"{listed}?kind=clicks", headers=ADMIN)
    assert answer.status == 400
    assert "kind" in await answer.text()
    assert set(get_args(DeliveryKind)) == {"event", "reversal", *WEBHOOK_KINDS, LINK_CLICKED}
