"""Deferred deep links over HTTP: a click through the resolver, then the app's claim of it.

Android: the resolver sends a browser without intent URLs to the Play page; the app gets the ``referrer``
parameter decoded once (what the Play Install Referrer API returns) and claims with it. iOS: a link with
``ios.landing_page`` answers a page whose button copies ``linksvc:deferred:<tracking_id>``; the app claims
with that text. A click is claimed once, only by its own account.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any
from urllib.parse import unquote

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import CLICKS, DB
from linksvc.links.urls import query_values
from linksvc.seed import load_seed
from storage.clicks import clicks_for_tracking_ids
from tests.conftest import ADMIN, bearer, token_for
from tests.factories import A, B, ids, two_accounts

CLAIM = "/api/storefront/v1/deferred-links/claim"
# Firefox for Android opens no intent URLs: the resolver sends it to the Play page with the install referrer.
FIREFOX_ANDROID = "Mozilla/5.0 (Android 14; Mobile; rv:126.0) Gecko/126.0 Firefox/126.0"
IPHONE_SAFARI = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
                 "Version/17.5 Mobile/15E148 Safari/604.1")
ANDROID_LINK = "aaaaaaaa-0008-4000-8000-000000000010"
IOS_LINK = "aaaaaaaa-0008-4000-8000-000000000011"


def _links() -> dict[str, Any]:
    doc = two_accounts()
    doc["accounts"][0]["links"] += [
        {"id": ANDROID_LINK, "code": "dl-android", "kind": "push", "campaign_id": ids(A)["campaigns"],
         "destination_url": "https://shop.example/app?a=1", "deeplink": "democoffee://product/42",
         "android": {"package": "com.democoffee.app"}},
        {"id": IOS_LINK, "code": "dl-ios", "kind": "external",
         "destination_url": "https://shop.example/ios?utm_source=newsletter&utm_medium=email",
         "deeplink": "democoffee://product/7", "ios": {"app_store_id": "1234567890", "landing_page": True}},
        {"id": "aaaaaaaa-0008-4000-8000-000000000012", "code": "dl-ios-web", "kind": "external",
         "destination_url": "https://shop.example/ios", "fallback_url": "https://shop.example/get-the-app",
         "ios": {"app_store_id": "1234567890", "landing_page": True}},
        {"id": "aaaaaaaa-0008-4000-8000-000000000013", "code": "dl-ios-302", "kind": "external",
         "destination_url": "https://shop.example/ios", "ios": {"app_store_id": "1234567890"}},
    ]
    return doc


@pytest.fixture
async def links(client: TestClient) -> TestClient:
    await load_seed(client.app[DB], _links(), allow_private=True)
    return client


@pytest.fixture
async def a_token(links: TestClient) -> dict[str, str]:
    return bearer(await token_for(links, A, "CLIENT"))


async def click(client: TestClient, path: str, ua: str) -> Any:
    return await client.get(path, headers={"User-Agent": ua}, allow_redirects=False)


def play_referrer(location: str) -> str:
    """The ``referrer`` parameter of a Play URL decoded once: what the Play Install Referrer API hands the app."""
    query = location.partition("?")[2].partition("#")[0]
    raw = next(part.partition("=")[2] for part in query.split("&") if part.startswith("referrer="))
    return unquote(raw)


async def android_click(client: TestClient, path: str = "/dl-android?utm_source=ig&utm_content=summer%20sale") -> str:
    response = await click(client, path, FIREFOX_ANDROID)
    assert response.status == 302
    location = response.headers["Location"]
    assert location.startswith("https://play.google.com/store/apps/details?id=com.democoffee.app&referrer="), location
    return play_referrer(location)


async def claim(client: TestClient, headers: dict[str, str], body: Any) -> tuple[int, Any]:
    response = await client.post(CLAIM, json=body, headers=headers)
    return response.status, await response.json()


async def test_android_install_referrer_claims_the_click_once(links: TestClient, a_token) -> None:
    referrer = await android_click(links)
    fields = query_values("?" + referrer)
    tracking_id = fields["tracking_id"]
    assert re.fullmatch(r"[0-9a-f]{32}", tracking_id)
    status, body = await claim(links, a_token, {"platform": "android", "install_referrer": referrer,
                                                "app_version": "3.1.0"})
    assert status == 200, body
    data = body["data"]
    utm = {"utm_source": "ig", "utm_medium": "push", "utm_campaign": ids(A)["campaigns"], "utm_term": None,
           "utm_content": "summer sale"}
    assert data["utm"] == utm
    assert data["deeplink"] == (f"democoffee://product/42?utm_source=ig&utm_medium=push&utm_campaign="
                                f"{ids(A)['campaigns']}&utm_content=summer%20sale&tracking_id={tracking_id}")
    assert data["destination_url"].startswith("https://shop.example/app?a=1&utm_source=ig&")
    assert (data["tracking_id"], data["link_id"], data["link_code"], data["campaign_id"], data["platform"]) == \
        (tracking_id, ANDROID_LINK, "dl-android", ids(A)["campaigns"], "android")
    assert data["clicked_at"] <= data["claimed_at"]
    again, conflict = await claim(links, a_token, {"platform": "android", "install_referrer": referrer})
    assert again == 409
    assert conflict["error"] == "Already claimed" and conflict["details"]
    installs = await links.get(f"/api/admin/v1/accounts/{A}/links/{ANDROID_LINK}/installs?days=7", headers=ADMIN)
    assert installs.status == 200
    counted = (await installs.json())["data"]
    assert counted["installs"] == 1
    assert counted["by_source"] == {"install_referrer": 1, "pasteboard": 0}
    assert [(day["android"], day["ios"]) for day in counted["by_day"]] == [(1, 0)]


async def test_extra_referrer_fields_are_tolerated(links: TestClient, a_token) -> None:
    referrer = await android_click(links, "/dl-android")
    status, body = await claim(links, a_token, {"platform": "android",
                                                "install_referrer": f"gclid=abc&{referrer}&utm_id=9"})
    assert status == 200, body
    assert body["data"]["utm"]["utm_source"] == "linksvc"  # the push link's default, as the click carried


async def test_another_accounts_token_finds_nothing(links: TestClient, a_token) -> None:
    referrer = await android_click(links)
    b_token = bearer(await token_for(links, B, "SERVER"))
    status, body = await claim(links, b_token, {"platform": "android", "install_referrer": referrer})
    assert status == 404
    assert set(body) == {"error", "details"}
    # the refusal claimed nothing: the click's own account still can
    assert (await claim(links, a_token, {"platform": "android", "install_referrer": referrer}))[0] == 200


async def test_an_unknown_tracking_id_is_404(links: TestClient, a_token) -> None:
    status, body = await claim(links, a_token, {"platform": "ios", "token": "linksvc:deferred:" + "0" * 32})
    assert status == 404 and set(body) == {"error", "details"}


async def test_two_claims_at_once_one_wins(links: TestClient, a_token) -> None:
    referrer = await android_click(links)
    body = {"platform": "android", "install_referrer": referrer}
    answers = await asyncio.gather(*(claim(links, a_token, body) for _ in range(2)))
    assert sorted(status for status, _ in answers) == [200, 409]


def _landing_script(page: str) -> str:
    scripts = re.findall(r"<script nonce=([A-Za-z0-9_-]+)>(.*?)</script>", page, re.S)
    assert len(scripts) == 1, page
    return scripts[0][1]


async def test_ios_landing_page_and_its_token(links: TestClient, a_token) -> None:
    response = await click(links, "/dl-ios?utm_campaign=spring", IPHONE_SAFARI)
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("text/html")
    assert response.headers["Cache-Control"] == "no-store"
    page = await response.text()
    token = re.search(r'"(linksvc:deferred:[0-9a-f]{32})"', page)
    assert token is not None, page
    tracking_id = token.group(1).removeprefix("linksvc:deferred:")
    # the token is in the tap handler's script only, copied by navigator.clipboard.writeText
    script = _landing_script(page)
    assert f'navigator.clipboard.writeText("linksvc:deferred:{tracking_id}")' in script
    assert "addEventListener('click'" in script
    assert "linksvc:deferred" not in page.replace(script, "")
    store = re.search(r'<a id=open class=open href="([^"]+)">Open in the app</a>', page)
    assert store is not None
    assert store.group(1).replace("&amp;", "&") == (
        "https://apps.apple.com/app/id1234567890?utm_source=newsletter&utm_medium=email&utm_campaign=spring"
        f"&tracking_id={tracking_id}")
    web = re.search(r'<a id=web href="([^"]+)">Continue to the website</a>', page)
    assert web is not None and web.group(1).replace("&amp;", "&") == (
        f"https://shop.example/ios?utm_source=newsletter&utm_medium=email&utm_campaign=spring&tracking_id={tracking_id}")
    nonce = re.search(r"<script nonce=([A-Za-z0-9_-]+)>", page)
    assert nonce is not None
    policy = response.headers["Content-Security-Policy"]
    assert f"script-src 'nonce-{nonce.group(1)}'" in policy and "default-src 'none'" in policy
    assert "unsafe-inline" not in policy
    # the click is recorded as a landing answer with the page's tracking_id
    await links.app[CLICKS].flush()
    recorded = await clicks_for_tracking_ids(links.app[DB].reader, A, [tracking_id])
    assert recorded[tracking_id].answer == "landing" and recorded[tracking_id].link_id == IOS_LINK
    status, body = await claim(links, a_token, {"platform": "ios", "token": f"linksvc:deferred:{tracking_id}"})
    assert status == 200, body
    assert body["data"]["deeplink"] == ("democoffee://product/7?utm_source=newsletter&utm_medium=email"
                                        f"&utm_campaign=spring&tracking_id={tracking_id}")
    assert body["data"]["platform"] == "ios"
    again = await claim(links, a_token, {"platform": "ios", "token": f"linksvc:deferred:{tracking_id}"})
    assert again[0] == 409


async def test_landing_page_continues_to_the_fallback_and_escapes(links: TestClient) -> None:
    response = await click(links, '/dl-ios-web?tracking_id=</script><b>"x&utm_source=<img src=x>', IPHONE_SAFARI)
    assert response.status == 200
    page = await response.text()
    assert "<b>" not in page and "<img" not in page
    assert page.count("</script>") == 1
    assert 'href="https://shop.example/get-the-app?utm_source=' in page


async def test_other_ios_links_and_other_platforms_still_redirect(links: TestClient) -> None:
    assert (await click(links, "/dl-ios-302", IPHONE_SAFARI)).status == 302
    assert (await click(links, "/dl-ios", FIREFOX_ANDROID)).status == 302
    bot = await click(links, "/dl-ios", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)")
    assert bot.status == 302


@pytest.mark.parametrize(("body", "field"), [
    ({}, "platform"),
    ({"platform": "windows", "token": "linksvc:deferred:abc"}, "platform"),
    ({"platform": "android"}, "install_referrer"),
    ({"platform": "android", "install_referrer": "utm_source=ig&link=https%3A%2F%2Fx"}, "install_referrer"),
    ({"platform": "android", "install_referrer": 5}, "install_referrer"),
    ({"platform": "android", "install_referrer": "tracking_id=abc", "token": "linksvc:deferred:abc"}, "token"),
    ({"platform": "ios"}, "token"),
    ({"platform": "ios", "token": "0123456789abcdef0123456789abcdef"}, "token"),
    ({"platform": "ios", "token": "linksvc:deferred:"}, "token"),
    ({"platform": "ios", "token": "linksvc:deferred:abc", "app_version": ""}, "app_version"),
    ({"platform": "ios", "token": "linksvc:deferred:abc", "extra": 1}, "extra"),
])
async def test_bad_bodies_are_400_naming_the_field(links: TestClient, a_token, body, field) -> None:
    status, answer = await claim(links, a_token, body)
    assert status == 400, answer
    assert set(answer) == {"error", "details"}
    assert answer["details"]["field"] == field, answer


async def test_malformed_json_and_no_token(links: TestClient, a_token) -> None:
    response = await links.post(CLAIM, data=b"{nope", headers={**a_token, "Content-Type": "application/json"})
    assert response.status == 400 and set(await response.json()) == {"error", "details"}
    response = await links.post(CLAIM, json={"platform": "ios", "token": "linksvc:deferred:abc"})
    assert response.status == 401
