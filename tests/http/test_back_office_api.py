"""The admin endpoints the back office's pages need beyond the documents: every failed delivery of a connection
retried at once, a webhook connection's test, and the customer search. On both stores (the suite's store follows
LINKSVC_TEST_DATABASE_URL)."""

from __future__ import annotations

from typing import Any

from aiohttp.test_utils import TestClient
from standardwebhooks.webhooks import Webhook

from tests.conftest import ADMIN
from tests.factories import A, B
from tests.http.conftest import Receiver
from tests.http.test_forwarding import connect, send, settled

ADMIN_API = f"/api/admin/v1/accounts/{A}"
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


async def test_retry_failed_sends_every_failed_delivery_of_the_connection_again(service: TestClient,
                                                                              receiver: Receiver) -> None:
    connection = await connect(service, "webhook", {"endpoint_url": receiver.url(), "secret": SECRET},
                               event_types=["page_view"])
    receiver.script = [(401, {}), (401, {})]  # refused: a person must fix the connection first
    events = [await send(service, {"type": "page_view", "customer_id": "cust-aaaa"}) for _ in range(2)]
    for event_id in events:
        [failed] = await settled(service, event_id)
        assert failed["state"] == "failed"

    response = await service.post(f"{ADMIN_API}/connections/{connection}/deliveries/retry-failed", headers=ADMIN)
    assert response.status == 200, await response.text()
    assert (await response.json())["data"] == {"retried": 2}
    for event_id in events:
        [again] = await settled(service, event_id)
        assert (again["state"], again["tries"]) == ("delivered", 2)
    # Nothing failed is left: a second call retries none.
    response = await service.post(f"{ADMIN_API}/connections/{connection}/deliveries/retry-failed", headers=ADMIN)
    assert (await response.json())["data"] == {"retried": 0}


async def test_retry_failed_of_a_connection_not_of_the_account_is_404(service: TestClient) -> None:
    other = await service.get(f"/api/admin/v1/accounts/{B}/connections", headers=ADMIN)
    assert other.status == 200
    for connection in ["nothing-here", *(c["id"] for c in (await other.json())["data"])]:
        response = await service.post(f"{ADMIN_API}/connections/{connection}/deliveries/retry-failed",
                                      headers=ADMIN)
        assert response.status == 404
        assert set(await response.json()) == {"error", "details"}


async def found(client: TestClient, q: str, account: str = A) -> list[dict[str, Any]]:
    response = await client.get(f"/api/admin/v1/accounts/{account}/customer-search", params={"q": q},
                                headers=ADMIN)
    assert response.status == 200, await response.text()
    return list((await response.json())["data"])


async def test_customer_search_by_name_email_phone_and_document(service: TestClient) -> None:
    for customer in ({"id": "cust-zoe", "name": "Zoë Martínez", "email": "Zoe.M@Example.com",
                      "phone": "+57 311 555 0101", "document_number": "CC9001"},
                     {"id": "cust-mar", "name": "Mario 100% Rossi", "email": "mario@example.com"}):
        response = await service.post(f"{ADMIN_API}/customers", json=customer, headers=ADMIN)
        assert response.status == 201, await response.text()
    assert [c["id"] for c in await found(service, "zoë")] == ["cust-zoe"]
    assert [c["id"] for c in await found(service, "mar")] == ["cust-mar", "cust-zoe"]  # by name
    assert [c["id"] for c in await found(service, "zoe.m@example")] == ["cust-zoe"]
    assert [c["id"] for c in await found(service, "311-555")] == ["cust-zoe"]
    assert [c["id"] for c in await found(service, "CC9001")] == ["cust-zoe"]
    assert [c["id"] for c in await found(service, "100%")] == ["cust-mar"]  # a wildcard is a character
    assert await found(service, "1%") == []
    assert await found(service, "_") == []
    [ana] = await found(service, "ana")
    assert (ana["id"], ana["name"], ana["document_number"], ana["phone"]) == ("cust-aaaa", "Ana", "CC100",
                                                                              "+57 300 123 4567")
    assert set(ana) == {"id", "name", "email", "phone", "document_type", "document_number", "external_id", "tier_id"}
    # Another account's customers are never found.
    assert await found(service, "zoë", B) == []
    assert [c["id"] for c in await found(service, "ana", B)] == [f"cust-{B[:4]}"]


async def test_customer_search_refuses_an_empty_or_odd_query(service: TestClient) -> None:
    for params in ({}, {"q": ""}, {"q": "   "}, {"q": "x" * 201}, {"q": "ana", "limit": "0"}, {"q": "a\x00b"}):
        response = await service.get(f"{ADMIN_API}/customer-search", params=params, headers=ADMIN)
        assert response.status in (200, 400), (params, response.status)
        body = await response.json()
        if response.status == 400:
            assert set(body) == {"error", "details"}
        else:
            assert body["data"] == []


async def test_a_webhook_connection_test_is_signed_and_says_what_the_receiver_answered(
        service: TestClient, receiver: Receiver) -> None:
    connection = await connect(service, "webhook", {"endpoint_url": receiver.url(), "secret": SECRET})
    response = await service.post(f"{ADMIN_API}/connections/{connection}/test", headers=ADMIN)
    assert response.status == 200, await response.text()
    assert (await response.json())["data"] == {"outcome": "delivered", "status": 200, "message": None}
    [sent] = receiver.received
    Webhook(SECRET).verify(sent["body"], sent["headers"])
    assert sent["json"]["type"] == "connection.test" and sent["json"]["data"] == {"connection_id": connection}
    receiver.script = [(401, {})]
    response = await service.post(f"{ADMIN_API}/connections/{connection}/test", headers=ADMIN)
    assert (await response.json())["data"]["outcome"] == "failed"
