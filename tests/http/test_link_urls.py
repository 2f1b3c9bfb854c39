"""A link's URLs through the real application: every way of saving a link (create, PUT, PATCH, the preview)
refuses each kind of bad URL with 400 naming the field, and a link stored before these rules (written into
the store directly) is answered with a clean redirect or a small 502 page, never an empty reply or a 500."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import DB
from linksvc.clock import iso, utcnow
from linksvc.jsoncodec import dumps
from linksvc.links.link_urls import URL_TEXT
from storage import documents
from storage.db import dialect
from tests.conftest import ADMIN
from tests.factories import A, ids
from tests.http.test_resolver import (
    ANDROID,
    DESKTOP,
    click,
    links,  # noqa: F401  (fixture)
)

API = f"/api/admin/v1/accounts/{A}/links"
LINK_ID = ids(A)["links"]
APP_LINK_ID = "aaaaaaaa-0008-4000-8000-000000000004"  # app-link of tests.http.test_resolver
FIREFOX_ANDROID = "Mozilla/5.0 (Android 14; Mobile; rv:126.0) Gecko/126.0 Firefox/126.0"
GOOD: dict[str, Any] = {"kind": "push", "destination_url": "https://shop.example/p?x=1#top"}

# (changes to a good link, the field details.field must name)
BAD_URLS: list[tuple[dict[str, Any], str]] = [
    ({"destination_url": "https://shop.example/a b"}, "destination_url"),
    ({"destination_url": "https://shop.example/\r\nSet-Cookie: a=1"}, "destination_url"),
    ({"destination_url": "https://shop.example/\x00"}, "destination_url"),
    ({"destination_url": "javascript:alert(1)"}, "destination_url"),
    ({"destination_url": "https://user:pw@shop.example/"}, "destination_url"),
    ({"fallback_url": "https://shop.example/\x1b"}, "fallback_url"),
    ({"fallback_url": "data:text/html,x"}, "fallback_url"),
    ({"deeplink": "JAVASCRIPT:alert(1)"}, "deeplink"),
    ({"deeplink": "java\tscript:alert(1)"}, "deeplink"),
    ({"deeplink": " javascript:alert(1)"}, "deeplink"),
    ({"deeplink": "data:text/html;base64,PHNjcmlwdD4="}, "deeplink"),
    ({"deeplink": "vbscript:x"}, "deeplink"),
    ({"deeplink": "file:///etc/passwd"}, "deeplink"),
    ({"deeplink": "intent://x#Intent;scheme=https;S.evil=1;end"}, "deeplink"),
    ({"deeplink": "democoffee://x#Intent;S.evil=1;end"}, "deeplink"),
    ({"deeplink": "democoffee://x#a;end"}, "deeplink"),
    ({"deeplink": "http://shop.example/app"}, "deeplink"),
    ({"android": {"package": "com.demo.app", "fallback_url": "https://shop.example/<x>"}}, "android.fallback_url"),
    ({"android": {"package": "com.demo.app;S.x=1"}}, "android.package"),
    ({"ios": {"fallback_url": "https://shop.example/caf\u00e9"}}, "ios.fallback_url"),
    ({"ios": {"bundle_id": "com.demo app"}}, "ios.bundle_id"),
]


async def refusals(client: TestClient, method: str, url: str, bodies: list[dict[str, Any]]) -> list[Any]:
    found = []
    for body in bodies:
        response = await client.request(method, url, json=body, headers=ADMIN)
        payload = await response.json()
        details = payload.get("details") if isinstance(payload, dict) else None
        found.append((response.status, sorted(payload),
                      details.get("field") if isinstance(details, dict) else details,
                      bool(details.get("message")) if isinstance(details, dict) else False))
    return found


def expected() -> list[Any]:
    return [(400, ["details", "error"], field, True) for _, field in BAD_URLS]


async def test_create_refuses_each_bad_url_naming_the_field(seeded: TestClient) -> None:
    assert await refusals(seeded, "POST", API, [{**GOOD, **changes} for changes, _ in BAD_URLS]) == expected()


async def test_put_refuses_each_bad_url_and_keeps_the_link(seeded: TestClient) -> None:
    before = (await (await seeded.get(f"{API}/{LINK_ID}", headers=ADMIN)).json())["data"]
    bodies = [{**GOOD, "code": "lnkaaaa", **changes} for changes, _ in BAD_URLS]
    assert await refusals(seeded, "PUT", f"{API}/{LINK_ID}", bodies) == expected()
    after = (await (await seeded.get(f"{API}/{LINK_ID}", headers=ADMIN)).json())["data"]
    assert after == before


async def test_patch_refuses_each_bad_url_naming_the_field(seeded: TestClient) -> None:
    assert await refusals(seeded, "PATCH", f"{API}/{LINK_ID}", [changes for changes, _ in BAD_URLS]) == expected()


async def test_preview_refuses_each_bad_url_naming_the_field(seeded: TestClient) -> None:
    bodies = [{**GOOD, **changes} for changes, _ in BAD_URLS]
    assert await refusals(seeded, "POST", f"{API}/preview", bodies) == expected()


async def test_good_urls_of_every_kind_are_saved_as_given(seeded: TestClient) -> None:
    body = {**GOOD, "destination_url": "https://shop.example/p%0D%0A?q=%23Intent%3B#top",
            "deeplink": "democoffee://menu/item?id=5#reviews", "fallback_url": "http://shop.example/f",
            "android": {"package": "com.demo.app", "fallback_url": "https://shop.example/get-the-app",
                        "sha256_cert_fingerprints": []},
            "ios": {"app_store_id": "123", "bundle_id": "com.demo.app", "team_id": "ABCDE12345",
                    "fallback_url": "https://shop.example/ios", "landing_page": False}}
    response = await seeded.post(API, json=body, headers=ADMIN)
    assert response.status == 201, await response.text()
    saved = (await response.json())["data"]
    assert {key: saved[key] for key in body} == body
    response = await seeded.post(f"{API}/preview", json=body, headers=ADMIN)
    assert response.status == 200
    for device in (await response.json())["data"]["devices"]:
        assert URL_TEXT.fullmatch(device["location"]), device


async def test_a_hostile_utm_edit_stays_encoded_in_the_destination(seeded: TestClient) -> None:
    response = await seeded.patch(f"{API}/{LINK_ID}/utm", json={"utm_source": "a#Intent;S.x=1;end\r\n\x01 é"},
                                  headers=ADMIN)
    assert response.status == 200, await response.text()
    destination = (await response.json())["data"]["destination_url"]
    assert destination == ("https://shop.example/p?x=1&utm_source=a%23Intent%3BS.x%3D1%3Bend%0D%0A%01%20%C3%A9#top")
    # U+0000 is refused in any text, on either store (docs/decisions.md, "Where the two stores differ").
    response = await seeded.patch(f"{API}/{LINK_ID}/utm", json={"utm_source": "a\x00b"}, headers=ADMIN)
    assert response.status == 400
    assert (await response.json())["details"]["issues"] == [
        {"path": "utm_source", "message": "may not contain the character U+0000", "type": "format"}]


async def store_unchecked(client: TestClient, link_id: str, changes: dict[str, Any]) -> None:
    """Writes a link's body straight into the store, as a link saved before the URL rules would be."""
    db = client.app[DB]
    async with db.transaction() as tx:
        row = await documents.get(tx, "links", A, link_id)
        assert row is not None
        body = {**row.body, **changes}
        await documents.update(tx, "links", A, link_id, dumps(body), {}, iso(utcnow()))


async def human_clicks(client: TestClient, link_id: str) -> int:
    response = await client.get(f"{API}/{link_id}/clicks", headers=ADMIN)
    return int((await response.json())["data"]["human"])


@pytest.mark.parametrize("destination", [
    "https://shop.example/a\r\nSet-Cookie: x=1", "https://shop.example/\x00", "https://shop.example/a b",
    "https://shop.example/caf\u00e9", "javascript:alert(1)", "http://shop.example/", "",
])
async def test_a_stored_bad_destination_answers_a_502_page(links: TestClient, destination: str,  # noqa: F811
                                                           caplog: pytest.LogCaptureFixture) -> None:
    if "\x00" in destination and dialect(links.app[DB].reader) == "postgresql":
        pytest.skip("PostgreSQL's jsonb cannot hold U+0000: no such link can be stored")
    await store_unchecked(links, LINK_ID, {"destination_url": destination})
    with caplog.at_level(logging.WARNING, logger="linksvc.resolver"):
        for method, ua in (("GET", DESKTOP), ("GET", ANDROID), ("HEAD", DESKTOP)):
            response = await click(links, "/lnkaaaa", ua, method=method)
            assert response.status == 502, method
            assert response.content_type == "text/html"
            assert response.headers["Cache-Control"] == "no-store"
            assert "Location" not in response.headers and "Set-Cookie" not in response.headers
        assert "Link cannot be opened" in await (await click(links, "/lnkaaaa")).text()
    assert await human_clicks(links, LINK_ID) == 0
    warnings = [r.getMessage() for r in caplog.records if r.name == "linksvc.resolver"]
    assert warnings and all(LINK_ID in w and "destination_url:" in w for w in warnings)
    assert not any("\r" in w or "\x00" in w for w in warnings)


async def test_a_stored_bad_deeplink_is_skipped(links: TestClient) -> None:  # noqa: F811
    await store_unchecked(links, APP_LINK_ID, {"deeplink": "javascript:alert(1)//\r\n"})
    response = await click(links, "/app-link", ANDROID)
    location = response.headers["Location"]
    assert response.status == 302 and location.startswith("intent://shop.example/app?a=1&")  # the destination
    assert ";scheme=https;package=com.democoffee.app;" in location
    found = await click(links, "/app-link?$app-found=true", ANDROID)
    assert found.status == 302 and found.headers["Location"].startswith("https://shop.example/app?a=1&")
    answer = await click(links, "/app-link?$app-found=true", ANDROID, Accept="application/json")
    assert (await answer.json())["data"]["deeplink"] is None
    assert await human_clicks(links, APP_LINK_ID) == 3


async def test_a_stored_bad_fallback_is_skipped(links: TestClient) -> None:  # noqa: F811
    await store_unchecked(links, APP_LINK_ID, {
        "android": {"package": "com.democoffee.app", "fallback_url": "https://x.example/\r\n"},
        "fallback_url": "https://shop.example/fallback"})
    response = await click(links, "/app-link", FIREFOX_ANDROID)
    assert response.status == 302
    assert response.headers["Location"].startswith("https://shop.example/fallback?")
