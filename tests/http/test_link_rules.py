"""Smart links over HTTP, on the store of the run: rules saved through the admin API, validated with errors that
name the rule and the field, then GET /{code} with the headers a browser sends picks the rule's target (the
client placed by X-Forwarded-For through a trusted proxy), on the handler and on the fast lane, and each stored
click records its country and the rule."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import CLICKS, DB
from linksvc.app import create_app
from linksvc.links.urls import query_values
from linksvc.seed import load_seed
from linksvc.settings import Settings
from storage.db import fetch_all
from tests.conftest import ADMIN, service_server
from tests.factories import A
from tests.http.test_fast_lane import converse, lane
from tests.http.test_resolver import ANDROID, DESKTOP, GOOGLEBOT, _links

IPHONE = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
          "Version/17.4 Mobile/15E148 Safari/604.1")
LINKS = f"/api/admin/v1/accounts/{A}/links"
# Addresses from the iptocc package's own tests: JP, US, BR, ZA.
JAPAN, USA, BRAZIL, SOUTH_AFRICA = "1.0.16.1", "8.8.8.8", "200.160.0.1", "41.0.0.1"

RULES = [
    {"name": "japan", "conditions": {"countries": ["JP"]},
     "target": {"destination_url": "https://shop.example/jp?lang=ja"}},
    {"name": "portuguese", "conditions": {"languages": ["pt"]},
     "target": {"destination_url": "https://shop.example/pt"}},
    {"name": "android-brazil", "conditions": {"countries": ["BR"], "platforms": ["android"]},
     "target": {"destination_url": "https://shop.example/br", "deeplink": "democoffee://br",
                "android": {"package": "com.democoffee.br"}}},
    {"name": "newsletter", "conditions": {"query": [{"param": "src", "equals": "news"}]},
     "target": {"link": "app-link"}},
    {"name": "partners", "conditions": {"referrer_hosts": ["*.partner.example"], "bot": False},
     "target": {"destination_url": "https://shop.example/partners"}},
]


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return dataclasses.replace(settings, trusted_proxies="127.0.0.1")


@pytest.fixture
async def links(aiohttp_client: Any, settings: Settings) -> TestClient:
    client = await aiohttp_client(service_server(create_app(settings)))
    await load_seed(client.app[DB], _links(), allow_private=True)
    response = await client.post(LINKS, json={"code": "smart-1", "kind": "email",
                                              "destination_url": "https://shop.example/default", "rules": RULES},
                                 headers=ADMIN)
    assert response.status == 201, await response.text()
    return client


async def click(client: TestClient, path: str, address: str, ua: str = DESKTOP, **headers: str) -> Any:
    return await client.get(path, headers={"User-Agent": ua, "X-Forwarded-For": address, **headers},
                            allow_redirects=False)


async def stored_clicks(client: TestClient, code: str) -> list[tuple[Any, ...]]:
    await client.app[CLICKS].flush()
    return [tuple(row) for row in await fetch_all(
        client.app[DB].reader, "SELECT clicks.country, clicks.region, clicks.city, clicks.rule, clicks.answer "
                               "FROM clicks JOIN links ON links.id = clicks.link_id WHERE links.code = ? "
                               "ORDER BY clicks.id", (code,))]


async def test_the_first_rule_that_holds_picks_the_target(links: TestClient) -> None:
    japan = await click(links, "/smart-1", JAPAN)
    assert japan.status == 302
    location = japan.headers["Location"]
    assert location.startswith("https://shop.example/jp?lang=ja&utm_source=linksvc&utm_medium=email&tracking_id=")
    portuguese = await click(links, "/smart-1", USA, **{"Accept-Language": "pt-BR,pt;q=0.9,en-US;q=0.8,en;q=0.7"})
    assert portuguese.headers["Location"].startswith("https://shop.example/pt?")
    # Japan comes first: a Portuguese reader in Japan gets the Japanese page
    both = await click(links, "/smart-1", JAPAN, **{"Accept-Language": "pt-BR,pt;q=0.9"})
    assert both.headers["Location"].startswith("https://shop.example/jp?")
    english = await click(links, "/smart-1", USA, **{"Accept-Language": "en-US,en;q=0.9"})
    assert english.headers["Location"].startswith("https://shop.example/default?")
    assert await stored_clicks(links, "smart-1") == [
        ("JP", None, None, "japan", "destination"), ("US", None, None, "portuguese", "destination"),
        ("JP", None, None, "japan", "destination"), ("US", None, None, None, "destination")]


async def test_a_targets_app_settings_make_the_intent_url(links: TestClient) -> None:
    android = await click(links, "/smart-1", BRAZIL, ANDROID)
    location = android.headers["Location"]
    assert re.match(r"intent://br\?utm_source=linksvc&utm_medium=email&tracking_id=[0-9a-f]{32}#Intent;"
                    r"scheme=democoffee;package=com\.democoffee\.br;", location), location
    assert "utm_source%253Dlinksvc" in location  # the install referrer (the Play page, the intent's fallback)
    desktop = await click(links, "/smart-1", BRAZIL, DESKTOP)
    assert desktop.headers["Location"].startswith("https://shop.example/default?")


async def test_a_rule_leads_to_another_link_of_the_account(links: TestClient) -> None:
    response = await click(links, "/smart-1?src=news", SOUTH_AFRICA)
    location = response.headers["Location"]
    # app-link's destination, with this link's UTM (an email link) and the click's tracking id
    assert location.startswith("https://shop.example/app?a=1&utm_source=linksvc&utm_medium=email&tracking_id=")
    android = await click(links, "/smart-1?src=news", SOUTH_AFRICA, ANDROID)
    assert re.match(r"intent://home\?utm_source=linksvc&utm_medium=email&tracking_id=[0-9a-f]{32}#Intent;"
                    r"scheme=democoffee;package=com\.democoffee\.app;", android.headers["Location"])
    assert (await stored_clicks(links, "smart-1"))[0][3] == "newsletter"


async def test_referrer_hosts_and_bots(links: TestClient) -> None:
    person = await click(links, "/smart-1", SOUTH_AFRICA, IPHONE, Referer="https://blog.partner.example/post")
    assert person.headers["Location"].startswith("https://shop.example/partners?")
    bot = await click(links, "/smart-1", SOUTH_AFRICA, GOOGLEBOT, Referer="https://blog.partner.example/post")
    assert bot.headers["Location"].startswith("https://shop.example/default?")
    other = await click(links, "/smart-1", SOUTH_AFRICA, IPHONE, Referer="https://partner.example/")
    assert other.headers["Location"].startswith("https://shop.example/default?")


async def test_forwarded_for_is_believed_only_from_a_trusted_proxy(aiohttp_client: Any, settings: Settings) -> None:
    client = await aiohttp_client(service_server(create_app(dataclasses.replace(settings, trusted_proxies=""))))
    await load_seed(client.app[DB], _links(), allow_private=True)
    response = await client.post(LINKS, json={"code": "smart-2", "kind": "external", "rules": RULES[:1],
                                              "destination_url": "https://shop.example/default"}, headers=ADMIN)
    assert response.status == 201, await response.text()
    answer = await click(client, "/smart-2", JAPAN)
    assert answer.headers["Location"].startswith("https://shop.example/default?")
    assert await stored_clicks(client, "smart-2") == [(None, None, None, None, "destination")]  # 127.0.0.1


async def test_the_fast_lane_applies_the_rules(links: TestClient) -> None:
    def get(address: str) -> bytes:
        return (f"GET /smart-1 HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: {DESKTOP}\r\n"
                f"X-Forwarded-For: {address}\r\n\r\n").encode()

    before = lane(links).answered
    replies = await converse(links, [get(JAPAN), get(JAPAN), get(USA), get(BRAZIL)])
    assert lane(links).answered - before == 3
    assert [reply.headers["location"].split("?")[0] for reply in replies] == [
        "https://shop.example/jp", "https://shop.example/jp", "https://shop.example/default",
        "https://shop.example/default"]
    assert [row[0] for row in await stored_clicks(links, "smart-1")] == ["JP", "JP", "US", "BR"]
    assert [row[3] for row in await stored_clicks(links, "smart-1")] == ["japan", "japan", None, None]


async def test_edited_rules_apply_to_the_next_click(links: TestClient) -> None:
    assert (await click(links, "/smart-1", USA)).headers["Location"].startswith("https://shop.example/default?")
    link_id = (await (await links.get(f"{LINKS}?code=smart-1", headers=ADMIN)).json())
    found = [item for item in link_id["data"] if item["code"] == "smart-1"][0]
    response = await links.patch(f"{LINKS}/{found['id']}", json={"rules": [
        {"name": "us", "conditions": {"countries": ["us"]}, "target": {"destination_url": "https://shop.example/us"}}]},
        headers=ADMIN)
    assert response.status == 200, await response.text()
    assert (await click(links, "/smart-1", USA)).headers["Location"].startswith("https://shop.example/us?")
    response = await links.patch(f"{LINKS}/{found['id']}", json={"rules": None}, headers=ADMIN)
    assert response.status == 200
    assert (await click(links, "/smart-1", USA)).headers["Location"].startswith("https://shop.example/default?")


async def test_rules_read_back_as_written(links: TestClient) -> None:
    listed = await (await links.get(LINKS, headers=ADMIN)).json()
    found = [item for item in listed["data"] if item["code"] == "smart-1"][0]
    android = {"package": "com.democoffee.br", "fallback_url": None, "sha256_cert_fingerprints": []}
    assert found["rules"] == [*RULES[:2], {**RULES[2], "target": {**RULES[2]["target"], "android": android}},
                              *RULES[3:]]


@pytest.mark.parametrize(("rules", "path", "rule"), [
    ([{"name": "a", "conditions": {"countries": ["FRA"]}, "target": {"destination_url": "https://x.example"}}],
     "rules[0].conditions.countries[0]", "pattern"),
    ([RULES[0], {"name": "b", "conditions": {}, "target": {"destination_url": "https://x.example"}}],
     "rules[1].conditions", "one_of_required"),
    ([{"name": "a", "conditions": {"time": {"timezone": "Mars/Olympus"}}, "target": {"destination_url":
                                                                                      "https://x.example"}}],
     "rules[0].conditions.time.timezone", "enum"),
    ([{"name": "a", "conditions": {"networks": ["10.0.0.0/8", "10.0.0.0/33"]},
       "target": {"destination_url": "https://x.example"}}], "rules[0].conditions.networks[1]", "format"),
    ([{"name": "a", "conditions": {"query": [{"param": "p", "equals": "1", "present": True}]},
       "target": {"destination_url": "https://x.example"}}], "rules[0].conditions.query[0]", "one_of_required"),
    ([{"name": "a", "conditions": {"bot": True}, "target": {"destination_url": "javascript:alert(1)"}}],
     "rules[0].target.destination_url", "url"),
    ([{"name": "a", "conditions": {"bot": True}, "target": {"destination_url": "https://x.example",
                                                            "deeplink": "intent://x"}}],
     "rules[0].target.deeplink", "url"),
    ([{"name": "a", "conditions": {"bot": True}, "target": {"link": "app-link", "destination_url": "https://x.e"}}],
     "rules[0].target", "not_allowed"),
    ([{"name": "a", "conditions": {"bot": True}, "target": {"link": "no-such-link"}}],
     "rules[0].target.link", "unknown_reference"),
    ([{"name": "a", "conditions": {"bot": True}, "target": {"link": "lnkbbbb"}}],  # account B's link
     "rules[0].target.link", "unknown_reference"),
    ([{"name": "a", "conditions": {"bot": True}, "target": {"link": "new-smart"}}],
     "rules[0].target.link", "not_allowed"),
    ([RULES[0], {**RULES[1], "name": "japan"}], "rules[1].name", "duplicate"),
    ([{"name": "", "conditions": {"bot": True}, "target": {"destination_url": "https://x.example"}}],
     "rules[0].name", "string_too_short"),
    ([{"name": "a", "conditions": {"devices": ["phone"]}, "target": {"destination_url": "https://x.example"}}],
     "rules[0].conditions.devices[0]", "enum"),
    ([{"name": "a", "conditions": {"referrer_hosts": ["exa mple.com"]}, "target": {"destination_url": "https://x.e"}}],
     "rules[0].conditions.referrer_hosts[0]", "pattern"),
    ([RULES[0]] * 51, "rules", "too_many_items"),
])
async def test_invalid_rules_are_named(links: TestClient, rules: list[Any], path: str, rule: str) -> None:
    response = await links.post(LINKS, json={"code": "new-smart", "kind": "email",
                                             "destination_url": "https://shop.example/", "rules": rules}, headers=ADMIN)
    assert response.status == 400, await response.text()
    body = await response.json()
    assert set(body) == {"error", "details"}
    issues = {(issue["path"], issue["type"]) for issue in body["details"]["issues"]}
    assert (path, rule) in issues, issues


async def test_a_link_without_rules_answers_as_before(links: TestClient) -> None:
    response = await click(links, "/lnkaaaa", JAPAN)
    assert query_values(response.headers["Location"])["utm_medium"] == "email"
    assert await stored_clicks(links, "lnkaaaa") == [("JP", None, None, None, "destination")]


async def test_the_clicks_breakdown_by_country_referrer_host_and_rule(links: TestClient) -> None:
    await click(links, "/smart-1", JAPAN, Referer="https://News.Example:8443/a?b#c")
    await click(links, "/smart-1", JAPAN, GOOGLEBOT, Referer="https://user@news.example/x")
    await click(links, "/smart-1", USA, IPHONE, Referer="https://blog.partner.example/post")
    await click(links, "/smart-1", SOUTH_AFRICA)
    await click(links, "/smart-1", "10.1.2.3", Referer="android-app://com.google.android.gm/")
    listed = await (await links.get(LINKS, headers=ADMIN)).json()
    link_id = next(item["id"] for item in listed["data"] if item["code"] == "smart-1")
    response = await links.get(f"{LINKS}/{link_id}/clicks", headers=ADMIN)
    assert response.status == 200, await response.text()
    data = (await response.json())["data"]
    assert data["by_country"] == [{"country": "JP", "human": 1, "bot": 1}, {"country": None, "human": 1, "bot": 0},
                                  {"country": "US", "human": 1, "bot": 0}, {"country": "ZA", "human": 1, "bot": 0}]
    assert data["by_referrer_host"] == [
        {"host": "news.example", "human": 1, "bot": 1}, {"host": None, "human": 1, "bot": 0},
        {"host": "blog.partner.example", "human": 1, "bot": 0}, {"host": "com.google.android.gm", "human": 1, "bot": 0}]
    assert data["by_rule"] == [{"rule": None, "human": 2, "bot": 0}, {"rule": "japan", "human": 1, "bot": 1},
                               {"rule": "partners", "human": 1, "bot": 0}]  # the most clicked, then null first
    capped = (await (await links.get(f"{LINKS}/{link_id}/clicks?limit=1", headers=ADMIN)).json())["data"]
    assert capped["by_country"] == [{"country": "JP", "human": 1, "bot": 1}]
    assert capped["other"]["by_country"] == {"groups": 3, "human": 3, "bot": 0}
    assert capped["other"]["by_referrer_host"] == {"groups": 3, "human": 3, "bot": 0}
    assert capped["other"]["by_rule"] == {"groups": 2, "human": 2, "bot": 1}


async def test_rules_apply_on_a_custom_domain(aiohttp_client: Any, settings: Settings) -> None:
    from tests.http.test_domains import added, start, verify

    service = await start(aiohttp_client, settings)
    domain = await added(service, "go.shop.example")
    assert (await verify(service, domain)).status == 200
    response = await service.post(LINKS, json={
        "code": "on-domain", "kind": "external", "destination_url": "https://shop.example/",
        "domain": "go.shop.example",
        "rules": [{"name": "french", "conditions": {"languages": ["fr"]},
                   "target": {"destination_url": "https://shop.example/fr"}}]}, headers=ADMIN)
    assert response.status == 201, await response.text()
    firefox_fr = "fr,fr-FR;q=0.8,en-US;q=0.5,en;q=0.3"
    for language, expected in ((firefox_fr, "https://shop.example/fr?"), ("en-US,en;q=0.5", "https://shop.example/?")):
        answer = await service.get("/on-domain", headers={"Host": "go.shop.example", "Accept-Language": language,
                                                          "User-Agent": DESKTOP}, allow_redirects=False)
        assert answer.status == 302 and answer.headers["Location"].startswith(expected), answer.headers
    shared = await service.get("/on-domain", headers={"Accept-Language": firefox_fr}, allow_redirects=False)
    assert shared.status == 404  # the link resolves only on its domain


async def test_rules_of_a_domains_long_links_link_apply_to_its_dynamic_links(aiohttp_client: Any,
                                                                             settings: Settings) -> None:
    from linksvc.links.fdl_service import long_links_code
    from tests.http.test_domains import added, start, verify
    from tests.http.test_fdl_links import APP_LINK, FULL, HOST

    service = await start(aiohttp_client, settings)
    assert (await verify(service, await added(service, HOST))).status == 200
    assert (await service.post(LINKS, json=APP_LINK, headers=ADMIN)).status == 201
    listed = await (await service.get(f"{LINKS}?limit=100", headers=ADMIN)).json()
    long_links = next(link for link in listed["data"] if link["code"] == long_links_code(HOST))
    response = await service.patch(f"{LINKS}/{long_links['id']}", json={"rules": [
        {"name": "french", "conditions": {"languages": ["fr"]},
         "target": {"destination_url": "https://shop.example/fr"}}]}, headers=ADMIN)
    assert response.status == 200, await response.text()
    french = await service.get(FULL, headers={"Host": HOST, "User-Agent": DESKTOP, "Accept-Language": "fr-FR,fr;q=0.9"},
                               allow_redirects=False)
    location = french.headers["Location"]
    # the rule's target, with the long link's own UTM (utm_source=newsletter)
    assert location.startswith("https://shop.example/fr?") and query_values(location)["utm_source"] == "newsletter"
    english = await service.get(FULL, headers={"Host": HOST, "User-Agent": DESKTOP, "Accept-Language": "en"},
                                allow_redirects=False)
    assert english.headers["Location"].startswith("https://shop.example/desktop?")  # the long link's ofl


async def test_a_change_of_the_link_a_rule_leads_to_shows_at_the_next_click(links: TestClient) -> None:
    before = await click(links, "/smart-1?src=news", SOUTH_AFRICA)
    assert before.headers["Location"].startswith("https://shop.example/app?a=1&")
    listed = await (await links.get(LINKS, headers=ADMIN)).json()
    app_link = next(item["id"] for item in listed["data"] if item["code"] == "app-link")
    response = await links.patch(f"{LINKS}/{app_link}", json={"destination_url": "https://shop.example/app2"},
                                 headers=ADMIN)
    assert response.status == 200
    after = await click(links, "/smart-1?src=news", SOUTH_AFRICA)
    assert after.headers["Location"].startswith("https://shop.example/app2?")
    assert (await links.delete(f"{LINKS}/{app_link}", headers=ADMIN)).status == 204
    gone = await click(links, "/smart-1?src=news", SOUTH_AFRICA)  # the rule is skipped: the link's own target
    assert gone.headers["Location"].startswith("https://shop.example/default?")


async def test_regions_and_cities_from_an_mmdb_file(aiohttp_client: Any, settings: Settings, tmp_path: Any) -> None:
    from mmdb_writer import MMDBWriter
    from netaddr import IPSet

    writer = MMDBWriter(ip_version=6, database_type="GeoIP2-City", ipv4_compatible=True)
    writer.insert_network(IPSet(["8.8.8.0/24"]), {"country": {"iso_code": "US"}, "subdivisions": [{"iso_code": "CA"}],
                                                  "city": {"names": {"en": "Mountain View"}}})
    path = tmp_path / "city.mmdb"
    writer.to_db_file(str(path))
    client = await aiohttp_client(service_server(create_app(dataclasses.replace(settings, geo_mmdb=str(path)))))
    await load_seed(client.app[DB], _links(), allow_private=True)
    response = await client.post(LINKS, json={"code": "smart-3", "kind": "external", "destination_url":
                                              "https://shop.example/default", "rules": [
        {"name": "california", "conditions": {"regions": ["us-ca"]},
         "target": {"destination_url": "https://shop.example/ca"}}]}, headers=ADMIN)
    assert response.status == 201, await response.text()
    assert (await click(client, "/smart-3", USA)).headers["Location"].startswith("https://shop.example/ca?")
    assert (await click(client, "/smart-3", JAPAN)).headers["Location"].startswith("https://shop.example/default?")
    assert await stored_clicks(client, "smart-3") == [("US", "US-CA", "Mountain View", "california", "destination"),
                                                      ("JP", None, None, None, "destination")]
