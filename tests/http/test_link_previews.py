"""Link previews over real HTTP: preview fetchers get a page of Open Graph and Twitter card tags, everyone else
the usual 302; the account's defaults fill what a link leaves out (fixtures/preview_fetchers.json holds the
real user agents)."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import CLICKS, DB
from linksvc.seed import load_seed
from storage.db import fetch_all
from tests.conftest import ADMIN
from tests.factories import A, B, two_accounts

FETCHERS: list[dict[str, Any]] = json.loads(
    (Path(__file__).parents[2] / "fixtures" / "preview_fetchers.json").read_text(encoding="utf-8"))
FACEBOOK = FETCHERS[0]["user_agent"]
GOOGLEBOT = next(agent["user_agent"] for agent in FETCHERS if agent["name"] == "Googlebot")
PERSON = next(agent["user_agent"] for agent in FETCHERS if agent["name"].startswith("Chrome on Windows"))
HOSTILE = "\"><script>alert(1)</script><meta property=\"og:title\" content=\"pwned"
LINK_A = "aaaaaaaa-0009-4000-8000-000000000001"


def _doc() -> dict[str, Any]:
    doc = two_accounts()
    doc["accounts"][0]["links"] += [
        {"id": LINK_A, "code": "card-link", "kind": "external", "destination_url": "https://shop.example/spring?x=1",
         "preview": {"title": "Spring menu", "description": "Three new drinks",
                     "image_url": "https://cdn.shop.example/spring.png"}},
        {"id": "aaaaaaaa-0009-4000-8000-000000000002", "code": "bare-link", "kind": "external",
         "destination_url": "https://shop.example/bare"},
        {"id": "aaaaaaaa-0009-4000-8000-000000000003", "code": "half-link", "kind": "external",
         "destination_url": "https://shop.example/half", "preview": {"title": "Only a title"}},
        {"id": "aaaaaaaa-0009-4000-8000-000000000004", "code": "evil-link", "kind": "external",
         "destination_url": "https://shop.example/evil?a=1&b=2",
         "preview": {"title": HOSTILE, "description": "</p><script>x()</script>"}},
    ]
    return doc


@pytest.fixture
async def service(client: TestClient) -> TestClient:
    await load_seed(client.app[DB], _doc(), allow_private=True)
    return client


class Tags(HTMLParser):
    """The page's title, its meta tags (property or name -> content) and its links."""

    def __init__(self) -> None:
        super().__init__()
        self.meta: dict[str, str] = {}
        self.metas: list[dict[str, str | None]] = []
        self.links: list[str] = []
        self.scripts = 0
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "meta":
            self.metas.append(values)
            key = values.get("property") or values.get("name")
            if key is not None and values.get("content") is not None:
                self.meta[key] = values["content"] or ""
        elif tag == "a":
            self.links.append(values.get("href") or "")
        elif tag == "script":
            self.scripts += 1
        self._in_title = tag == "title"

    def handle_endtag(self, tag: str) -> None:
        self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data


async def fetch(client: TestClient, path: str, ua: str, method: str = "GET") -> tuple[int, dict[str, str], str]:
    response = await client.request(method, path, headers={"User-Agent": ua}, allow_redirects=False)
    return response.status, dict(response.headers), await response.text()


def parse(body: str) -> Tags:
    tags = Tags()
    tags.feed(body)
    return tags


async def put_defaults(client: TestClient, account: str, body: Any) -> tuple[int, Any]:
    response = await client.put(f"/api/admin/v1/accounts/{account}/link-preview", json=body, headers=ADMIN)
    return response.status, await response.json()


async def stored_clicks(client: TestClient) -> list[tuple[str, Any, str]]:
    await client.app[CLICKS].flush()
    rows = await fetch_all(client.app[DB].reader, "SELECT answer, bot, user_agent FROM clicks ORDER BY clicked_at")
    return [(row[0], bool(row[1]), row[2]) for row in rows]


@pytest.mark.parametrize("agent", [a for a in FETCHERS if a["preview"]], ids=lambda a: a["name"])
async def test_each_preview_fetcher_gets_the_card(service: TestClient, agent: dict[str, Any]) -> None:
    status, headers, body = await fetch(service, "/card-link", agent["user_agent"])
    assert status == 200, body
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert headers["Cache-Control"] == "no-store"
    page = parse(body)
    base = str(service.make_url("")).rstrip("/")
    assert page.title == "Spring menu"
    assert page.meta["og:title"] == page.meta["twitter:title"] == "Spring menu"
    assert page.meta["og:description"] == page.meta["twitter:description"] == "Three new drinks"
    assert page.meta["og:image"] == page.meta["twitter:image"] == "https://cdn.shop.example/spring.png"
    assert page.meta["og:url"].endswith("/card-link") and page.meta["og:type"] == "website"
    assert page.meta["og:site_name"] == "shop.example"
    assert page.meta["twitter:card"] == "summary_large_image"
    assert base  # the short URL is the service's public one (settings), not the request's
    [link] = page.links
    assert link.startswith("https://shop.example/spring?x=1&tracking_id=")


@pytest.mark.parametrize("agent", [a for a in FETCHERS if not a["preview"]], ids=lambda a: a["name"])
async def test_search_crawlers_and_people_keep_the_302(service: TestClient, agent: dict[str, Any]) -> None:
    status, headers, _ = await fetch(service, "/card-link", agent["user_agent"])
    assert status == 302
    assert headers["Location"].startswith("https://shop.example/spring?x=1&tracking_id=")


async def test_a_preview_is_a_bot_click_answered_preview_and_head_records_nothing(service: TestClient) -> None:
    assert (await fetch(service, "/card-link", FACEBOOK))[0] == 200
    status, headers, body = await fetch(service, "/card-link", FACEBOOK, method="HEAD")
    assert (status, headers["Content-Type"], body) == (200, "text/html; charset=utf-8", "")
    assert (await fetch(service, "/card-link", GOOGLEBOT))[0] == 302
    assert (await fetch(service, "/card-link", PERSON))[0] == 302
    clicks = await stored_clicks(service)
    assert [(answer, bot) for answer, bot, _ in clicks] == [
        ("preview", True), ("destination", True), ("destination", False)]
    response = await service.get(f"/api/admin/v1/accounts/{A}/links/{LINK_A}/clicks", headers=ADMIN)
    data = (await response.json())["data"]
    assert (data["human"], data["bot"]) == (1, 2)


async def test_without_anything_to_show_the_fetcher_follows_the_302(service: TestClient) -> None:
    status, headers, _ = await fetch(service, "/bare-link", FACEBOOK)
    assert status == 302 and headers["Location"].startswith("https://shop.example/bare?tracking_id=")
    assert [(answer, bot) for answer, bot, _ in await stored_clicks(service)] == [("destination", True)]


async def test_account_defaults_fill_what_the_link_leaves_out_and_link_values_win(service: TestClient) -> None:
    status, body = await put_defaults(service, A, {
        "title": "Demo Coffee", "description": "Coffee, roasted daily", "image_url": "https://cdn.shop.example/logo.png",
        "site_name": "Demo Coffee Co."})
    assert status == 200, body
    assert body["data"]["title"] == "Demo Coffee" and body["data"]["updated_at"]
    half = parse((await fetch(service, "/half-link", FACEBOOK))[2]).meta
    assert half["og:title"] == "Only a title"  # the link's own
    assert half["og:description"] == "Coffee, roasted daily"  # the account's
    assert half["og:image"] == "https://cdn.shop.example/logo.png"
    assert half["og:site_name"] == "Demo Coffee Co."
    card = parse((await fetch(service, "/card-link", FACEBOOK))[2]).meta
    assert (card["og:title"], card["og:image"]) == ("Spring menu", "https://cdn.shop.example/spring.png")
    # a link with no preview fields now gets the page, from the defaults alone
    status, _, page = await fetch(service, "/bare-link", FACEBOOK)
    assert status == 200 and parse(page).title == "Demo Coffee"
    # defaults without an image: a summary card; without a title: the destination's host
    assert (await put_defaults(service, A, {"description": "Only words"}))[0] == 200
    bare = parse((await fetch(service, "/bare-link", FACEBOOK))[2])
    assert bare.title == "shop.example" and bare.meta["twitter:card"] == "summary"
    assert "og:image" not in bare.meta and "twitter:image" not in bare.meta


async def test_hostile_text_stays_text(service: TestClient) -> None:
    status, _, body = await fetch(service, "/evil-link", FACEBOOK)
    assert status == 200
    page = parse(body)
    assert page.scripts == 0
    assert page.title == HOSTILE
    assert page.meta["og:title"] == page.meta["twitter:title"] == HOSTILE
    assert page.meta["og:description"] == "</p><script>x()</script>"
    assert [m.get("property") for m in page.metas].count("og:title") == 1
    assert page.links[0].startswith("https://shop.example/evil?a=1&b=2&tracking_id=")


async def test_defaults_endpoint_reads_nulls_until_set(service: TestClient) -> None:
    response = await service.get(f"/api/admin/v1/accounts/{A}/link-preview", headers=ADMIN)
    assert response.status == 200
    assert (await response.json())["data"] == {"account_id": A, "title": None, "description": None,
                                               "image_url": None, "site_name": None, "updated_at": None}


@pytest.mark.parametrize(("body", "field"), [
    ({"title": "x" * 201}, "title"),
    ({"description": "x" * 501}, "description"),
    ({"image_url": "http://cdn.shop.example/a.png"}, "image_url"),
    ({"image_url": "javascript:alert(1)"}, "image_url"),
    ({"site_name": ""}, "site_name"),
    ({"title": "a\x00b"}, "title"),
    ({"colour": "red"}, "colour"),
])
async def test_defaults_validation_errors_name_the_field(service: TestClient, body: dict[str, Any],
                                                          field: str) -> None:
    status, answer = await put_defaults(service, A, body)
    assert status == 400, answer
    assert set(answer) == {"error", "details"}
    assert field in json.dumps(answer["details"])


async def test_a_link_preview_field_is_checked_like_other_link_urls(service: TestClient) -> None:
    response = await service.post(f"/api/admin/v1/accounts/{A}/links", headers=ADMIN, json={
        "kind": "external", "destination_url": "https://shop.example/", "preview": {"image_url": "http://x.example/i"}})
    assert response.status == 400
    answer = await response.json()
    assert set(answer) == {"error", "details"} and "preview.image_url" in json.dumps(answer["details"])
    response = await service.post(f"/api/admin/v1/accounts/{A}/links", headers=ADMIN, json={
        "kind": "external", "destination_url": "https://shop.example/", "preview": {"title": "t" * 201}})
    assert response.status == 400


async def test_defaults_are_per_account(service: TestClient) -> None:
    assert (await put_defaults(service, A, {"title": "Account A"}))[0] == 200
    response = await service.get(f"/api/admin/v1/accounts/{B}/link-preview", headers=ADMIN)
    assert (await response.json())["data"]["title"] is None
    # account B's link gets nothing from A's defaults: still the 302
    assert (await fetch(service, "/lnkbbbb", FACEBOOK))[0] == 302
    assert (await fetch(service, "/lnkaaaa", FACEBOOK))[0] == 200
    missing = "cccccccc-0000-4000-8000-000000000003"
    assert (await service.get(f"/api/admin/v1/accounts/{missing}/link-preview", headers=ADMIN)).status == 404
    status, answer = await put_defaults(service, missing, {"title": "x"})
    assert status == 404 and set(answer) == {"error", "details"}
    assert (await service.get(f"/api/admin/v1/accounts/{A}/link-preview")).status == 401


async def test_the_conversion_report_counts_a_preview_as_a_bot_in_no_route(service: TestClient) -> None:
    assert (await fetch(service, "/card-link", FACEBOOK))[0] == 200
    assert (await fetch(service, "/card-link", PERSON))[0] == 302
    await service.app[CLICKS].flush()
    response = await service.get(f"/api/admin/v1/accounts/{A}/reports/conversions?group_by=link", headers=ADMIN)
    assert response.status == 200
    [row] = [r for r in (await response.json())["data"]["rows"] if r["key"]["link"] == LINK_A]
    assert row["clicks"] == {"human": 1, "bot": 1}
    assert row["routes"] == {"web": 1, "app": 0, "store": 0}
