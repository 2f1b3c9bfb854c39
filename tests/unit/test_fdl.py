"""Firebase Dynamic Links long links and exports (linksvc.links.fdl), against Firebase's own parameter table
("Manually constructing a Dynamic Link URL") and the migration guide's example link; and the resolver's answer
to such a link on every platform (linksvc.links.decide, the same function stored links go through)."""

from __future__ import annotations

from urllib.parse import parse_qs, unquote, urlsplit

import pytest

from linksvc.errors import InvalidField
from linksvc.links.decide import decide
from linksvc.links.devices import classify
from linksvc.links.fdl import PARAMETERS, export_rows, link_of_long_link, parameters_of, short_path
from linksvc.links.fdl_service import checked_long_link, long_links_code
from tests.agents import AGENTS

# The migration guide's example (https://firebase.google.com/support/guides/app-links-universal-links).
GUIDE = ("https://example.page.link/?link=https://example.web.app/welcome&apn=com.example.android"
         "&isi=123456789&ibi=com.example.ios")
FULL = ("https://go.shop.example/?link=https%3A%2F%2Fshop.example%2Foffer%3Fid%3D7&apn=com.shop.app&amv=42"
        "&afl=https%3A%2F%2Fshop.example%2Fandroid&ibi=com.shop.ios&isi=1234567&ifl=https%3A%2F%2Fshop.example%2Fios"
        "&ius=shopapp&ipfl=https%3A%2F%2Fshop.example%2Fipad&ipbi=com.shop.ipad&imv=3.1&efr=1"
        "&ofl=https%3A%2F%2Fshop.example%2Fdesktop&utm_source=newsletter&utm_medium=email&utm_campaign=bf"
        "&utm_term=coffee&utm_content=hero&gclid=abc&at=1010l&ct=bf-mail&mt=8&pt=99&st=Black+Friday"
        "&sd=Half+price&si=https%3A%2F%2Fshop.example%2Fog.png&d=0")
UA = {**AGENTS, "desktop": AGENTS["chrome_windows"]}
TABLE = ("link", "apn", "afl", "amv", "ibi", "ifl", "ius", "ipfl", "ipbi", "isi", "imv", "efr", "ofl",
         "utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content", "gclid", "at", "ct", "mt", "pt",
         "st", "sd", "si", "d")


def test_every_parameter_of_firebases_table_is_known() -> None:
    assert set(TABLE) <= set(PARAMETERS)


def test_the_guides_example_becomes_a_link() -> None:
    long = link_of_long_link(parameters_of(GUIDE))
    assert long.body == {"kind": "external", "destination_url": "https://example.web.app/welcome",
                         "deeplink": "https://example.web.app/welcome",
                         "android": {"package": "com.example.android", "fallback_url": None},
                         "ios": {"bundle_id": "com.example.ios", "app_store_id": "123456789", "fallback_url": None}}
    assert long.utm == {}


def test_every_parameter_lands_where_the_table_says() -> None:
    query = parameters_of(FULL)
    long = link_of_long_link(query)
    assert long.body["deeplink"] == "https://shop.example/offer?id=7"
    assert long.body["destination_url"] == "https://shop.example/desktop"  # ofl
    assert long.body["android"] == {"package": "com.shop.app", "fallback_url": "https://shop.example/android"}
    assert long.body["ios"] == {"bundle_id": "com.shop.ios", "app_store_id": "1234567",
                                "fallback_url": "https://shop.example/ios"}
    assert long.body["preview"] == {"title": "Black Friday", "description": "Half price",
                                    "image_url": "https://shop.example/og.png"}
    assert long.utm == {"utm_source": "newsletter", "utm_medium": "email", "utm_campaign": "bf",
                        "utm_term": "coffee", "utm_content": "hero"}
    assert long.app_store_tokens == {"at": "1010l", "ct": "bf-mail", "mt": "8", "pt": "99"}


def _answer(long_link: str, agent: str) -> tuple[int, str | None, str]:
    query = parameters_of(long_link)
    body, long = checked_long_link(query, "5e000000-0000-4000-8000-000000000001")
    body.setdefault("preview", None)
    decision = decide(body, classify(agent), dict(long.utm), False, "https://go.shop.example/fdl",
                      "t" * 32, "linksvc")
    return decision.status, decision.location, decision.answer


def test_android_chrome_gets_the_intent_url_of_the_package_with_afl_behind_it() -> None:
    status, location, answer = _answer(FULL, UA["chrome_android"])
    assert (status, answer) == (302, "intent") and location is not None
    assert location.startswith("intent://shop.example/offer?id=7") and ";package=com.shop.app;" in location
    fallback = unquote(location.split("S.browser_fallback_url=")[1].split(";")[0])
    assert fallback.startswith("https://shop.example/android?")
    assert parse_qs(urlsplit(fallback).query)["utm_campaign"] == ["bf"]


def test_android_without_afl_goes_to_the_play_store_with_the_referrer() -> None:
    status, location, answer = _answer(GUIDE + "&utm_source=qr", UA["firefox_android"])
    assert (status, answer) == (302, "play") and location is not None
    query = parse_qs(urlsplit(location).query)
    assert query["id"] == ["com.example.android"]
    referrer = parse_qs(query["referrer"][0])
    assert referrer["utm_source"] == ["qr"] and referrer["tracking_id"] == ["t" * 32]


def test_iphone_goes_to_ifl_or_the_app_store() -> None:
    _, location, answer = _answer(FULL, UA["iphone"])
    assert answer == "fallback" and location is not None and location.startswith("https://shop.example/ios?")
    _, location, answer = _answer(GUIDE, UA["iphone"])
    assert answer == "app_store" and location is not None
    assert location.startswith("https://apps.apple.com/app/id123456789")


def test_desktop_and_bots_go_to_ofl_else_the_deep_link() -> None:
    for agent in (UA["desktop"], UA["googlebot"]):
        _, location, _ = _answer(FULL, agent)
        assert location is not None and location.startswith("https://shop.example/desktop?")
        assert parse_qs(urlsplit(location).query)["tracking_id"] == ["t" * 32]
    _, location, _ = _answer(GUIDE, UA["desktop"])
    assert location is not None and location.startswith("https://example.web.app/welcome?")


@pytest.mark.parametrize(("long_link", "parameter"), [
    ("https://go.example/?apn=com.a.b", "link"),
    ("https://go.example/?link=javascript:alert(1)", "link"),
    ("https://go.example/?link=https://a.example/&apn=not+a+package", "apn"),
    ("https://go.example/?link=https://a.example/&isi=abc", "isi"),
    ("https://go.example/?link=https://a.example/&ofl=ftp://a.example/", "ofl"),
    ("https://go.example/?link=https://a.example/&apn=com.a.b&afl=http://", "afl"),
])
def test_a_wrong_parameter_is_named(long_link: str, parameter: str) -> None:
    with pytest.raises(InvalidField) as refused:
        checked_long_link(parameters_of(long_link), "id")
    assert parameter in [issue.path for issue in refused.value.issues]


def test_an_export_with_firebases_columns() -> None:
    text = ("\ufeffLink name,Short Dynamic Link,Long Dynamic Link,Deep link\r\n"
            f"Welcome,https://example.page.link/m9Mm,\"{GUIDE}\",https://example.web.app/welcome\r\n"
            ",,,\r\n"
            "Other,https://example.page.link/x_1,https://example.page.link/?link=https://a.example/,\r\n")
    rows = export_rows(text)
    assert [(r.line, r.short_link, r.name) for r in rows] == [
        (2, "https://example.page.link/m9Mm", "Welcome"), (4, "https://example.page.link/x_1", "Other")]
    assert rows[0].parameters == parameters_of(GUIDE)
    snake = export_rows("short_link,long_link\nhttps://a.example/abc,https://a.example/?link=https://b.example/\n")
    assert snake[0].short_link == "https://a.example/abc" and snake[0].name is None


def test_short_paths() -> None:
    assert short_path("https://Example.Page.Link/m9Mm") == ("example.page.link", "m9Mm")
    for wrong in ("https://example.page.link/", "https://example.page.link/a/b", "ftp://x.example/a",
                  "https://example.page.link/a?x=1", "not a url"):
        assert short_path(wrong) is None


def test_the_long_links_code_is_a_code() -> None:
    code = long_links_code("go.shop.example")
    assert code == long_links_code("go.shop.example") != long_links_code("other.example")
    assert 3 <= len(code) <= 64 and code.replace("-", "").isalnum()
