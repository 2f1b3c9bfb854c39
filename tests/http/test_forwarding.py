"""Forwarding against real HTTP receivers on 127.0.0.1: what arrives, in which order, retries, filters,
reversal effects, the admin view of deliveries and the metrics."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from standardwebhooks.webhooks import Webhook

from tests.conftest import ADMIN, bearer, token_for
from tests.factories import A, ids
from tests.http.conftest import Receiver

API = "/api/storefront/v1"
ADMIN_API = f"/api/admin/v1/accounts/{A}"
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
CUSTOMER = "cust-aaaa"


async def connect(client: TestClient, destination: str, config: dict[str, Any], **fields: Any) -> str:
    doc = {"destination": destination, "enabled": True, "forward_events": True, "forward_purchases": True,
           "event_types": ["PURCHASE", "page_view"], "config": config, **fields}
    response = await client.post(f"{ADMIN_API}/connections", json=doc, headers=ADMIN)
    assert response.status == 201, await response.text()
    return str((await response.json())["data"]["id"])


def purchase(order: str = "o-1", **fields: Any) -> dict[str, Any]:
    return {"type": "PURCHASE", "customer_id": CUSTOMER, "order_id": order, "currency": "COP", "value": 50,
            "products": [{"sku": "LATTE-12", "quantity": 2, "price": 25}],
            "attribution": {"utm_source": "newsletter", "utm_medium": "email", "utm_campaign": "spring",
                            "tracking_id": "trk-1"}, **fields}


async def send(client: TestClient, event: dict[str, Any]) -> str:
    headers = bearer(await token_for(client, A))
    response = await client.post(f"{API}/behavior/events", json=event, headers=headers)
    assert response.status == 202, await response.text()
    return str((await response.json())["data"]["id"])


async def reverse(client: TestClient, event_id: str) -> None:
    headers = bearer(await token_for(client, A))
    response = await client.post(f"{API}/behavior/events/{event_id}/reverse", json={"reason": "returned"},
                                 headers=headers)
    assert response.status == 200, await response.text()


async def deliveries(client: TestClient, event_id: str) -> list[dict[str, Any]]:
    response = await client.get(f"{ADMIN_API}/events/{event_id}/deliveries", headers=ADMIN)
    assert response.status == 200, await response.text()
    return list((await response.json())["data"])


async def settled(client: TestClient, event_id: str, done: Callable[[list[dict[str, Any]]], bool] | None = None,
                  seconds: float = 10) -> list[dict[str, Any]]:
    """The event's deliveries once none is pending (or ``done`` holds)."""
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        found = await deliveries(client, event_id)
        if (done(found) if done else all(d["state"] != "pending" for d in found)):
            return found
        assert asyncio.get_running_loop().time() < deadline, found
        await asyncio.sleep(0.02)


# Webhooks ------------------------------------------------------------------------------------------------------


async def test_webhook_gets_the_event_and_the_reward_signed(service: TestClient, receiver: Receiver) -> None:
    await connect(service, "webhook", {"endpoint_url": receiver.url(), "secret": SECRET})
    event_id = await send(service, purchase())
    found = await settled(service, event_id)
    # The account's only tier has no entry conditions: the first purchase puts the customer in it.
    assert sorted((d["kind"], d["state"], d["tries"]) for d in found) == [
        ("event.accepted", "delivered", 1), ("reward.issued", "delivered", 1), ("tier.changed", "delivered", 1)]
    assert len(receiver.received) == 3
    by_type = {r["json"]["type"]: r for r in receiver.received}
    accepted = by_type["event.accepted"]
    # Standard Webhooks: the official library accepts the signature; the id is the delivery's message id.
    Webhook(SECRET).verify(accepted["body"], accepted["headers"])
    assert accepted["headers"]["webhook-id"] in {d["message_id"] for d in found}
    data = accepted["json"]["data"]
    assert data["id"] == event_id and data["order_id"] == "o-1"
    assert data["attribution"]["utm_source"] == "newsletter" and data["attribution"]["tracking_id"] == "trk-1"
    assert data["attribution_original"] == purchase()["attribution"]
    rewards = by_type["reward.issued"]["json"]["data"]
    assert rewards["customer_id"] == CUSTOMER and [r["amount"] for r in rewards["rewards"]] == [10]
    tier = by_type["tier.changed"]["json"]["data"]
    assert (tier["from"], tier["to"], tier["cause"]) == (None, ids(A)["tiers"], "purchase")
    # A second purchase changes no tier: no tier.changed this time.
    second = await send(service, purchase("o-2"))
    assert sorted(d["kind"] for d in await settled(service, second)) == ["event.accepted", "reward.issued"]


async def test_no_reward_webhook_when_nothing_was_issued(service: TestClient, receiver: Receiver) -> None:
    await connect(service, "webhook", {"endpoint_url": receiver.url(), "secret": SECRET})
    response = await service.patch(f"{ADMIN_API}/campaigns/{ids(A)['campaigns']}", json={"paused": True},
                                   headers=ADMIN)
    assert response.status == 200
    event_id = await send(service, purchase())
    found = await settled(service, event_id)
    assert sorted(d["kind"] for d in found) == ["event.accepted", "tier.changed"]
    assert sorted(r["json"]["type"] for r in receiver.received) == ["event.accepted", "tier.changed"]


async def test_a_reversal_follows_its_purchase_and_keeps_the_utm(service: TestClient, receiver: Receiver) -> None:
    await connect(service, "webhook", {"endpoint_url": receiver.url(), "secret": SECRET})
    receiver.script = [(503, {}), (503, {})]  # the purchase's first deliveries fail twice
    event_id = await send(service, purchase())
    await reverse(service, event_id)
    found = await settled(service, event_id)
    assert all(d["state"] == "delivered" for d in found), found
    types = [r["json"]["type"] for r in receiver.received if r["json"]]
    delivered = [t for t in types]
    # One customer's deliveries reach the connection in order: the reversal never overtakes its purchase.
    assert delivered.index("purchase.reversed") > max(i for i, t in enumerate(delivered) if t == "event.accepted")
    reversed_body = next(r["json"] for r in receiver.received if r["json"]["type"] == "purchase.reversed")
    assert reversed_body["data"]["attribution"]["utm_campaign"] == "spring"
    assert reversed_body["data"]["reason"] == "returned"
    assert "reward.reversed" in types


# Retries, failures, filters ----------------------------------------------------------------------------------------


async def test_retries_then_delivered_honouring_retry_after(service: TestClient, receiver: Receiver) -> None:
    await connect(service, "webhook", {"endpoint_url": receiver.url(), "secret": SECRET},
                  event_types=["page_view"])
    receiver.script = [(429, {"Retry-After": "0"}), (500, {})]
    event_id = await send(service, {"type": "page_view", "customer_id": CUSTOMER})
    found = await settled(service, event_id)
    assert [(d["state"], d["tries"], d["last_status"]) for d in found] == [("delivered", 3, 200)]
    assert len({r["headers"]["webhook-id"] for r in receiver.received}) == 1  # the same message, retried


async def test_dead_after_max_tries_then_retried_by_hand(service: TestClient, receiver: Receiver) -> None:
    connection = await connect(service, "webhook", {"endpoint_url": receiver.url(), "secret": SECRET},
                               event_types=["page_view"])
    receiver.script = [(502, {})] * 3
    event_id = await send(service, {"type": "page_view", "customer_id": CUSTOMER})
    [dead] = await settled(service, event_id)
    assert (dead["state"], dead["tries"], dead["last_status"], dead["last_error"]) == ("dead", 3, 502, "HTTP 502")
    listed = await service.get(f"{ADMIN_API}/connections/{connection}/deliveries?state=dead", headers=ADMIN)
    assert [d["id"] for d in (await listed.json())["data"]] == [dead["id"]]
    response = await service.post(f"{ADMIN_API}/deliveries/{dead['id']}/retry", headers=ADMIN)
    assert response.status == 200 and (await response.json())["data"]["state"] in ("pending", "delivered")
    [again] = await settled(service, event_id)
    assert again["state"] == "delivered"
    response = await service.post(f"{ADMIN_API}/deliveries/{dead['id']}/retry", headers=ADMIN)
    assert response.status == 409  # delivered: nothing to retry


async def test_a_client_error_fails_without_retry(service: TestClient, receiver: Receiver) -> None:
    await connect(service, "webhook", {"endpoint_url": receiver.url(), "secret": SECRET},
                  event_types=["page_view"])
    receiver.script = [(400, {})]
    event_id = await send(service, {"type": "page_view", "customer_id": CUSTOMER})
    [failed] = await settled(service, event_id)
    assert (failed["state"], failed["tries"]) == ("failed", 1)
    await asyncio.sleep(0.2)
    assert len(receiver.received) == 1


async def test_an_unreachable_destination_is_retried_and_does_not_slow_ingest(service: TestClient) -> None:
    await connect(service, "webhook", {"endpoint_url": "http://127.0.0.1:9/in", "secret": SECRET},
                  event_types=["page_view"])
    event_id = await send(service, {"type": "page_view", "customer_id": CUSTOMER})
    [dead] = await settled(service, event_id)
    assert dead["state"] == "dead" and dead["tries"] == 3 and dead["last_status"] is None
    assert dead["last_error"]


@pytest.mark.parametrize(("fields", "event", "reason"), [
    ({"forward_purchases": False}, "purchase", "purchase forwarding is off"),
    ({"forward_events": False}, "page_view", "event forwarding is off"),
    ({"event_types": ["page_view"]}, "purchase", "event type PURCHASE is not allowed by the connection"),
    ({"event_types": ["PURCHASE"]}, "page_view", "event type page_view is not allowed by the connection"),
])
async def test_filters_record_their_reason_and_send_nothing(service: TestClient, receiver: Receiver,
                                                            fields: dict[str, Any], event: str, reason: str) -> None:
    await connect(service, "webhook", {"endpoint_url": receiver.url(), "secret": SECRET}, **fields)
    event_id = await send(service, purchase() if event == "purchase" else {"type": "page_view",
                                                                          "customer_id": CUSTOMER})
    found = await settled(service, event_id)
    assert found and all((d["state"], d["reason"]) == ("filtered", reason) for d in found)
    await asyncio.sleep(0.2)
    assert receiver.received == []


async def test_a_disabled_connection_gets_nothing(service: TestClient, receiver: Receiver) -> None:
    await connect(service, "webhook", {"endpoint_url": receiver.url(), "secret": SECRET}, enabled=False)
    event_id = await send(service, purchase())
    await asyncio.sleep(0.2)
    assert await deliveries(service, event_id) == [] and receiver.received == []


async def test_deliveries_belong_to_their_account(service: TestClient, receiver: Receiver) -> None:
    await connect(service, "webhook", {"endpoint_url": receiver.url(), "secret": SECRET})
    event_id = await send(service, purchase())
    response = await service.get(f"/api/admin/v1/accounts/{ids(A)['customers'][:0] or 'x'}/events/{event_id}"
                                 "/deliveries", headers=ADMIN)
    assert response.status in (404, 400)
    other = "bbbbbbbb-0000-4000-8000-000000000002"
    response = await service.get(f"/api/admin/v1/accounts/{other}/events/{event_id}/deliveries", headers=ADMIN)
    assert response.status == 404


async def test_metrics_count_deliveries_by_destination_and_state(service: TestClient, receiver: Receiver) -> None:
    await connect(service, "webhook", {"endpoint_url": receiver.url(), "secret": SECRET}, event_types=["page_view"])
    receiver.script = [(400, {})]
    first = await send(service, {"type": "page_view", "customer_id": CUSTOMER})
    await settled(service, first)
    second = await send(service, {"type": "page_view", "customer_id": CUSTOMER})
    await settled(service, second)
    text = await (await service.get("/metrics")).text()
    assert 'linksvc_deliveries{destination="webhook",state="failed"} 1.0' in text
    assert 'linksvc_deliveries{destination="webhook",state="delivered"} 1.0' in text


# Every destination, and what a reversal does to each -----------------------------------------------------------


async def test_each_destination_gets_its_format_and_the_reversal_effects(service: TestClient,
                                                                         receiver: Receiver) -> None:
    configs = {
        "messaging": {"endpoint_url": receiver.url("/messaging"), "api_key": "msg-key"},
        "meta": {"endpoint_url": receiver.url("/meta"), "pixel_id": "111", "access_token": "meta-token"},
        "tiktok": {"endpoint_url": receiver.url("/tiktok"), "pixel_code": "TT1", "access_token": "tt-token"},
        "ga4": {"endpoint_url": receiver.url("/ga4"), "measurement_id": "G-TEST", "api_secret": "ga-secret"},
        "google_ads": {"endpoint_url": receiver.url("/gads"), "customer_id": "123-456-7890",
                       "conversion_action_id": "987", "developer_token": "dev", "access_token": "gads-token"},
    }
    for destination, config in configs.items():
        await connect(service, destination, config)
    event = purchase(analytics={"client_id": "555.666", "session_id": 1700000000},
                     click_ids={"gclid": "Cj0-native", "fbp": "fb.1.1.2"})
    event_id = await send(service, event)
    await settled(service, event_id)
    paths = sorted(r["path"].split("/")[1] for r in receiver.received)
    assert paths == ["ga4", "gads", "messaging", "meta", "tiktok"]
    by_path = {r["path"].split("/")[1]: r for r in receiver.received}
    assert by_path["meta"]["json"]["data"][0]["event_name"] == "Purchase"
    assert by_path["meta"]["json"]["data"][0]["user_data"]["fbp"] == "fb.1.1.2"
    assert "fbc" not in by_path["meta"]["json"]["data"][0]["user_data"]  # never made up
    assert by_path["ga4"]["json"]["events"][0]["name"] == "purchase"
    assert by_path["ga4"]["json"]["client_id"] == "555.666"
    assert by_path["gads"]["json"]["conversions"][0]["gclid"] == "Cj0-native"
    assert by_path["messaging"]["headers"]["Authorization"] == "Bearer msg-key"

    receiver.received.clear()
    await reverse(service, event_id)
    found = await settled(service, event_id)
    reversal = {d["destination"]: d for d in found if d["trigger"] == "reversal"}
    assert reversal["meta"]["state"] == reversal["tiktok"]["state"] == "filtered"  # never another Purchase
    assert reversal["google_ads"]["state"] == "filtered"
    assert reversal["ga4"]["state"] == reversal["messaging"]["state"] == "delivered"
    by_path = {r["path"].split("/")[1]: r["json"] for r in receiver.received}
    assert sorted(by_path) == ["ga4", "messaging"]
    refund = by_path["ga4"]["events"][0]
    assert refund["name"] == "refund" and refund["params"]["transaction_id"] == "o-1"
    assert by_path["messaging"]["event"] == "order_refunded"
    assert by_path["messaging"]["properties"]["reason"] == "returned"


async def test_without_an_identity_or_a_gclid_they_are_filtered(service: TestClient, receiver: Receiver) -> None:
    await connect(service, "ga4", {"endpoint_url": receiver.url("/ga4"), "measurement_id": "G-T", "api_secret": "s"})
    await connect(service, "google_ads", {"endpoint_url": receiver.url("/gads"), "customer_id": "1",
                                          "conversion_action_id": "2", "developer_token": "d", "access_token": "t"})
    event_id = await send(service, purchase(click_ids={"gbraid": "only-gbraid"}))
    found = {d["destination"]: d for d in await settled(service, event_id)}
    assert found["ga4"]["state"] == "filtered" and "analytics identity" in found["ga4"]["reason"]
    assert found["google_ads"]["state"] == "filtered" and "gclid" in found["google_ads"]["reason"]
    assert receiver.received == []


async def test_consent_refusals_filter_the_destinations(service: TestClient, receiver: Receiver) -> None:
    response = await service.patch(f"{ADMIN_API}/customers/{CUSTOMER}", headers=ADMIN, json={
        "consent": {"purposes": {"audience_marketing": False}, "vendors": {"messaging": False}}})
    assert response.status == 200, await response.text()
    await connect(service, "meta", {"endpoint_url": receiver.url("/meta"), "pixel_id": "1", "access_token": "t"})
    await connect(service, "messaging", {"endpoint_url": receiver.url("/messaging")})
    await connect(service, "webhook", {"endpoint_url": receiver.url("/hook"), "secret": SECRET})
    event_id = await send(service, purchase())
    found = await settled(service, event_id)
    states = {d["destination"]: (d["state"], d["reason"]) for d in found if d["kind"] in ("event", "event.accepted")}
    assert states["meta"] == ("filtered", "the customer refused audience marketing")
    assert states["messaging"] == ("filtered", "the customer refused messaging in consent")
    assert states["webhook"][0] == "delivered"
