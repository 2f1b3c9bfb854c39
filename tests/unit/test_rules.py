"""The rules of smart links (linksvc.rules): each condition, table-driven, and the order rules are tried in."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from linksvc.links.devices import classify
from linksvc.rules.agents import agent_facts
from linksvc.rules.engine import Facts, compile_rules, explain, pick, with_target
from linksvc.rules.geo import Geo, place_of_record, registry_country
from linksvc.rules.languages import client_languages, preferences

CHROME_ANDROID = ("Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) "
                  "Chrome/124.0.0.0 Mobile Safari/537.36")
CHROME_ANDROID_TABLET = ("Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) "
                         "Chrome/124.0.0.0 Safari/537.36")
SAFARI_IPHONE = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
                 "Version/17.4 Mobile/15E148 Safari/604.1")
SAFARI_IPAD = ("Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
               "Version/17.4 Mobile/15E148 Safari/604.1")
FIREFOX_WINDOWS = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0"
SAFARI_MAC = ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
              "Version/17.4 Safari/605.1.15")
CHROME_LINUX = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36"
CHROMEBOOK = ("Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 "
              "Safari/537.36")
SMART_TV = ("Mozilla/5.0 (SMART-TV; LINUX; Tizen 6.0) AppleWebKit/537.36 (KHTML, like Gecko) 76.0.3809.146/6.0 TV "
            "Safari/537.36")
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"

# Accept-Language as browsers send it.
CHROME_EN_US = "en-US,en;q=0.9"
CHROME_DE = "de-DE,de;q=0.9,en-US;q=0.8,en;q=0.7"
CHROME_PT_BR = "pt-BR,pt;q=0.9,en-US;q=0.8,en;q=0.7"
SAFARI_EN_GB = "en-GB,en;q=0.9"
SAFARI_FR = "fr-FR,fr;q=0.9"
FIREFOX_EN_US = "en-US,en;q=0.5"
FIREFOX_FR = "fr,fr-FR;q=0.8,en-US;q=0.5,en;q=0.3"
FIREFOX_ZH_TW = "zh-TW,zh;q=0.8,en-US;q=0.5,en;q=0.3"

# Addresses of known countries, from the iptocc package's own tests (bindings/python/tests/test_api.py).
KNOWN = [("41.0.0.1", "ZA"), ("2001:4200::1", "ZA"), ("1.0.16.1", "JP"), ("2001:200::1", "JP"),
         ("8.8.8.8", "US"), ("2001:4860:4860::8888", "US"), ("200.160.0.1", "BR"), ("2001:1280::1", "BR"),
         ("193.0.6.139", "NL"), ("2001:67c:18::1", "NL")]

GEO = Geo()
MONDAY_NOON_UTC = datetime(2026, 3, 2, 12, 0, tzinfo=ZoneInfo("UTC")).timestamp()


def facts(agent: str = SAFARI_IPHONE, query: dict[str, str] | None = None, now: float = MONDAY_NOON_UTC,
          language: str = "", referer: str = "", peer: str | None = "8.8.8.8", forwarded: str = "",
          trusted: tuple[Any, ...] = (), geo: Geo = GEO) -> Facts:
    return Facts(classify(agent), agent, query or {}, now, language, referer, peer, forwarded, trusted, geo)


def holds(conditions: dict[str, Any], click: Facts) -> bool:
    rules = compile_rules([{"name": "r", "conditions": conditions, "target": {"destination_url": "https://t.example"}}],
                          {})
    return pick(rules, click) is not None


@pytest.mark.parametrize(("header", "expected"), [
    (CHROME_EN_US, {"en-us", "en"}),
    (CHROME_DE, {"de-de", "de"}),
    (CHROME_PT_BR, {"pt-br", "pt"}),
    (SAFARI_EN_GB, {"en-gb", "en"}),
    (SAFARI_FR, {"fr-fr", "fr"}),
    (FIREFOX_EN_US, {"en-us", "en"}),
    (FIREFOX_FR, {"fr"}),
    (FIREFOX_ZH_TW, {"zh-tw", "zh"}),
    ("en;q=0.5, fr;q=0.8", {"fr"}),  # the order of the header is not the order of preference
    ("de, en", {"de", "en"}),  # ties all count
    ("zh-Hant-TW", {"zh-hant-tw", "zh-hant", "zh"}),
    ("*", set()),
    ("fr;q=0, en;q=0.1", {"en"}),
    ("", set()),
    ("en;q=high", set()),
    (";;,,", set()),
])
def test_the_clients_languages(header: str, expected: set[str]) -> None:
    assert client_languages(header) == expected


def test_preferences_are_ranked_by_quality() -> None:
    assert preferences(CHROME_DE) == [("de-de", 1.0), ("de", 0.9), ("en-us", 0.8), ("en", 0.7)]


@pytest.mark.parametrize(("rule", "header", "matches"), [
    (["pt"], CHROME_PT_BR, True),  # a rule "pt" takes pt-BR
    (["pt-BR"], CHROME_PT_BR, True),
    (["pt-PT"], CHROME_PT_BR, False),
    (["en"], CHROME_EN_US, True),
    (["en"], CHROME_DE, True),  # German preferred, but the link has no German: English is accepted
    (["es"], CHROME_DE, False),  # not accepted at all
    (["de"], CHROME_DE, True),
    (["en-GB"], SAFARI_EN_GB, True),
    (["en-US"], SAFARI_EN_GB, False),
    (["fr"], SAFARI_FR, True),
    (["FR"], FIREFOX_FR, True),
    (["fr-FR"], FIREFOX_FR, True),  # Firefox's first choice is plain fr, then fr-FR at 0.8
    (["en"], FIREFOX_EN_US, True),
    (["zh"], FIREFOX_ZH_TW, True),
    (["zh-TW"], FIREFOX_ZH_TW, True),
    (["es", "fr"], FIREFOX_FR, True),
    (["en"], "", False),
])
def test_languages(rule: list[str], header: str, matches: bool) -> None:
    assert holds({"languages": rule}, facts(language=header)) is matches


def _language_rules(*tags: str) -> Any:
    return compile_rules([{"name": tag, "conditions": {"languages": [tag]},
                           "target": {"destination_url": f"https://{tag.lower()}.example"}} for tag in tags], {})


@pytest.mark.parametrize(("tags", "header", "picked"), [
    # Negotiated as a server negotiates content: the client's most preferred language the link offers wins,
    # whatever the order of the rules.
    (("en", "de"), CHROME_DE, "de"),
    (("de", "en"), CHROME_DE, "de"),
    (("en", "fr"), CHROME_DE, "en"),  # no German: the English it accepts at 0.7
    (("en-US", "en"), SAFARI_EN_GB, "en"),  # British English: the rule "en" takes it, "en-US" does not
    (("en", "en-GB"), SAFARI_EN_GB, "en"),  # both take it: the first rule in order
    (("fr-FR", "en"), FIREFOX_FR, "fr-FR"),  # Firefox's plain fr first, then fr-FR at 0.8: offered
    (("pt-PT", "es"), CHROME_PT_BR, None),  # neither pt-BR nor pt (nor en) is offered
    (("en", "de"), "de, en", "de"),  # equal quality: the header's order
    (("en", "de"), "", None),
])
def test_the_clients_language_is_negotiated_against_the_links(tags: tuple[str, ...], header: str,
                                                             picked: str | None) -> None:
    rule = pick(_language_rules(*tags), facts(language=header))
    assert (rule.name if rule else None) == picked


def test_a_language_rule_explained_names_the_negotiated_language() -> None:
    rules = _language_rules("en", "de")
    [first, second] = explain(rules, facts(language=CHROME_DE))
    assert not first.matched and first.why == ("does not hold: languages en: of the link's languages, the client "
                                               "prefers de-de, de")
    assert second.matched


@pytest.mark.parametrize(("address", "country"), KNOWN)
def test_the_registries_country_of_known_addresses(address: str, country: str) -> None:
    assert registry_country(address) == country
    assert holds({"countries": [country]}, facts(peer=address))
    assert not holds({"countries": ["FR"]}, facts(peer=address))


@pytest.mark.parametrize("address", ["10.0.0.1", "127.0.0.1", "::1", "192.168.1.1", "not-an-ip", ""])
def test_private_and_unknown_addresses_have_no_country(address: str) -> None:
    assert registry_country(address) is None
    assert not holds({"countries": ["US"]}, facts(peer=address))


def test_an_ipv4_mapped_peer_is_its_ipv4_address() -> None:
    assert holds({"countries": ["JP"]}, facts(peer="::ffff:1.0.16.1"))


@pytest.mark.parametrize(("peer", "forwarded", "trusted", "country"), [
    ("8.8.8.8", "1.0.16.1", (), "US"),  # no trusted proxy: the header is not believed
    ("10.0.0.2", "1.0.16.1", ("10.0.0.0/8",), "JP"),  # a trusted proxy: the client it names
    ("10.0.0.2", "41.0.0.1, 1.0.16.1", ("10.0.0.0/8",), "JP"),  # the rightmost address not a proxy
    ("10.0.0.2", "41.0.0.1, 1.0.16.1, 10.0.0.9", ("10.0.0.0/8",), "JP"),
    ("8.8.8.8", "1.0.16.1", ("10.0.0.0/8",), "US"),  # the peer is no proxy of ours
])
def test_the_client_behind_trusted_proxies(peer: str, forwarded: str, trusted: tuple[str, ...], country: str) -> None:
    from linksvc.client_address import parse_networks

    click = facts(peer=peer, forwarded=forwarded, trusted=parse_networks(",".join(trusted)))
    assert click.where().country == country


@pytest.mark.parametrize(("conditions", "agent", "matches"), [
    ({"platforms": ["ios"]}, SAFARI_IPHONE, True),
    ({"platforms": ["android"]}, SAFARI_IPHONE, False),
    ({"platforms": ["desktop"]}, FIREFOX_WINDOWS, True),
    ({"os": ["ios"]}, SAFARI_IPAD, True),
    ({"os": ["android"]}, CHROME_ANDROID, True),
    ({"os": ["windows"]}, FIREFOX_WINDOWS, True),
    ({"os": ["macos"]}, SAFARI_MAC, True),
    ({"os": ["linux"]}, CHROME_LINUX, True),
    ({"os": ["chromeos"]}, CHROMEBOOK, True),
    ({"os": ["linux"]}, CHROMEBOOK, False),
    ({"browsers": ["safari"]}, SAFARI_IPHONE, True),
    ({"browsers": ["chrome"]}, CHROME_ANDROID, True),
    ({"browsers": ["firefox"]}, FIREFOX_WINDOWS, True),
    ({"browsers": ["chrome"]}, FIREFOX_WINDOWS, False),
    ({"devices": ["mobile"]}, SAFARI_IPHONE, True),
    ({"devices": ["tablet"]}, SAFARI_IPAD, True),
    ({"devices": ["mobile"]}, CHROME_ANDROID, True),
    ({"devices": ["tablet"]}, CHROME_ANDROID_TABLET, True),
    ({"devices": ["desktop"]}, SAFARI_MAC, True),
    ({"devices": ["tv"]}, SMART_TV, True),
    ({"devices": ["desktop"]}, SMART_TV, False),
    ({"bot": True}, GOOGLEBOT, True),
    ({"bot": False}, GOOGLEBOT, False),
    ({"bot": False}, SAFARI_IPHONE, True),
    ({"bot": True}, SAFARI_IPHONE, False),
    ({"devices": ["mobile"], "bot": False}, GOOGLEBOT, False),
])
def test_device_conditions(conditions: dict[str, Any], agent: str, matches: bool) -> None:
    assert holds(conditions, facts(agent=agent)) is matches


def test_agent_facts_of_no_agent() -> None:
    assert agent_facts("") == ("other", "other")


# Monday 2 March 2026, 12:00 UTC is 13:00 in Paris, 21:00 in Tokyo, 07:00 in New York.
@pytest.mark.parametrize(("window", "matches"), [
    ({"timezone": "Europe/Paris", "days": ["mon"]}, True),
    ({"timezone": "Europe/Paris", "days": ["tue", "wed"]}, False),
    ({"timezone": "Europe/Paris", "from": "12:00", "to": "14:00"}, True),
    ({"timezone": "Europe/Paris", "from": "13:00", "to": "13:01"}, True),
    ({"timezone": "Europe/Paris", "from": "12:00", "to": "13:00"}, False),  # "to" is not included
    ({"timezone": "UTC", "from": "12:00", "to": "14:00"}, True),
    ({"timezone": "America/New_York", "from": "09:00", "to": "17:00"}, False),
    ({"timezone": "America/New_York", "days": ["mon"], "from": "06:00", "to": "08:00"}, True),
    ({"timezone": "Asia/Tokyo", "from": "20:00", "to": "02:00"}, True),  # past midnight
    ({"timezone": "Asia/Tokyo", "days": ["sun"], "from": "20:00", "to": "02:00"}, False),
    ({"timezone": "Asia/Tokyo", "days": ["mon"], "from": "20:00", "to": "02:00"}, True),
])
def test_time_windows(window: dict[str, Any], matches: bool) -> None:
    assert holds({"time": window}, facts()) is matches


def test_a_window_past_midnight_belongs_to_the_day_it_starts() -> None:
    # Tuesday 01:00 in Tokyo (Monday 16:00 UTC) is in Monday's 20:00-02:00, not Tuesday's.
    tuesday_one_am = datetime(2026, 3, 3, 1, 0, tzinfo=ZoneInfo("Asia/Tokyo")).timestamp()
    monday = {"timezone": "Asia/Tokyo", "days": ["mon"], "from": "20:00", "to": "02:00"}
    tuesday = {"timezone": "Asia/Tokyo", "days": ["tue"], "from": "20:00", "to": "02:00"}
    assert holds({"time": monday}, facts(now=tuesday_one_am))
    assert not holds({"time": tuesday}, facts(now=tuesday_one_am))


@pytest.mark.parametrize(("query", "click", "matches"), [
    ([{"param": "ref", "present": True}], {"ref": ""}, True),
    ([{"param": "ref", "present": True}], {}, False),
    ([{"param": "ref", "present": False}], {}, True),
    ([{"param": "ref", "present": False}], {"ref": "x"}, False),
    ([{"param": "src", "equals": "mail"}], {"src": "mail"}, True),
    ([{"param": "src", "equals": "mail"}], {"src": "Mail"}, False),
    ([{"param": "src", "one_of": ["mail", "sms"]}], {"src": "sms"}, True),
    ([{"param": "src", "one_of": ["mail", "sms"]}], {"src": "push"}, False),
    ([{"param": "src", "equals": "mail"}, {"param": "v", "present": True}], {"src": "mail"}, False),
    ([{"param": "src", "equals": "mail"}, {"param": "v", "present": True}], {"src": "mail", "v": "2"}, True),
])
def test_query_conditions(query: list[dict[str, Any]], click: dict[str, str], matches: bool) -> None:
    assert holds({"query": query}, facts(query=click)) is matches


@pytest.mark.parametrize(("networks", "peer", "matches"), [
    (["8.8.8.0/24"], "8.8.8.8", True),
    (["8.8.4.0/24"], "8.8.8.8", False),
    (["8.8.8.8/32"], "8.8.8.8", True),
    (["2001:4860::/32"], "2001:4860:4860::8888", True),
    (["2001:4860::/32"], "8.8.8.8", False),
    (["0.0.0.0/0"], "2001:4860:4860::8888", False),  # an IPv4 network takes no IPv6 client
    (["10.0.0.0/8", "2001:db8::/32"], "2001:db8::7", True),
    (["1.0.16.0/24"], "::ffff:1.0.16.1", True),
    (["10.0.0.0/8"], None, False),
])
def test_networks(networks: list[str], peer: str | None, matches: bool) -> None:
    assert holds({"networks": networks}, facts(peer=peer)) is matches


@pytest.mark.parametrize(("hosts", "referer", "matches"), [
    (["example.com"], "https://example.com/page", True),
    (["example.com"], "https://EXAMPLE.com:8443/page", True),
    (["example.com"], "https://www.example.com/", False),
    (["*.example.com"], "https://www.example.com/", True),
    (["*.example.com"], "https://a.b.example.com/x?y", True),
    (["*.example.com"], "https://example.com/", False),
    (["*.example.com"], "https://notexample.com/", False),
    (["*.example.com"], "https://www.example.com.evil.net/", False),
    (["t.co"], "https://user@t.co/abc", True),
    (["example.com"], "", False),
    (["example.com"], "android-app://com.google.android.gm/", False),
])
def test_referrer_hosts(hosts: list[str], referer: str, matches: bool) -> None:
    assert holds({"referrer_hosts": hosts}, facts(referer=referer)) is matches


RULES = [
    {"name": "ios-fr", "conditions": {"platforms": ["ios"], "countries": ["FR"]},
     "target": {"destination_url": "https://fr.example/ios"}},
    {"name": "us", "conditions": {"countries": ["US"]}, "target": {"destination_url": "https://us.example"}},
    {"name": "ios", "conditions": {"platforms": ["ios"]}, "target": {"destination_url": "https://ios.example"}},
    {"name": "other", "conditions": {"countries": ["JP"]}, "target": {"link": "other-code"}},
]


@pytest.mark.parametrize(("peer", "agent", "expected"), [
    ("8.8.8.8", SAFARI_IPHONE, "us"),  # the first rule that holds, not the most specific
    ("1.0.16.1", SAFARI_IPHONE, "ios"),
    ("1.0.16.1", FIREFOX_WINDOWS, "other"),
    ("41.0.0.1", FIREFOX_WINDOWS, None),
])
def test_rules_are_tried_in_order(peer: str, agent: str, expected: str | None) -> None:
    rules = compile_rules(RULES, {"other-code": {"destination_url": "https://other.example", "deeplink": None,
                                                 "android": None, "ios": None, "fallback_url": None}})
    found = pick(rules, facts(agent=agent, peer=peer))
    assert (found.name if found else None) == expected


def test_a_rule_to_a_link_not_found_is_skipped() -> None:
    rules = compile_rules(RULES, {})
    assert pick(rules, facts(agent=FIREFOX_WINDOWS, peer="1.0.16.1")) is None


def test_runs_of_one_condition_rules_keep_their_order() -> None:
    rules = compile_rules([
        {"name": "a", "conditions": {"countries": ["US", "JP"]}, "target": {"destination_url": "https://a.example"}},
        {"name": "b", "conditions": {"countries": ["US", "BR"]}, "target": {"destination_url": "https://b.example"}},
        {"name": "c", "conditions": {"platforms": ["desktop"]}, "target": {"destination_url": "https://c.example"}},
        {"name": "d", "conditions": {"countries": ["ZA"]}, "target": {"destination_url": "https://d.example"}},
    ], {})
    expected = {"8.8.8.8": "a", "200.160.0.1": "b", "41.0.0.1": "d", "193.0.6.139": None}
    for peer, name in expected.items():
        found = pick(rules, facts(peer=peer))
        assert (found.name if found else None) == name, peer
    found = pick(rules, facts(agent=FIREFOX_WINDOWS, peer="41.0.0.1"))
    assert found is not None and found.name == "c"


def test_the_target_replaces_the_links_own_urls_only() -> None:
    rules = compile_rules(RULES, {})
    rule = pick(rules, facts(peer="8.8.8.8"))
    assert rule is not None
    link = {"kind": "email", "destination_url": "https://own.example", "deeplink": "app://own",
            "android": {"package": "com.example"}, "campaign_id": "c1"}
    chosen = with_target(link, rule)
    assert chosen == {"kind": "email", "destination_url": "https://us.example", "deeplink": None, "android": None,
                      "ios": None, "fallback_url": None, "campaign_id": "c1"}


def test_explain_names_the_condition_that_did_not_hold() -> None:
    rules = compile_rules(RULES, {})
    verdicts = explain(rules, facts(agent=SAFARI_IPHONE, peer="1.0.16.1"))
    assert [(v.name, v.matched, v.failed) for v in verdicts] == [
        ("ios-fr", False, "countries"), ("us", False, "countries"), ("ios", True, None)]
    assert "JP" in verdicts[0].why


def test_place_of_mmdb_records() -> None:
    maxmind = {"country": {"iso_code": "US", "names": {"en": "United States"}},
               "subdivisions": [{"iso_code": "CA", "names": {"en": "California"}}],
               "city": {"names": {"en": "San Francisco"}}}
    place = place_of_record(maxmind)
    assert (place.country, place.region, place.city) == ("US", "US-CA", "San Francisco")
    ipinfo = {"country_code": "gb", "region_code": "eng", "city": "London"}
    found = place_of_record(ipinfo)
    assert (found.country, found.region, found.city) == ("GB", "GB-ENG", "London")
    assert place_of_record(None).country is None
    assert place_of_record({"country": "Germany"}).country is None


def test_an_mmdb_file_gives_region_and_city(tmp_path: Path) -> None:
    from mmdb_writer import MMDBWriter
    from netaddr import IPSet

    writer = MMDBWriter(ip_version=6, database_type="GeoIP2-City", ipv4_compatible=True)
    writer.insert_network(IPSet(["8.8.8.0/24"]), {
        "country": {"iso_code": "US"}, "subdivisions": [{"iso_code": "CA"}],
        "city": {"names": {"en": "Mountain View"}}})
    writer.insert_network(IPSet(["2001:200::/32"]), {
        "country": {"iso_code": "JP"}, "subdivisions": [{"iso_code": "13"}], "city": {"names": {"en": "Tokyo"}}})
    path = tmp_path / "city.mmdb"
    writer.to_db_file(str(path))
    geo = Geo(path)
    try:
        assert geo.place("8.8.8.8") == place_of_record({"country": {"iso_code": "US"}, "subdivisions": [
            {"iso_code": "CA"}], "city": {"names": {"en": "Mountain View"}}})
        assert (geo.place("2001:200::1").region, geo.place("2001:200::1").city) == ("JP-13", "Tokyo")
        # not in the file: the registries' country, no region
        assert (geo.place("1.0.16.1").country, geo.place("1.0.16.1").region) == ("JP", None)
        assert holds({"regions": ["US-CA"]}, facts(peer="8.8.8.8", geo=geo))
        assert not holds({"regions": ["US-NY"]}, facts(peer="8.8.8.8", geo=geo))
        assert geo.place("10.0.0.1").country is None
    finally:
        geo.close()


@pytest.mark.parametrize(("text", "expected"), [
    ("1.0.16.1", (4, 0x01001001)),
    ("::ffff:1.0.16.1", (4, 0x01001001)),
    ("2001:db8::1", (6, 0x20010DB8 << 96 | 1)),
    ("fe80::1%eth0", (6, 0xFE80 << 112 | 1)),
    ("", None), ("not-an-ip", None), ("1.2.3", None), ("1.2.3.4\x00", None), ("/run/linksvc.sock", None),
])
def test_address_numbers(text: str, expected: tuple[int, int] | None) -> None:
    from linksvc.rules.engine import address_number

    assert address_number(text) == expected
    assert registry_country(text) in (None, "JP")
