"""The admin endpoints behind the dashboard: the list of links with recent clicks, the link preview (the
resolver's own answer per device) and the filtered list of campaigns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from linksvc.links.devices import classify
from linksvc.links.overview import PREVIEW_DEVICES, TRACKING_ID
from tests.conftest import ADMIN
from tests.factories import A, B, ids

API = f"/api/admin/v1/accounts/{A}"
USER_AGENTS = {name: ua for name, _, ua in PREVIEW_DEVICES}
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"


async def create_link(client: TestClient, **fields: Any) -> dict[str, Any]:
    response = await client.post(f"{API}/links", json=fields, headers=ADMIN)
    assert response.status == 201, await response.text()
    return dict((await response.json())["data"])


async def overview(client: TestClient, query: str = "") -> tuple[int, Any]:
    response = await client.get(f"{API}/links/overview{query}", headers=ADMIN)
    return response.status, await response.json()


async def preview(client: TestClient, body: Any) -> tuple[int, Any]:
    response = await client.post(f"{API}/links/preview", json=body, headers=ADMIN)
    return response.status, await response.json()


async def test_overview_lists_newest_first_with_human_clicks_of_the_week(seeded: TestClient) -> None:
    spring = await create_link(seeded, code="spring-Menu", kind="campaign", campaign_id=ids(A)["campaigns"],
                               destination_url="https://shop.example/Spring?x=1#top")
    await create_link(seeded, code="other", kind="external", destination_url="https://else.example/",
                      disabled=True)
    for ua in (USER_AGENTS["desktop"], USER_AGENTS["android"], GOOGLEBOT):
        response = await seeded.get("/spring-Menu", headers={"User-Agent": ua}, allow_redirects=False)
        assert response.status == 302
    status, page = await overview(seeded)
    assert status == 200 and page["count"] == 3 and (page["limit"], page["offset"]) == (50, 0)
    assert [link["code"] for link in page["data"]] == ["other", "spring-Menu", "lnkaaaa"]
    row = page["data"][1]
    last_clicked = row.pop("last_clicked_at")
    assert last_clicked is not None and last_clicked >= spring["created_at"]
    assert (row.pop("clicks"), row.pop("updated_at")) == (2, spring["updated_at"])  # of all time: people only
    assert row == {
        "id": spring["id"], "code": "spring-Menu", "kind": "campaign", "campaign_id": ids(A)["campaigns"],
        "campaign_name": "Welcome", "destination_url": "https://shop.example/Spring?x=1#top", "disabled": False,
        "expires_at": None, "tags": [], "folder": None, "short_url": "http://127.0.0.1:8080/spring-Menu",
        "clicks_7d": 2,
        "created_at": spring["created_at"],
    }
    assert page["data"][0]["disabled"] is True and page["data"][0]["clicks_7d"] == 0


@pytest.mark.parametrize(("q", "codes"), [
    ("SPRING", ["spring-Menu"]), ("shop.example/p", ["lnkaaaa"]), ("shop.EXAMPLE", ["spring-Menu", "lnkaaaa"]),
    ("  ", ["spring-Menu", "lnkaaaa"]), ("%", []), ("_", []), ("nothing", []),
])
async def test_overview_searches_code_and_destination(seeded: TestClient, q: str, codes: list[str]) -> None:
    await create_link(seeded, code="spring-Menu", kind="external", destination_url="https://shop.example/Spring")
    status, page = await overview(seeded, f"?q={q.replace('%', '%25')}")
    assert status == 200
    assert [link["code"] for link in page["data"]] == codes and page["count"] == len(codes)


async def test_overview_pages_and_keeps_to_its_account(seeded: TestClient) -> None:
    for n in range(4):
        await create_link(seeded, code=f"page-{n}", kind="external", destination_url="https://shop.example/")
    status, page = await overview(seeded, "?limit=2&offset=1")
    assert status == 200 and page["count"] == 5
    assert [link["code"] for link in page["data"]] == ["page-2", "page-1"]
    status, other = await overview(seeded, "?q=lnkbbbb")
    assert other["count"] == 0  # B's link is not in A's list
    response = await seeded.get(f"/api/admin/v1/accounts/{B}/links/overview", headers=ADMIN)
    assert [link["code"] for link in (await response.json())["data"]] == ["lnkbbbb"]


@pytest.mark.parametrize("query", ["?limit=0", "?limit=501", "?offset=-1", "?q=" + "x" * 201, "?limit=x"])
async def test_overview_refuses_bad_paging_naming_the_field(seeded: TestClient, query: str) -> None:
    status, body = await overview(seeded, query)
    assert status == 400 and body["details"]["field"] == query[1:].split("=")[0]


async def test_overview_of_an_unknown_account_is_404(seeded: TestClient) -> None:
    response = await seeded.get("/api/admin/v1/accounts/cccccccc-0000-4000-8000-000000000003/links/overview",
                                headers=ADMIN)
    assert response.status == 404


def test_preview_devices_are_fixture_user_agents_of_their_platform() -> None:
    fixture = json.loads((Path(__file__).resolve().parents[2] / "fixtures" / "user_agents.json").read_text())
    by_name = {entry["name"]: entry for entry in fixture}
    for device, name, user_agent in PREVIEW_DEVICES:
        assert by_name[name]["user_agent"] == user_agent
        assert classify(user_agent).platform == device and not classify(user_agent).bot


APP_LINK = {"kind": "push", "code": "app-link", "campaign_id": ids(A)["campaigns"],
            "destination_url": "https://shop.example/app?a=1&utm_term=old#frag", "deeplink": "demo://home",
            "android": {"package": "com.demo.app"}, "ios": {"app_store_id": "123456"}}


async def test_preview_is_what_the_resolver_answers_each_device(seeded: TestClient) -> None:
    """Saved with the previewed destination, the link answers each device exactly as previewed."""
    status, body = await preview(seeded, {**APP_LINK, "utm": {"utm_source": "news letter", "utm_term": None}})
    assert status == 200
    shown = body["data"]
    assert shown["destination_url"] == "https://shop.example/app?a=1&utm_source=news%20letter#frag"
    assert shown["destination_utm"] == {"utm_source": "news letter"}
    assert shown["defaults"] == {"utm_source": "linksvc", "utm_medium": "push", "utm_campaign": ids(A)["campaigns"]}
    assert shown["short_url"] == "http://127.0.0.1:8080/app-link" and shown["tracking_id"] == TRACKING_ID
    assert [(d["device"], d["answer"]) for d in shown["devices"]] == [
        ("desktop", "destination"), ("android", "intent"), ("ios", "app_store")]
    await create_link(seeded, **{**APP_LINK, "destination_url": shown["destination_url"]})
    for device in shown["devices"]:
        response = await seeded.get("/app-link", headers={"User-Agent": device["user_agent"]}, allow_redirects=False)
        location = response.headers["Location"]
        tracking_id = next(v for k, v in (p.split("=", 1) for p in location.split("?", 1)[1].split("#")[0]
                                           .split("&")) if k == "tracking_id")
        assert location == device["location"].replace(TRACKING_ID, tracking_id), device["device"]
        assert device["utm"] == {"utm_source": "news letter", "utm_medium": "push",
                                 "utm_campaign": ids(A)["campaigns"]}


async def test_preview_explains_each_device(seeded: TestClient) -> None:
    status, body = await preview(seeded, {**APP_LINK, "utm": {"utm_source": "news"}})
    assert status == 200
    explained = {d["device"]: d["explanation"] for d in body["data"]["devices"]}
    routes = {device: next(s["text"] for s in steps if s["step"] == "route") for device, steps in explained.items()}
    assert routes == {
        "desktop": "desktop and unknown platforms get the destination",
        "android": "link has android.package and the browser honours intent URLs -> intent URL; "
                   "fallback: the Play page with the install referrer",
        "ios": "link has ios settings and no fallback -> the App Store page",
    }
    assert explained["android"][0] == {"step": "device",
                                       "text": "Android, chrome (honours intent URLs), not a bot, not in an app",
                                       "platform": "android", "browser": "chrome", "intents": True, "bot": False,
                                       "in_app": None}
    sources = {s["field"]: (s["value"], s["from"]) for s in explained["desktop"] if s["step"] == "utm"}
    assert sources == {"utm_source": ("news", "destination"), "utm_medium": ("push", "defaults"),
                       "utm_campaign": (ids(A)["campaigns"], "defaults"), "utm_term": ("old", "destination"),
                       "utm_content": (None, None)}
    assert explained["ios"][-1] == {"step": "tracking_id", "text": "new (none in the query)"}


async def test_preview_of_a_link_without_code_or_defaults(seeded: TestClient) -> None:
    status, body = await preview(seeded, {"kind": "external", "destination_url": "https://x.example/?y=2"})
    assert status == 200
    assert body["data"]["defaults"] == {} and body["data"]["short_url"].endswith("/NEW_CODE")
    assert body["data"]["devices"][0]["location"] == f"https://x.example/?y=2&tracking_id={TRACKING_ID}"


@pytest.mark.parametrize(("body", "field"), [
    ({"kind": "email", "destination_url": "not a url"}, "destination_url"),
    ({"kind": "email", "destination_url": "http://shop.example/"}, "destination_url"),
    ({"kind": "letter", "destination_url": "https://shop.example/"}, "kind"),
    ({"kind": "email"}, "destination_url"),
    ({"kind": "email", "destination_url": "https://shop.example/", "utm": {"utm_id": "x"}}, "utm.utm_id"),
    ({"kind": "email", "destination_url": "https://shop.example/", "utm": {"utm_source": 5}}, "utm.utm_source"),
    ({"kind": "email", "destination_url": "https://shop.example/", "android": {"package": "nodots"}},
     "android.package"),
    ({"kind": "email", "destination_url": "https://shop.example/", "fallback_url": "ftp://x"}, "fallback_url"),
    ({"kind": "email", "destination_url": "https://shop.example/", "campaign_id": "c1"}, "campaign_id"),
    ({"kind": "email", "destination_url": "https://shop.example/", "code": "a b"}, "code"),
    ({"kind": "email", "destination_url": "https://shop.example/", "id": "x"}, "id"),
    ([], "body"),
])
async def test_preview_refuses_bad_input_naming_the_field(seeded: TestClient, body: Any, field: str) -> None:
    status, answer = await preview(seeded, body)
    assert status == 400, answer
    assert answer["details"]["field"] == field


async def campaigns(client: TestClient, query: str = "") -> tuple[int, Any]:
    response = await client.get(f"{API}/campaigns/overview{query}", headers=ADMIN)
    return response.status, await response.json()


async def test_campaign_overview_filters_by_type_status_and_brand(seeded: TestClient) -> None:
    brand = ids(A)["brands"]
    for name, fields in (("Later", {"type": "COUPONS", "starts_at": "2999-01-01T00:00:00Z"}),
                         ("Over", {"type": "COUPONS", "ends_at": "2001-01-01T00:00:00Z", "brand_id": brand}),
                         ("Held", {"type": "PUNCH_CARDS", "paused": True})):
        response = await seeded.post(f"{API}/campaigns", json={"name": name, **fields}, headers=ADMIN)
        assert response.status == 201, await response.text()
    status, page = await campaigns(seeded)
    assert status == 200 and page["count"] == 4
    assert {c["name"]: c["status"] for c in page["data"]} == {
        "Welcome": "RUNNING", "Later": "SCHEDULED", "Over": "FINISHED", "Held": "PAUSED"}
    for query, names in (("?status=NOT%20FINISHED", {"Welcome", "Later", "Held"}), ("?status=FINISHED", {"Over"}),
                         ("?type=COUPONS", {"Later", "Over"}), (f"?brand_id={brand}", {"Welcome", "Over"}),
                         (f"?type=COUPONS&status=SCHEDULED&brand_id={brand}", set())):
        status, page = await campaigns(seeded, query)
        assert status == 200 and {c["name"] for c in page["data"]} == names and page["count"] == len(names), query
    status, page = await campaigns(seeded, "?limit=1&offset=1")
    assert page["count"] == 4 and len(page["data"]) == 1


@pytest.mark.parametrize(("query", "field"), [("?status=LIVE", "status"), ("?type=GAME", "type"),
                                              ("?brand_id=x", "brand_id"), ("?limit=1000", "limit")])
async def test_campaign_overview_refuses_bad_filters(seeded: TestClient, query: str, field: str) -> None:
    status, body = await campaigns(seeded, query)
    assert status == 400 and body["details"]["field"] == field


async def test_the_new_endpoints_need_the_admin_token(seeded: TestClient) -> None:
    for method, path in (("GET", "/links/overview"), ("POST", "/links/preview"), ("GET", "/campaigns/overview")):
        response = await seeded.request(method, f"{API}{path}", json={} if method == "POST" else None)
        assert response.status == 401, path


APPS_LINK = {"kind": "external", "code": "apps-of-the-account", "destination_url": "https://shop.example/apps",
             "android": {"package": "com.demo.app", "sha256_cert_fingerprints": ["AB:CD"]},
             "ios": {"app_store_id": "123456", "bundle_id": "com.demo.app", "team_id": "ABCDE12345"}}
NO_APPS = {"kind": "external", "code": "deeplink-only", "destination_url": "https://shop.example/menu",
           "deeplink": "demo://menu"}


async def test_a_deeplink_without_apps_previews_the_apps_its_host_lists(seeded: TestClient) -> None:
    """A link with a deeplink and no apps of its own: on a phone, the account's apps that the short link's host
    lists in its association files open it, and the preview says what the app then gets, which is the
    resolver's own answer to the app's request ($app-found=true)."""
    status, body = await preview(seeded, NO_APPS)
    assert status == 200
    assert [d["app"] for d in body["data"]["devices"]] == [None, None, None]  # no app known yet
    await create_link(seeded, **APPS_LINK)
    aasa = await (await seeded.get("/.well-known/apple-app-site-association")).json()
    assert "ABCDE12345.com.demo.app" in aasa["applinks"]["details"][0]["appIDs"]
    status, body = await preview(seeded, NO_APPS)
    assert status == 200
    devices = {d["device"]: d for d in body["data"]["devices"]}
    assert devices["desktop"]["app"] is None
    assert [devices[name]["answer"] for name in ("android", "ios")] == ["destination", "destination"]  # no app
    assert devices["ios"]["app"]["apps"] == ["ABCDE12345.com.demo.app"]
    assert devices["ios"]["app"]["via"] == "universal_link"
    assert devices["android"]["app"]["apps"] == ["com.demo.app"] and devices["android"]["app"]["via"] == "app_link"
    assert "apple-app-site-association" in devices["ios"]["explanation"][-1]["text"]
    await create_link(seeded, **NO_APPS)
    for name in ("android", "ios"):
        app = devices[name]["app"]
        assert app["answer"] == "deeplink" and app["location"].startswith("demo://menu?")
        response = await seeded.get("/deeplink-only?$app-found=true", allow_redirects=False,
                                    headers={"User-Agent": devices[name]["user_agent"]})
        location = response.headers["Location"]
        tracking_id = location.split("tracking_id=")[1].split("&")[0]
        assert location == app["location"].replace(TRACKING_ID, tracking_id)


async def test_an_android_app_without_fingerprints_is_not_opened_and_the_preview_says_why(seeded: TestClient
                                                                                         ) -> None:
    await create_link(seeded, **{**APPS_LINK, "android": {"package": "com.demo.app"}, "ios": None})
    status, body = await preview(seeded, NO_APPS)
    assert status == 200
    android = body["data"]["devices"][1]
    assert android["app"] is None and android["answer"] == "destination"
    assert "com.demo.app is known, but no link names its signing certificate" in android["explanation"][-1]["text"]
    # Another account's apps are none of this one's.
    response = await seeded.post(f"/api/admin/v1/accounts/{B}/links/preview", json=NO_APPS, headers=ADMIN)
    assert [d["app"] for d in (await response.json())["data"]["devices"]] == [None, None, None]
