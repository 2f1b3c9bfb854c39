"""Security properties a user (or an attacker) can observe: no open redirect, no parameter injection
through the click's query (nor into an Android intent URL), webhook secrets rotated without losing
deliveries."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

import pytest
from aiohttp.test_utils import TestClient
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from linksvc.links.link_urls import URL_TEXT
from linksvc.links.urls import query_values
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


# Click queries that try to add extras to, or end, the intent URL's #Intent;...;end section, or to break the
# Location header: encoded, raw where a URL allows it, and encoded twice.
HOSTILE_VALUES = [
    "?tracking_id=%23Intent%3BS.evil%3D1%3Bend",
    "?tracking_id=;end;S.evil=1;end",
    "?utm_source=%3Bend&utm_term=%23Intent%3Bscheme%3Djavascript%3Bend",
    "?utm_campaign=%2523Intent%253BS.evil%253D1%253Bend",
    "?tracking_id=a%0d%0aSet-Cookie:%20x=1&utm_content=%00%7f%c2%85%e2%80%a8",
    "?utm_medium=%20#Intent;S.evil=1;end",
    "?%24app-found=true&tracking_id=%23Intent%3BS.evil%3D1%3Bend%0d%0a",
]


@pytest.mark.parametrize("query", HOSTILE_VALUES)
@pytest.mark.parametrize("ua", [DESKTOP, ANDROID])
async def test_hostile_query_values_cannot_break_the_intent_url_or_the_location(links: TestClient,  # noqa: F811
                                                                                query: str, ua: str) -> None:
    response = await click(links, f"/app-link{query}", ua)
    assert response.status == 302
    assert "Set-Cookie" not in response.headers
    location = response.headers["Location"]
    assert URL_TEXT.fullmatch(location), location
    if location.startswith("intent:"):
        assert location.lower().count("#intent;") == 1 and location.count("#") == 1
        data, _, section = location.partition("#Intent;")
        assert section.endswith(";end")
        extras = [part.split("=", 1)[0] for part in section.removesuffix(";end").split(";")]
        assert extras == ["scheme", "package", "S.browser_fallback_url"]
        assert section.startswith("scheme=democoffee;package=com.democoffee.app;")
        sent = query_values(query.split("#")[0]).get("tracking_id", "").strip()
        if sent:
            assert query_values(data)["tracking_id"] == sent  # one value, whatever it holds
    else:
        assert location.count("#") == 0  # the deeplink and destination of app-link have no fragment


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
    assert first["headers"]["webhook-id"] == retry["headers"]["webhook-id"] == delivery["message_id"]
    Webhook(SECRET).verify(first["body"], first["headers"])
    # The retry is signed with the new secret, and only with it.
    Webhook(rotated).verify(retry["body"], retry["headers"])
    with pytest.raises(WebhookVerificationError):
        Webhook(SECRET).verify(retry["body"], retry["headers"])
