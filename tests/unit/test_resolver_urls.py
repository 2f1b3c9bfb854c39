"""Pure resolver rules: query editing, UTM precedence, intent URLs and the Play install referrer."""

from __future__ import annotations

from urllib.parse import quote, unquote, unquote_plus, urlsplit, urlunsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from linksvc.links.appstores import intent_url, play_store_url, read_install_referrer
from linksvc.links.urls import query_values, with_query
from linksvc.links.utm import default_utm, resolve_utm, utm_of_url

# Any text a marketer or a client might put in a value, the troublesome characters made likely.
values = st.text(st.one_of(st.sampled_from("+&=% #?/;é中😀"), st.characters(codec="utf-8")), min_size=1, max_size=30)


@pytest.mark.parametrize(
    ("url", "updates", "remove", "expected"),
    [
        ("https://s.example/p?a=1&b=2#top", {"utm_source": "x"}, (), "https://s.example/p?a=1&b=2&utm_source=x#top"),
        ("https://s.example/p?utm_source=old&a=1", {"utm_source": "new"}, (), "https://s.example/p?utm_source=new&a=1"),
        ("https://s.example/p?a=%7E+b&utm_medium=m", {}, ("utm_medium",), "https://s.example/p?a=%7E+b"),
        ("https://s.example/p?x=1&x=2&y", {"x": "3"}, (), "https://s.example/p?x=3&y"),
        ("https://s.example/p", {"k": "a b&c"}, (), "https://s.example/p?k=a%20b%26c"),
        ("https://s.example/p?a=1#f?x=1", {"b": "2"}, (), "https://s.example/p?a=1&b=2#f?x=1"),
    ],
)
def test_with_query(url: str, updates: dict[str, str], remove: tuple[str, ...], expected: str) -> None:
    assert with_query(url, updates, remove) == expected


@given(st.dictionaries(st.sampled_from(["a", "b", "page", "ref"]), values, max_size=4), values)
def test_other_parameters_and_fragment_stay(others: dict[str, str], utm: str) -> None:
    base = with_query("https://s.example/path", others) + "#frag-1"
    edited = with_query(base, {"utm_source": utm})
    assert query_values(edited) == {**others, "utm_source": utm}
    assert edited.endswith("#frag-1")
    # The other parameters keep their exact text and order; the new field comes after them.
    assert urlsplit(edited).query.startswith(urlsplit(base).query)


def _urllib_with_query(url: str, updates: dict[str, str], remove: tuple[str, ...]) -> str:
    """What ``with_query`` did when it was written on ``urlsplit``/``urlunsplit``/``quote`` (kept here as
    the reference: the fast string version must give the same text)."""
    parts = urlsplit(url)
    dropped = set(remove) - set(updates)
    pending = dict(updates)
    segments = []
    for segment in parts.query.split("&") if parts.query else []:
        key = unquote_plus(segment.split("=", 1)[0])
        if key in dropped:
            continue
        if key in updates:
            if key in pending:
                segments.append(f"{quote(key, safe='-._~')}={quote(pending.pop(key), safe='-._~')}")
            continue
        segments.append(segment)
    segments += [f"{quote(k, safe='-._~')}={quote(v, safe='-._~')}" for k, v in pending.items()]
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "&".join(segments), parts.fragment))


url_text = st.text(st.sampled_from("ab%+=&?#/é:2"), max_size=12)
stored_urls = st.builds(
    lambda scheme, host, path, query, fragment: f"{scheme}://{host}/{path}{query}{fragment}",
    st.sampled_from(["https", "http", "myapp"]), st.sampled_from(["s.example", "x.example:8443"]), url_text,
    st.one_of(st.just(""), url_text.map(lambda q: "?" + q)), st.one_of(st.just(""), url_text.map(lambda f: "#" + f)),
)
keys = st.sampled_from(["a", "utm_source", "utm_medium", "tracking_id", "a b", "é", "x%"])


@given(stored_urls, st.dictionaries(keys, values, max_size=4), st.lists(keys, max_size=3))
def test_with_query_gives_what_urllib_gives(url: str, updates: dict[str, str], remove: list[str]) -> None:
    assert with_query(url, updates, remove) == _urllib_with_query(url, updates, tuple(remove))
    assert query_values(url) == {
        unquote_plus(k): unquote_plus(v)
        for k, _, v in reversed([s.partition("=") for s in urlsplit(url).query.split("&") if s])
    }


INCOMING = {"utm_source": "in", "utm_medium": ""}
DEST = "https://s.example/p?utm_source=dest&utm_medium=dest-m&x=1"
FALLBACK = "https://s.example/f?utm_campaign=fb-c&utm_term=fb-t"
PLAY = ("https://play.google.com/store/apps/details?id=com.a&referrer="
        "utm_content%3Dref-content%26utm_term%3Dref-term")


@pytest.mark.parametrize(
    ("incoming", "destination", "fallback", "defaults", "expected"),
    [
        # incoming non-empty wins; empty incoming never erases
        (INCOMING, DEST, None, {}, {"utm_source": "in", "utm_medium": "dest-m"}),
        # then the fallback fills what is still missing
        (INCOMING, DEST, FALLBACK, {}, {"utm_source": "in", "utm_medium": "dest-m", "utm_campaign": "fb-c",
                                        "utm_term": "fb-t"}),
        # a Play URL's referrer counts as the fallback's fields; its own parameters come first
        ({}, "https://s.example/", PLAY + "&utm_term=own", {},
         {"utm_term": "own", "utm_content": "ref-content"}),
        # defaults only fill what no source has
        ({}, DEST, None, {"utm_source": "svc", "utm_medium": "email", "utm_campaign": "c-1"},
         {"utm_source": "dest", "utm_medium": "dest-m", "utm_campaign": "c-1"}),
        ({}, "https://s.example/", None, {}, {}),
    ],
)
def test_utm_precedence(incoming, destination, fallback, defaults, expected) -> None:
    assert resolve_utm(incoming, destination, fallback, defaults) == expected


@pytest.mark.parametrize(
    ("kind", "campaign", "template", "expected"),
    [
        ("email", "c-1", "t-1", {"utm_source": "linksvc", "utm_medium": "email", "utm_campaign": "c-1"}),
        ("push", None, "t-1", {"utm_source": "linksvc", "utm_medium": "push", "utm_campaign": "t-1"}),
        ("whatsapp", None, None, {"utm_source": "linksvc", "utm_medium": "whatsapp"}),
        ("in_app", "c-1", None, {}),
        ("news_feed", "c-1", None, {}),
        ("external", "c-1", None, {}),
        ("campaign", "c-1", None, {}),
    ],
)
def test_defaults_by_kind(kind: str, campaign: str | None, template: str | None, expected: dict[str, str]) -> None:
    assert default_utm(kind, "linksvc", campaign, template) == expected


def test_utm_of_url_ignores_empty_values() -> None:
    assert utm_of_url("https://s.example/?utm_source=&utm_medium=%20&utm_term=t") == {"utm_term": "t"}


@given(st.dictionaries(st.sampled_from(["utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content",
                                        "tracking_id", "link"]), values, min_size=1))
def test_install_referrer_round_trip(fields: dict[str, str]) -> None:
    url = play_store_url("com.democoffee.app", fields)
    assert url.startswith("https://play.google.com/store/apps/details?id=com.democoffee.app&referrer=")
    assert read_install_referrer(url) == fields
    # The referrer parameter holds no raw separator of the outer URL.
    assert "&" not in url.split("referrer=", 1)[1] and "=" not in url.split("referrer=", 1)[1]


def test_stored_referrer_fields_are_kept() -> None:
    stored = "https://play.google.com/store/apps/details?id=com.a&hl=es&referrer=utm_source%3Dold%26gclid%3DG1"
    url = play_store_url("com.a", {"utm_source": "new", "tracking_id": "T"}, stored)
    assert read_install_referrer(url) == {"utm_source": "new", "gclid": "G1", "tracking_id": "T"}
    assert query_values(url)["hl"] == "es"


@given(values)
def test_intent_url_fallback_survives_exactly(extra: str) -> None:
    fallback = with_query("https://s.example/p?a=1#top", {"utm_source": extra})
    url = intent_url("democoffee://menu/item?id=5", "com.democoffee.app", fallback)
    data, _, intent = url.rpartition("#Intent;")  # Intent.parseUri reads from the last '#'
    assert data == "intent://menu/item?id=5"
    assert intent.endswith(";end")
    extras = dict(part.split("=", 1) for part in intent.removesuffix(";end").split(";"))
    assert extras["scheme"] == "democoffee" and extras["package"] == "com.democoffee.app"
    assert unquote(extras["S.browser_fallback_url"]) == fallback


def test_intent_url_of_an_https_target() -> None:
    url = intent_url("https://shop.example/p?x=1", "com.a", "https://shop.example/p?x=1")
    assert url == ("intent://shop.example/p?x=1#Intent;scheme=https;package=com.a;"
                   "S.browser_fallback_url=https%3A%2F%2Fshop.example%2Fp%3Fx%3D1;end")
