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
from tests.conftest import ADMIN, bearer, token_for
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


# A stored link of the account naming its apps and its web host: what makes them the account's own, so that its
# long links may name them (linksvc/links/long_links.py).
APP_LINK = {"code": "shop-app", "kind": "external", "destination_url": "https://shop.example/",
            "deeplink": "https://shop.example/app", "android": {"package": "com.shop.app"},
            "ios": {"bundle_id": "com.shop.ios", "app_store_id": "1234567"}}


@pytest.fixture
async def service(aiohttp_client: Any, settings: Settings) -> TestClient:
    client = await start(aiohttp_client, settings)
    response = await verify(client, await added(client, HOST))
    assert response.status == 200, await response.text()
    response = await client.post(f"{ADMIN_API}/accounts/{A}/links", json=APP_LINK, headers=ADMIN)
    assert response.status == 201, await response.text()
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


# --- issue 32: long links follow only what the account allows ---------------------------------------------------

EVIL = "https%3A%2F%2Fevil.example.net%2Fphish"
SHOP = "https%3A%2F%2Fshop.example%2F"


@pytest.mark.parametrize(("path", "parameter"), [
    (f"/?link={EVIL}", "link"),
    (f"/?link={SHOP}&ofl={EVIL}", "ofl"),
    (f"/?link={SHOP}&isi=1234567&ifl={EVIL}", "ifl"),
    (f"/?link={SHOP}&apn=com.shop.app&afl={EVIL}", "afl"),
    (f"/?link={SHOP}&st=Hello&si={EVIL}.png", "si"),
    ("/?link=https%3A%2F%2Fshop.example%40evil.example.net%2F", "link"),  # shop.example is only the user name
    ("/?link=https%3A%2F%2Fshop.example.evil.net%2F", "link"),
    (f"/?link={SHOP}&apn=com.evil.app", "apn"),  # an intent to any package
    (f"/?link={SHOP}&ibi=com.evil.ios", "ibi"),
    (f"/?link={SHOP}&isi=999", "isi"),
])
async def test_a_long_link_leading_where_the_account_does_not_allow_is_refused(service: TestClient, path: str,
                                                                               parameter: str) -> None:
    for agent in ("desktop", "iphone", "chrome_android", "firefox_android", "whatsapp"):
        response = await click(service, path, UA[agent])
        assert response.status == 400, (agent, response.headers.get("Location"))
        text = await response.text()
        assert response.content_type == "text/html" and f"{parameter}:" in text and "evil" not in text
        assert "Location" not in response.headers


async def test_a_preview_fetcher_gets_no_card_from_a_refused_long_link(service: TestClient) -> None:
    path = f"/?link={EVIL}&st=Your+account+is+locked&sd=Sign+in+again&si={EVIL}.png"
    response = await click(service, path, UA["whatsapp"])
    text = await response.text()
    assert response.status == 400 and "og:" not in text and "locked" not in text


async def domain_id(client: TestClient) -> str:
    domains = await (await client.get(f"{ADMIN_API}/accounts/{A}/domains", headers=ADMIN)).json()
    return str(next(domain["id"] for domain in domains["data"] if domain["host"] == HOST))


async def test_the_domains_url_patterns_allow_other_targets(service: TestClient) -> None:
    partner = "/?link=https%3A%2F%2Fwww.partner.example%2Fsale%3Fx%3D1&apn=com.shop.app"
    assert (await click(service, partner, UA["desktop"])).status == 400
    pattern = r"^https://([a-z0-9-]+\.)*partner\.example/sale.*"
    response = await service.patch(f"{ADMIN_API}/accounts/{A}/domains/{await domain_id(service)}",
                                   json={"url_patterns": [pattern]}, headers=ADMIN)
    assert response.status == 200, await response.text()
    assert (await response.json())["data"]["url_patterns"] == [pattern]
    listed = await (await service.get(f"{ADMIN_API}/accounts/{A}/domains", headers=ADMIN)).json()
    assert [domain["url_patterns"] for domain in listed["data"]] == [[pattern]]
    assert (await location(service, partner, UA["desktop"])).startswith("https://www.partner.example/sale?x=1&")
    found = await location(service, partner.replace("www.partner", "WWW.Partner"), UA["chrome_android"])
    assert found.startswith("intent://WWW.Partner.example/sale?x=1") and ";package=com.shop.app;" in found
    for elsewhere in ("https%3A%2F%2Fwww.partner.example%2Fother",  # a full match: another path is not allowed
                      "https%3A%2F%2Fpartner.example.evil.net%2Fsale",
                      "https%3A%2F%2Fevil.net%2Fpartner.example%2Fsale"):
        assert (await click(service, f"/?link={elsewhere}", UA["desktop"])).status == 400, elsewhere
    # Another account's domain does not lend its patterns, nor its links' hosts.
    other = await added(service, "go.other.example", account=B)
    assert other["url_patterns"] == []


async def test_a_pattern_cannot_backtrack_for_ever(service: TestClient) -> None:
    response = await service.patch(f"{ADMIN_API}/accounts/{A}/domains/{await domain_id(service)}",
                                   json={"url_patterns": [r"^https://slow\.example/(a+)+$"]}, headers=ADMIN)
    assert response.status == 200, await response.text()
    # A backtracking engine would try 2^3000 ways before saying no; RE2 says no after one pass.
    assert (await click(service, "/?link=https%3A%2F%2Fslow.example%2F" + "a" * 3000 + "!", UA["desktop"])).status \
        == 400
    assert (await location(service, "/?link=https%3A%2F%2Fslow.example%2Faaa", UA["desktop"])).startswith(
        "https://slow.example/aaa?")


@pytest.mark.parametrize(("patterns", "field", "words"), [
    ([".*"], "url_patterns[0]", "too broad"),
    ([r"^https://shop\.example/.*", r"^https://.*"], "url_patterns[1]", "too broad"),
    ([r"^https://shop.example/.*"], "url_patterns[0]", "dots escaped"),  # shop-example.com would match
    ([r"^https://shop\.example.*"], "url_patterns[0]", "too broad"),  # shop.example.evil.net would match
    ([r"^https://shop\.example/?.*"], "url_patterns[0]", "too broad"),
    ([r"^https://[^/]*\.shop\.example/.*"], "url_patterns[0]", "too broad"),
    ([r"^https://shop\.example/x|.*"], "url_patterns[0]", "alternative"),
    ([r"^https://shop\.example/(x"], "url_patterns[0]", "not a valid regular expression"),
    ([r"^https://shop\.example/(a)\1"], "url_patterns[0]", "not a valid regular expression"),
    ([r"^https://shop\.example/" + "a" * 300], "url_patterns[0]", "at most 300"),
    ([r"^https://shop\.example/.*"] * 2, "url_patterns[1]", "twice"),
    ([""], "url_patterns[0]", "empty"),
    ([42], "url_patterns[0]", ""),
    ([f"^https://shop\\.example/{n}" for n in range(51)], "url_patterns", ""),
])
async def test_a_bad_pattern_is_refused_naming_it(service: TestClient, patterns: list[Any], field: str,
                                                  words: str) -> None:
    for response in (
        await service.patch(f"{ADMIN_API}/accounts/{A}/domains/{await domain_id(service)}",
                            json={"url_patterns": patterns}, headers=ADMIN),
        await service.post(f"{ADMIN_API}/accounts/{A}/domains", json={"host": "new.shop.example",
                                                                      "url_patterns": patterns}, headers=ADMIN),
    ):
        assert response.status == 400
        answer = await response.json()
        assert set(answer) == {"error", "details"} and answer["details"]["field"] == field, answer
        assert words in answer["details"]["message"]
    listed = await (await service.get(f"{ADMIN_API}/accounts/{A}/domains", headers=ADMIN)).json()
    assert [domain["url_patterns"] for domain in listed["data"]] == [[]]


def without_tracking_id(url: str) -> tuple[str, dict[str, list[str]]]:
    query = query_of(url)
    assert len(query.pop("tracking_id")[0]) >= 16
    return url.split("?")[0], query


async def test_app_found_answers_the_deep_link_as_a_stored_link_with_the_same_query(service: TestClient) -> None:
    stored = {"code": "same-as-bare", "kind": "external", "destination_url": "https://shop.example/welcome",
              "deeplink": "https://shop.example/welcome", "android": {"package": "com.shop.app"},
              "ios": {"bundle_id": "com.shop.ios", "app_store_id": "1234567"}}
    response = await service.post(f"{ADMIN_API}/accounts/{A}/links", json=stored, headers=ADMIN)
    assert response.status == 201, await response.text()
    for agent in ("iphone", "chrome_android", "desktop"):
        long = await location(service, BARE + "&%24app-found=true", UA[agent])
        same = await location(service, "/same-as-bare?utm_source=qr&%24app-found=true", UA[agent])
        assert without_tracking_id(long) == without_tracking_id(same) == (
            "https://shop.example/welcome", {"utm_source": ["qr"]})
    answer = await service.get(BARE + "&%24app-found=true&tracking_id=t-1234567890abcdef",
                               headers={"Host": HOST, "User-Agent": UA["iphone"], "Accept": "application/json"})
    data = (await answer.json())["data"]
    assert data["deeplink"] == "https://shop.example/welcome?utm_source=qr&tracking_id=t-1234567890abcdef"
    assert data["link_id"] and data["tracking_id"] == "t-1234567890abcdef"


async def test_a_deferred_claim_of_a_long_link_install_answers_the_long_link(service: TestClient) -> None:
    path = ("/?link=https%3A%2F%2Fshop.example%2Foffer%3Fid%3D7&apn=com.shop.app&ofl=https%3A%2F%2Fshop.example"
            "%2Fdesktop&utm_source=qr&utm_campaign=spring")
    found = await location(service, path, UA["firefox_android"])  # the Play page, with the install referrer
    assert found.startswith("https://play.google.com/store/apps/details?id=com.shop.app&referrer=")
    raw = next(part.partition("=")[2] for part in urlsplit(found).query.split("&") if part.startswith("referrer="))
    referrer = unquote(raw)  # what the Play Install Referrer API hands the app
    tracking_id = parse_qs(referrer)["tracking_id"][0]
    response = await service.post("/api/storefront/v1/deferred-links/claim",
                                  json={"platform": "android", "install_referrer": referrer},
                                  headers=bearer(await token_for(service, A, "CLIENT")))
    assert response.status == 200, await response.text()
    data = (await response.json())["data"]
    assert data["deeplink"] == (f"https://shop.example/offer?id=7&utm_source=qr&utm_campaign=spring"
                                f"&tracking_id={tracking_id}")
    assert data["destination_url"] == (f"https://shop.example/desktop?utm_source=qr&utm_campaign=spring"
                                       f"&tracking_id={tracking_id}")
    assert data["link_code"] == long_links_code(HOST) and data["platform"] == "android"


async def test_a_long_link_with_odd_bytes_is_refused_not_an_error(service: TestClient) -> None:
    for query in ("link=https%3A%2F%2Fshop.example%2F%ED%A0%80", "link=https%3A%2F%2Fshop.example%2F%00",
                  "link=https%3A%2F%2Fshop.example%2F%FF", "link=https%3A%2F%2F%5B%3A%3A1%5D%2F"):
        response = await click(service, f"/?{query}", UA["desktop"])
        assert response.status in (302, 400), (query, response.status)


async def test_a_pattern_may_make_literal_subdomains_optional(service: TestClient) -> None:
    """``(www\\.)?`` is what a marketer writes first; it names its host as surely as a wildcard does."""
    pattern = r"^https://(www\.|m\.)?partner\.example/.*"
    response = await service.patch(f"{ADMIN_API}/accounts/{A}/domains/{await domain_id(service)}",
                                   json={"url_patterns": [pattern]}, headers=ADMIN)
    assert response.status == 200, await response.text()
    for allowed in ("partner.example", "www.partner.example", "m.partner.example"):
        target = f"/?link=https%3A%2F%2F{allowed}%2Fsale"
        assert (await location(service, target, UA["desktop"])).startswith(f"https://{allowed}/sale?")
    for refused in ("shop.partner.example", "www.partner.example.evil.net", "wwwXpartner.example"):
        assert (await click(service, f"/?link=https%3A%2F%2F{refused}%2Fsale", UA["desktop"])).status == 400, refused
    for broad in (r"^https://(www\.|evil\.net/)?partner\.example/.*", r"^https://(www\.|.*)?partner\.example/.*"):
        response = await service.patch(f"{ADMIN_API}/accounts/{A}/domains/{await domain_id(service)}",
                                       json={"url_patterns": [broad]}, headers=ADMIN)
        assert response.status == 400, broad
