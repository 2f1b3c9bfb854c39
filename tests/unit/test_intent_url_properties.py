"""Nothing a link's author or a click can write adds or ends the ``#Intent;...;end`` section of the intent
URL: whatever deeplink and fallback pass the link rules, and whatever UTM and tracking id the click's query
carries, the intent URL has exactly one ``#Intent;``, ends with ``;end``, carries only our three extras, and
reads the same whether a parser looks for the last ``#`` (Android's ``Intent.parseUri``) or the first
``#Intent;``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from linksvc.links.appstores import intent_url
from linksvc.links.decide import decide
from linksvc.links.link_urls import URL_TEXT, deeplink_problem, web_url_problem
from linksvc.links.urls import query_values, split_url

FAST = settings(max_examples=150, deadline=None)
EXTRAS = ["scheme", "package", "S.browser_fallback_url"]
HOSTILE = ["#Intent;", "#intent;S.evil=1;end", ";end", ";S.evil=1", "#", ";", "=", "%23Intent%3B", "%3Bend",
           "\r\n", "\x00", "%0d%0a", " ", "&utm_source=evil", "é"]
# URL characters with the intent grammar's separators made likely.
URL_PIECES = st.one_of(st.sampled_from(["#Intent;", "#intent;", ";end", ";", "#", "=", "%23", "%3B", "S.evil=1",
                                        "end", "Intent", "/", "?", "&", "%0d%0a", "x"]),
                       st.text("abcXYZ019-._~:/?#[]@!$&'()*+,;=", max_size=3))
BODIES = st.lists(URL_PIECES, max_size=8).map("".join)
SCHEMES = st.one_of(st.sampled_from(["democoffee", "https", "my-app+v2.beta", "Intent", "JavaScript", "http"]),
                    st.from_regex(r"[A-Za-z][A-Za-z0-9+.\-]{0,6}", fullmatch=True))
DEEPLINKS = st.builds(lambda scheme, slashes, body: f"{scheme}:{slashes}{body}", SCHEMES,
                      st.sampled_from(["//", ""]), BODIES)
FALLBACKS = st.builds(lambda body: f"https://shop.example/{body}", BODIES)
CLICK_VALUES = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=12))


@dataclass(frozen=True)
class ChromeOnAndroid:
    platform: str = "android"
    chromium: bool = True
    bot: bool = False
    in_app: str | None = None


def android_parse(uri: str) -> tuple[str, dict[str, str]]:
    """What ``Intent.parseUri(uri, URI_INTENT_SCHEME)`` reads: the data before the last '#', then
    ``name=value;`` pairs (values decoded) up to ``end``."""
    i = uri.rfind("#")
    assert uri.startswith("#Intent;", i), uri
    data, extras, at = uri[:i], {}, i + len("#Intent;")
    while not uri.startswith("end", at):
        eq, semi = uri.find("=", at), uri.find(";", at)
        assert 0 <= eq < semi, uri
        extras[uri[at:eq]] = unquote(uri[eq + 1:semi])
        at = semi + 1
    assert at + len("end") == len(uri), uri
    return data, extras


def first_section_parse(uri: str) -> tuple[str, dict[str, str]]:
    """A reader that takes the first ``#Intent;`` instead."""
    data, _, section = uri.partition("#Intent;")
    pairs = section.removesuffix(";end").split(";")
    return data, {pair.split("=", 1)[0]: unquote(pair.split("=", 1)[1]) for pair in pairs}


def check_intent(url: str, scheme: str, package: str, fallback: str) -> str:
    """The properties every intent URL has; returns its data part."""
    assert URL_TEXT.fullmatch(url), url
    assert url.lower().count("#intent;") == 1 and url.endswith(";end"), url
    data, extras = android_parse(url)
    assert (data, extras) == first_section_parse(url)
    assert list(extras) == EXTRAS
    assert extras == {"scheme": scheme.lower(), "package": package, "S.browser_fallback_url": fallback}
    return data


@FAST
@given(DEEPLINKS, FALLBACKS, st.sampled_from(["com.demo.app", "com.a_b.c1"]))
def test_an_intent_url_of_any_accepted_deeplink_carries_only_our_extras(deeplink: str, fallback: str,
                                                                        package: str) -> None:
    assume(deeplink_problem(deeplink) is None and web_url_problem(fallback) is None)
    url = intent_url(deeplink, package, fallback)
    data = check_intent(url, deeplink.split(":", 1)[0], package, fallback)
    # The data part is the deeplink's own text after its scheme, its fragment kept (escaped where needed).
    assert data.removeprefix("intent://").split("#")[0] == deeplink.split(":", 1)[1].removeprefix("//").split("#")[0]


@FAST
@given(st.text("ab#;=Intendl%", max_size=16), st.sampled_from(["myapp://x", "https://shop.example/p?q=1"]))
def test_a_fragment_cannot_open_or_end_a_section_even_unchecked(fragment: str, target: str) -> None:
    url = intent_url(f"{target}#{fragment}", "com.demo.app", "https://shop.example/f")
    assert url.count("#Intent;") == 1 and url.count("#") == 2
    data, extras = android_parse(url)
    assert list(extras) == EXTRAS
    assert unquote(data.split("#", 1)[1]) == unquote(fragment)  # the app reads the same fragment back


FALLBACK = "https%3A%2F%2Fshop.example%2Ff"


@pytest.mark.parametrize(("target", "expected"), [
    ("democoffee://menu?x=1", "intent://menu?x=1#Intent;scheme=democoffee;"),
    ("DemoCoffee:menu", "intent://menu#Intent;scheme=democoffee;"),
    ("myapp://x#top", "intent://x#top#Intent;scheme=myapp;"),
    ("myapp://x#Intent;S.evil=1;end", "intent://x#Intent%3BS.evil=1%3Bend#Intent;scheme=myapp;"),
    ("myapp://x#a#b;end", "intent://x#a%23b%3Bend#Intent;scheme=myapp;"),
    ("myapp://x;end?q=;#f", "intent://x;end?q=;#f#Intent;scheme=myapp;"),
    ("myapp://[x/a", "intent://[x/a#Intent;scheme=myapp;"),  # urlsplit raised on this
    ("https://shop.example/p?x=1#top", "intent://shop.example/p?x=1#top#Intent;scheme=https;"),
])
def test_intent_urls_of_targets(target: str, expected: str) -> None:
    url = intent_url(target, "com.demo.app", "https://shop.example/f")
    assert url == f"{expected}package=com.demo.app;S.browser_fallback_url={FALLBACK};end"


def test_a_target_without_a_scheme_is_refused() -> None:
    with pytest.raises(ValueError):
        intent_url("//shop.example/p", "com.demo.app", "https://shop.example/f")


def link_of(deeplink: str | None, fallback: str | None) -> dict[str, Any]:
    return {"id": "l-1", "kind": "push", "campaign_id": "c-1", "template_id": None,
            "destination_url": "https://shop.example/p?x=1#top", "deeplink": deeplink,
            "android": {"package": "com.demo.app", "fallback_url": fallback}, "ios": None, "fallback_url": None}


@FAST
@given(st.one_of(st.none(), DEEPLINKS), st.one_of(st.none(), FALLBACKS),
       st.dictionaries(st.sampled_from(["utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content",
                                        "tracking_id"]), CLICK_VALUES, max_size=6))
def test_a_clicks_query_cannot_break_the_intent_url(deeplink: str | None, fallback: str | None,
                                                    query: dict[str, str]) -> None:
    assume(deeplink is None or deeplink_problem(deeplink) is None)
    assume(fallback is None or web_url_problem(fallback) is None)
    decision = decide(link_of(deeplink, fallback), ChromeOnAndroid(), query, False, "https://l.example/c", "t-new",
                      "linksvc")
    assert (decision.status, decision.answer, decision.skipped) == (302, "intent", ())
    assert decision.location is not None
    target = deeplink or "https://shop.example/p?x=1#top"
    _, extras = android_parse(decision.location)
    data = check_intent(decision.location, target.split(":", 1)[0], "com.demo.app", extras["S.browser_fallback_url"])
    # Each carried value is one parameter of the data and of the fallback, whatever it holds.
    carried = {**decision.utm, "tracking_id": decision.tracking_id}
    for url in (data, extras["S.browser_fallback_url"]):
        if split_url(url)[0].endswith("/details"):
            continue  # the Play page carries them inside its referrer (tests/unit/test_appstores_properties.py)
        values = query_values(url)
        assert {key: values.get(key) for key in carried} == carried, url


@FAST
@given(st.one_of(st.none(), st.text(max_size=30), DEEPLINKS), st.one_of(st.none(), st.text(max_size=30), FALLBACKS),
       st.text(max_size=30), st.dictionaries(st.sampled_from(["utm_source", "tracking_id", "$app-found"]),
                                             CLICK_VALUES, max_size=3), st.sampled_from(["android", "ios", "desktop"]))
def test_a_stored_link_never_answers_a_location_a_header_cannot_carry(deeplink: str | None, fallback: str | None,
                                                                      destination: str, query: dict[str, str],
                                                                      platform: str) -> None:
    # Links stored before the rules, unchecked: the answer is a clean URL or the broken page, never an error.
    link = {**link_of(deeplink, fallback), "destination_url": "https://shop.example/" + destination,
            "ios": {"app_store_id": "1", "fallback_url": fallback}}
    device = ChromeOnAndroid(platform=platform)
    for accepts_json in (False, True):
        decision = decide(link, device, query, accepts_json, "https://l.example/c", "t-new", "linksvc")
        if decision.status == 302:
            assert decision.location is not None and URL_TEXT.fullmatch(decision.location)
        elif decision.status == 200:
            assert decision.body is not None
            data = decision.body["data"]
            assert all(url is None or URL_TEXT.fullmatch(url) for url in (data["deeplink"], data["destination_url"]))
        else:
            assert (decision.status, decision.answer, decision.location) == (502, "broken", None)
            assert web_url_problem(link["destination_url"], https_only=True) is not None
