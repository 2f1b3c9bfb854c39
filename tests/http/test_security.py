"""Security properties a user (or an attacker) can observe: no open redirect, no parameter injection
through the click's query, webhook secrets rotated without losing deliveries."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

import pytest
from aiohttp.test_utils import TestClient
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from linksvc.resolver.urls import query_values
from tests.conftest import ADMIN
from tests.http.conftest import Receiver
from tests.http.test_forwarding import ADMIN_API, SECRET, connect, send, settled
from tests.http.test_resolver import (
    ANDROID,
    CODE,
    DESKTOP,
    click,
    links,  # noqa: F401  (fixture)
)

HOSTILE = [
    "?url=https://evil.example/",
    "?destination_url=https://evil.example/&fallback_url=https://evil.example/&deeplink=evil://x",
    "?redirect=%2F%2Fevil.example&next=https:%2F%2Fevil.example",
    "?%24app-found=true&deeplink=https://evil.example/",
    "?tracking_id=x%26redirect%3Dhttps://evil.example%23frag",
]


@pytest.mark.parametrize("query", HOSTILE)
@pytest.mark.parametrize("ua", [DESKTOP, ANDROID])
async def test_the_resolver_never_redirects_to_a_url_from_the_request(links: TestClient,  # noqa: F811
                                                                      query: str, ua: str) -> None:
    response = await click(links, f"/{CODE}{query}", ua)
    assert response.status == 302
    location = response.headers["Location"]
    assert urlsplit(location).hostname == "shop.example"
    assert "evil.example" not in location.split("#")[0].replace("%3A%2F%2Fevil.example", "")


async def test_a_hostile_tracking_id_stays_one_encoded_value(links: TestClient) -> None:  # noqa: F811
    response = await click(links, f"/{CODE}?tracking_id=x%26utm_source%3Devil%23top")
    location = response.headers["Location"]
    values = query_values(location)
    assert values["tracking_id"] == "x&utm_source=evil#top"  # one value, encoded, not new parameters
    assert values["utm_source"] == "linksvc"
    assert location.endswith("#top") and location.count("#") == 1


async def test_a_rotated_webhook_secret_signs_the_deliveries_still_waiting(service: TestClient,  # noqa: F811
                                                                          receiver: Receiver) -> None:  # noqa: F811
    connection = await connect(service, "webhook", {"endpoint_url": receiver.url(), "secret": SECRET},
                               event_types=["page_view"])
    receiver.script = [(503, {"Retry-After": "1"})]  # the first try fails; the retry waits a second
    event_id = await send(service, {"type": "page_view"})  # one delivery: event.accepted
    await asyncio.sleep(0.3)
    rotated = "whsec_" + "cm90YXRlZC1zZWNyZXQtZm9yLXRlc3Rz"
    response = await service.patch(f"{ADMIN_API}/connections/{connection}",
                                   json={"config": {"endpoint_url": receiver.url(), "secret": rotated}}, headers=ADMIN)
    assert response.status == 200, await response.text()
    [delivery] = await settled(service, event_id)
    assert (delivery["state"], delivery["tries"]) == ("delivered", 2)
    first, retry = receiver.received
    assert first["headers"]["webhook-id"] == retry["headers"]["webhook-id"] == delivery["id"]
    Webhook(SECRET).verify(first["body"], first["headers"])
    # The retry is signed with the new secret, and only with it.
    Webhook(rotated).verify(retry["body"], retry["headers"])
    with pytest.raises(WebhookVerificationError):
        Webhook(SECRET).verify(retry["body"], retry["headers"])
