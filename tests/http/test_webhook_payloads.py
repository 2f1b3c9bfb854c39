"""The admin document's ``webhooks`` describe what a receiver really gets: a purchase and its reversal send every
kind to a real receiver on 127.0.0.1, and each body matches its model (no field more, none missing)."""

from __future__ import annotations

from aiohttp.test_utils import TestClient
from standardwebhooks.webhooks import Webhook

from api.forwarding.webhooks import WEBHOOKS
from tests.http.conftest import Receiver
from tests.http.test_forwarding import SECRET, connect, purchase, reverse, send, settled


async def test_every_webhook_kind_matches_its_documented_body(service: TestClient, receiver: Receiver) -> None:
    await connect(service, "webhook", {"endpoint_url": receiver.url(), "secret": SECRET})
    event_id = await send(service, purchase())
    await settled(service, event_id)
    await reverse(service, event_id)
    await settled(service, event_id)
    kinds = {request["json"]["type"] for request in receiver.received}
    assert kinds == set(WEBHOOKS) - {"link.clicked"}  # clicks' own: tests/http/test_click_webhooks.py
    for request in receiver.received:
        WEBHOOKS[request["json"]["type"]].model_validate(request["json"])  # refuses a field more or missing
        Webhook(SECRET).verify(request["body"], request["headers"])  # the documented headers sign it

    document = await (await service.get("/api/admin/v1/openapi.json")).json()
    assert sorted(document["webhooks"]) == sorted(WEBHOOKS)
    headers = {p["name"] for p in document["webhooks"]["event.accepted"]["post"]["parameters"]}
    assert headers == {"webhook-id", "webhook-timestamp", "webhook-signature"}
