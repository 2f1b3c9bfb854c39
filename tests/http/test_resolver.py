"""GET /{code} through the real application: redirects, pages, and click recording."""

from __future__ import annotations

import re
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import DB
from linksvc.app import create_app
from linksvc.links.urls import query_values
from linksvc.seed import load_seed
from linksvc.settings import Settings
from storage.db import Database, fetch_one
from tests.conftest import ADMIN, service_server
from tests.factories import A, ids, two_accounts

DESKTOP = ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
           "Chrome/124.0.0.0 Safari/537.36")
ANDROID = ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
           "Chrome/124.0.6367.82 Mobile Safari/537.36")
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
CODE = "lnkaaaa"  # the email link of tests.factories: https://shop.example/p?x=1#top


def _links() -> dict[str, Any]:
    doc = two_accounts()
    doc["accounts"][0]["links"] += [
        {"id": "aaaaaaaa-0008-4000-8000-000000000002", "code": "off-link", "kind": "external",
         "destination_url": "https://shop.example/", "disabled": True},
        {"id": "aaaaaaaa-0008-4000-8000-000000000003", "code": "old-link", "kind": "external",
         "destination_url": "https://shop.example/", "expires_at": "2020-01-01T00:00:00Z"},
        {"id": "aaaaaaaa-0008-4000-8000-000000000004", "code": "app-link", "kind": "push",
         "campaign_id": ids(A)["campaigns"], "destination_url": "https://shop.example/app?a=1",
         "deeplink": "democoffee://home", "android": {"package": "com.democoffee.app"}},
    ]
    return doc


@pytest.fixture
async def links(client: TestClient) -> TestClient:
    await load_seed(client.app[DB], _links(), allow_private=True)
    return client


async def click(client: TestClient, path: str, ua: str = DESKTOP, method: str = "GET", **headers: str):
    return await client.request(method, path, headers={"User-Agent": ua, **headers}, allow_redirects=False)


async def test_desktop_click_goes_to_the_destination_with_utm_and_a_tracking_id(links: TestClient) -> None:
    first = await click(links, f"/{CODE}")
    assert first.status == 302
    assert first.headers["Cache-Control"] == "no-store"
    location = first.headers["Location"]
    assert re.fullmatch(r"https://shop\.example/p\?x=1&utm_source=linksvc&utm_medium=email"
                        r"&tracking_id=[0-9a-f]{32}#top", location), location
    second = await click(links, f"/{CODE}?utm_source=ig")
    assert query_values(second.headers["Location"])["utm_source"] == "ig"
    assert query_values(second.headers["Location"])["tracking_id"] != query_values(location)["tracking_id"]


async def test_android_chrome_gets_an_intent_url(links: TestClient) -> None:
    response = await click(links, "/app-link", ANDROID)
    location = response.headers["Location"]
    assert location.startswith("intent://home?utm_source=linksvc&utm_medium=push&utm_campaign="
                               f"{ids(A)['campaigns']}&tracking_id=")
    assert ";package=com.democoffee.app;S.browser_fallback_url=https%3A%2F%2Fplay.google.com" in location


async def test_app_found_answers_json(links: TestClient) -> None:
    response = await click(links, "/app-link?$app-found=true", ANDROID, Accept="application/json")
    assert response.status == 200
    data = (await response.json())["data"]
    assert data["deeplink"].startswith("democoffee://home?utm_source=linksvc")
    assert data["link_id"] == "aaaaaaaa-0008-4000-8000-000000000004"


@pytest.mark.parametrize(("path", "status"), [("/nope-code", 404), ("/off-link", 410), ("/old-link", 410)])
async def test_unknown_disabled_and_expired_are_html_pages(links: TestClient, path: str, status: int) -> None:
    response = await click(links, path)
    assert response.status == status
    assert response.content_type == "text/html"
    assert "<h1>" in await response.text()


async def test_service_paths_are_not_codes(links: TestClient) -> None:
    assert (await links.get("/healthz")).status == 200
    response = await links.get("/api/nothing")
    assert response.status == 404 and response.content_type == "application/json"


async def test_clicks_are_counted_human_and_bot_apart_and_head_records_nothing(links: TestClient) -> None:
    await click(links, f"/{CODE}?utm_source=newsletter")
    await click(links, f"/{CODE}")
    await click(links, f"/{CODE}", GOOGLEBOT)
    head = await click(links, f"/{CODE}", method="HEAD")
    assert head.status == 302
    response = await links.get(f"/api/admin/v1/accounts/{A}/links/{ids(A)['links']}/clicks", headers=ADMIN)
    assert response.status == 200
    data = (await response.json())["data"]
    assert (data["human"], data["bot"]) == (2, 1)
    assert [(d["human"], d["bot"]) for d in data["by_day"]] == [(2, 1)]
    # Googlebot names no operating system: its platform is unknown.
    platforms = {p["platform"]: (p["human"], p["bot"]) for p in data["by_platform"]}
    assert platforms == {"desktop": (2, 0), "unknown": (0, 1)}
    assert {u["utm_source"]: (u["human"], u["bot"]) for u in data["by_utm_source"]} == {
        "newsletter": (1, 0), "linksvc": (1, 1)}


async def test_clicks_of_another_accounts_link_are_404(links: TestClient) -> None:
    other_link = ids("bbbbbbbb-0000-4000-8000-000000000002")["links"]
    response = await links.get(f"/api/admin/v1/accounts/{A}/links/{other_link}/clicks", headers=ADMIN)
    assert response.status == 404


async def test_a_clean_shutdown_writes_every_buffered_click(aiohttp_client, tmp_path) -> None:
    settings = Settings(db_path=str(tmp_path / "c.db"), admin_token="adm-token-0123456789", load_demo=False,
                        click_flush_seconds=3600)  # nothing is written before the shutdown
    client = await aiohttp_client(service_server(create_app(settings)))
    await load_seed(client.app[DB], two_accounts(), allow_private=True)
    for _ in range(25):
        assert (await click(client, f"/{CODE}")).status == 302
    await client.close()
    db = Database(settings.db_path)
    await db.open()
    try:
        row = await fetch_one(db.reader, "SELECT count(*) FROM clicks")
        assert row is not None and row[0] == 25
    finally:
        await db.close()


def _user_agents() -> list[dict[str, Any]]:
    import json
    from pathlib import Path

    return list(json.loads((Path(__file__).parents[2] / "fixtures" / "user_agents.json").read_text()))


def _expected_start(agent: dict[str, Any]) -> str:
    """Where the app link (package, deeplink, no ios settings) sends each kind of visitor."""
    if agent["bot"] or agent["platform"] in ("desktop", "unknown", "ios"):
        return "https://shop.example/app?a=1&utm_source=linksvc&utm_medium=push&utm_campaign="
    if agent["chromium"] and not agent["in_app"]:
        return "intent://home?utm_source=linksvc&utm_medium=push&utm_campaign="
    return "https://play.google.com/store/apps/details?id=com.democoffee.app&referrer=utm_source%3Dlinksvc"


@pytest.mark.parametrize("agent", _user_agents(), ids=lambda a: a["name"])
async def test_every_real_user_agent(links: TestClient, agent: dict[str, Any]) -> None:
    response = await click(links, "/app-link", agent["user_agent"])
    assert response.status == 302
    assert response.headers["Location"].startswith(_expected_start(agent))
