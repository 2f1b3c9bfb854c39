"""Properties of the URLs into the stores and apps (product decisions, section 11, step 3): the Play install
referrer round-trips through its two levels of encoding and keeps a stored referrer's fields, and an intent
URL hands Android its target and fallback exactly, whatever characters they hold."""

from __future__ import annotations

import re
from urllib.parse import unquote, unquote_plus

from hypothesis import given, settings
from hypothesis import strategies as st

from linksvc.links.appstores import intent_url, play_store_url, read_install_referrer
from linksvc.links.urls import query_values, split_url, with_query

FAST = settings(max_examples=80, deadline=None)
# The separators of both levels (and of an intent URL) made likely.
TEXT = st.text(st.one_of(st.sampled_from("+&=%#?;/ é中😀"), st.characters(codec="utf-8")), max_size=16)
KEYS = st.sampled_from(["utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content", "tracking_id", "link",
                        "gclid", "a b", "k=v", "é"])
FIELDS = st.dictionaries(KEYS, TEXT, max_size=6)
ESCAPED = re.compile(r"(?:[A-Za-z0-9._~-]|%[0-9A-F]{2})*")


def referrer_text(url: str) -> str:
    """The raw ``referrer`` parameter of a store URL, as it stands in the URL."""
    return next(s for s in split_url(url)[1].split("&") if s.startswith("referrer=")).removeprefix("referrer=")


@FAST
@given(FIELDS)
def test_the_app_reads_back_every_field(fields: dict[str, str]) -> None:
    url = play_store_url("com.demo.app", fields)
    assert read_install_referrer(url) == fields
    # Level two leaves only unreserved characters and escapes: no decoder (``+`` as space or not) and no
    # separator of the store URL can change what the app receives.
    raw = referrer_text(url)
    assert ESCAPED.fullmatch(raw)
    assert unquote(raw) == unquote_plus(raw)


@FAST
@given(FIELDS, FIELDS, st.dictionaries(st.sampled_from(["hl", "gl", "pcampaignid"]), TEXT, max_size=2))
def test_a_stored_referrers_fields_and_the_store_urls_parameters_are_kept(stored: dict[str, str],
                                                                          fields: dict[str, str],
                                                                          others: dict[str, str]) -> None:
    stored_url = with_query(play_store_url("com.demo.app", stored), others)
    url = play_store_url("com.demo.app", fields, stored_url)
    received = read_install_referrer(url)
    assert received == {**stored, **fields}
    # Stored fields keep their place; new ones come after them.
    assert list(received)[:len(stored)] == list(stored)
    assert {k: v for k, v in query_values(url).items() if k != "referrer"} == \
           {k: v for k, v in query_values(stored_url).items() if k != "referrer"}


TARGET_TEXT = st.text(st.one_of(st.sampled_from("?&=;%/ é"), st.characters(codec="utf-8", exclude_characters="#")),
                      max_size=20)


@FAST
@given(st.sampled_from(["democoffee", "https", "my-app+v2"]), TARGET_TEXT, st.sampled_from(["", "#frag"]),
       st.sampled_from(["com.demo.app", "com.a_b.c1"]), TEXT, st.sampled_from(["", "#top", "#a;b=c", "&y=%20;end"]))
def test_an_intent_url_carries_target_package_and_fallback_exactly(scheme: str, rest: str, fragment: str,
                                                                   package: str, fallback_tail: str,
                                                                   fallback_end: str) -> None:
    target = f"{scheme}://host/{rest}{fragment}"
    # A fallback with the intent grammar's own separators in it (a fragment, ';', '=').
    fallback = "https://shop.example/p?x=" + fallback_tail + fallback_end
    url = intent_url(target, package, fallback)
    data, _, intent = url.rpartition("#")  # Intent.parseUri reads the extras after the last '#'
    assert data == f"intent://host/{rest}{fragment}"
    assert intent.startswith("Intent;") and intent.endswith(";end")
    extras = intent.removeprefix("Intent;").removesuffix(";end").split(";")
    assert [extra.split("=", 1)[0] for extra in extras] == ["scheme", "package", "S.browser_fallback_url"]
    values = dict(extra.split("=", 1) for extra in extras)
    assert values["scheme"] == scheme and values["package"] == package
    assert unquote(values["S.browser_fallback_url"]) == fallback
