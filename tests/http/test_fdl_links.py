"""Firebase Dynamic Links over HTTP on a live custom domain: long links of the FDL form answered on every platform
as Firebase's parameter table describes (intent URL, Play page with the install referrer, ifl, App Store with
its analytics tokens, ofl, the preview of st/sd/si), their clicks recorded against the domain's long-links link;
and the importer of an FDL export creating links at their original short paths."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from aiohttp.test_utils import TestClient

from linksvc.links.fdl_service import long_links_code
from linksvc.settings import Settings
from tests.agents import AGENTS
from tests.conftest import ADMIN
from tests.factories import A, B
from tests.http.test_domains import added, start, verify

ADMIN_API = "/api/admin/v1"
HOST = "go.shop.example"
UA = {**AGENTS, "desktop": AGENTS["safari_mac"]}
FULL = ("/?link=https%3A%2F%2Fshop.example%2Foffer%3Fid%3D7&apn=com.shop.app&amv=42"
        "&afl=https%3A%2F%2Fshop.example%2Fandroid&ibi=com.shop.ios&isi=1234567&ifl=https%3A%2F%2Fshop.example%2Fios"
        "&ofl=https%3A%2F%2Fshop.example%2Fdesktop&utm_source=newsletter&utm_medium=email&utm_campaign=bf"
        "&st=Black+Friday&sd=Half+price&si=https%3A%2F%2Fshop.example%2Fog.png&efr=1")
BARE = "/?link=https%3A%2F%2Fshop.example%2Fwelcome&apn=com.shop.app&isi=1234567&ibi=com.shop.ios&ct=bf-mail&pt=99" \
       "&mt=8&utm_source=qr"


@pytest.fixture
async def service(aiohttp_client: Any, settings: Settings) -> TestClient:
    client = await start(aiohttp_client, settings)
    response = await verify(client, await added(client, HOST))
    assert response.status == 200, await response.text()
    return client


async def click(client: TestClient, path: str, agent: str, host: str = HOST) -> Any:
    return await client.get(path, headers={"Host": host, "User-Agent": agent}, allow_redirects=False)


async def location(client: TestClient, path: str, agent: str) -> str:
    response = await click(client, path, agent)
    assert response.status == 302, await response.text()
    return str(response.headers["Location"])


def query_of(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


async def test_android_chrome_gets_the_intent_of_apn_with_afl_behind_it(service: TestClient) -> None:
    found = await location(service, FULL, UA["chrome_android"])
    assert found.startswith("intent://shop.example/offer?id=7") and ";package=com.shop.app;" in found
    fallback = unquote(found.split("S.browser_fallback_url=")[1].split(";")[0])
    assert fallback.startswith("https://shop.example/android?")
    assert query_of(fallback)["utm_source"] == ["newsletter"] and len(query_of(fallback)["tracking_id"][0]) >= 16


async def test_android_without_afl_gets_the_play_page_with_the_referrer(service: TestClient) -> None:
    found = await location(service, BARE, UA["firefox_android"])
    assert found.startswith("https://play.google.com/store/apps/details?")
    referrer = parse_qs(query_of(found)["referrer"][0])
    assert referrer["utm_source"] == ["qr"] and referrer["tracking_id"]
    clicked = urlsplit(referrer["link"][0])  # the long link the person clicked
    assert (clicked.netloc, clicked.path) == (HOST, "/") and query_of(referrer["link"][0])["isi"] == ["1234567"]


async def test_iphone_gets_ifl_else_the_app_store_with_its_tokens(service: TestClient) -> None:
    assert (await location(service, FULL, UA["iphone"])).startswith("https://shop.example/ios?")
    store = await location(service, BARE, UA["iphone"])
    assert store.startswith("https://apps.apple.com/app/id1234567")
    query = query_of(store)
    assert (query["ct"], query["pt"], query["mt"], query["utm_source"]) == (["bf-mail"], ["99"], ["8"], ["qr"])


async def test_desktop_gets_ofl_else_the_deep_link(service: TestClient) -> None:
    assert (await location(service, FULL, UA["desktop"])).startswith("https://shop.example/desktop?")
    welcome = await location(service, BARE, UA["desktop"])
    assert welcome.startswith("https://shop.example/welcome?") and query_of(welcome)["utm_source"] == ["qr"]


class Meta(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "meta" and values.get("property") and values.get("content") is not None:
            self.found[str(values["property"])] = str(values["content"])


async def test_a_preview_fetcher_gets_the_card_of_st_sd_si(service: TestClient) -> None:
    response = await click(service, FULL, UA["whatsapp"])
    assert response.status == 200 and response.content_type == "text/html"
    meta = Meta()
    meta.feed(await response.text())
    assert meta.found["og:title"] == "Black Friday" and meta.found["og:description"] == "Half price"
    assert meta.found["og:image"] == "https://shop.example/og.png"


async def test_clicks_are_recorded_against_the_domains_long_links_link(service: TestClient) -> None:
    for agent in ("desktop", "iphone", "chrome_android"):
        await location(service, FULL, UA[agent])
    links = await (await service.get(f"{ADMIN_API}/accounts/{A}/links?limit=100", headers=ADMIN)).json()
    held = [link for link in links["data"] if link["code"] == long_links_code(HOST)]
    assert len(held) == 1 and held[0]["domain"] == HOST
    counts = await (await service.get(f"{ADMIN_API}/accounts/{A}/links/{held[0]['id']}/clicks",
                                      headers=ADMIN)).json()
    assert counts["data"]["human"] == 3


async def test_long_links_answer_only_on_a_live_domain(service: TestClient) -> None:
    assert (await click(service, FULL, UA["desktop"], host="127.0.0.1")).status == 404  # the shared host
    assert (await click(service, FULL, UA["desktop"], host="unknown.example")).status == 404
    await added(service, "pending.shop.example")
    assert (await click(service, FULL, UA["desktop"], host="pending.shop.example")).status == 404
    assert (await click(service, "/", UA["desktop"])).status == 404  # no link parameter


@pytest.mark.parametrize(("path", "parameter"), [
    ("/?apn=com.shop.app", "link"),
    ("/?link=https%3A%2F%2Fshop.example%2F&apn=not+a+package", "apn"),
    ("/?link=https%3A%2F%2Fshop.example%2F&isi=abc", "isi"),
    ("/?link=javascript%3Aalert(1)", "link"),
])
async def test_a_wrong_long_link_is_a_page_naming_the_parameter(service: TestClient, path: str,
                                                               parameter: str) -> None:
    response = await click(service, path, UA["desktop"])
    assert response.status == 400 and response.content_type == "text/html"
    assert f"{parameter}:" in await response.text()


EXPORT = (
    "Link name,Short Dynamic Link,Long Dynamic Link\r\n"
    f"Welcome,https://{HOST}/m9Mm,\"https://{HOST}/?link=https://shop.example/welcome&apn=com.shop.app"
    "&isi=1234567&ibi=com.shop.ios&utm_source=qr&utm_campaign=spring\"\r\n"
    f"Elsewhere,https://other.example/abcd,https://other.example/?link=https://shop.example/\r\n"
    f"Broken,https://{HOST}/bad1,https://{HOST}/?link=https://shop.example/&apn=not+a+package\r\n"
    f"Twice,https://{HOST}/m9Mm,https://{HOST}/?link=https://shop.example/again\r\n"
    f"Root,https://{HOST}/,https://{HOST}/?link=https://shop.example/\r\n"
)


async def test_an_export_is_imported_at_its_short_paths_rows_failing_alone(service: TestClient) -> None:
    response = await service.post(f"{ADMIN_API}/accounts/{A}/links/fdl-import", data=EXPORT.encode(),
                                  headers={**ADMIN, "Content-Type": "text/csv"})
    assert response.status == 200, await response.text()
    result = (await response.json())["data"]
    assert [(row["line"], row["code"]) for row in result["created"]] == [(2, "m9Mm")]
    failed = {row["line"]: row for row in result["failed"]}
    assert failed[3]["error"] == "Unknown domain"
    assert failed[4]["details"]["field"] == "apn"
    assert failed[5]["error"] and failed[5]["short_link"].endswith("/m9Mm")  # the code is taken
    assert failed[6]["details"]["field"] == "short_link"
    # the imported link answers at its old short URL, on that domain only, with the long link's UTM
    welcome = await location(service, "/m9Mm", UA["desktop"])
    assert welcome.startswith("https://shop.example/welcome?")
    assert query_of(welcome)["utm_source"] == ["qr"] and query_of(welcome)["utm_campaign"] == ["spring"]
    assert (await location(service, "/m9Mm", UA["iphone"])).startswith("https://apps.apple.com/app/id1234567")
    assert (await click(service, "/m9Mm", UA["desktop"], host="127.0.0.1")).status == 404


async def test_an_import_reaches_only_the_accounts_own_domains(service: TestClient) -> None:
    response = await service.post(f"{ADMIN_API}/accounts/{B}/links/fdl-import", data=EXPORT.encode(),
                                  headers={**ADMIN, "Content-Type": "text/csv"})
    assert response.status == 200
    result = (await response.json())["data"]
    assert result["created"] == []
    assert {row["line"]: row["error"] for row in result["failed"]} == {
        2: "Unknown domain", 3: "Unknown domain", 4: "Unknown domain", 5: "Unknown domain", 6: "Invalid short link"}


@pytest.mark.parametrize(("body", "status"), [
    (b"", 400), (b"a,b\r\n1,2\r\n", 400), (b"\xff\xfe not utf-8", 400), (b"short_link,long_link\n\x00,x\n", 400),
])
async def test_a_file_that_is_not_an_export_is_refused_whole(service: TestClient, body: bytes, status: int) -> None:
    response = await service.post(f"{ADMIN_API}/accounts/{A}/links/fdl-import", data=body,
                                  headers={**ADMIN, "Content-Type": "text/csv"})
    assert response.status == status
    answer = await response.json()
    assert set(answer) == {"error", "details"}


async def test_deleting_the_domain_takes_its_long_links_link_with_it(service: TestClient) -> None:
    domains = await (await service.get(f"{ADMIN_API}/accounts/{A}/domains", headers=ADMIN)).json()
    response = await service.delete(f"{ADMIN_API}/accounts/{A}/domains/{domains['data'][0]['id']}", headers=ADMIN)
    assert response.status == 204, await response.text()
    links = await (await service.get(f"{ADMIN_API}/accounts/{A}/links?limit=100", headers=ADMIN)).json()
    assert not [link for link in links["data"] if link["code"] == long_links_code(HOST)]
