"""Properties of the UTM a click carries (product decisions, section 11, step 2; the specification's campaign
link rules 2 to 4) and of editing a stored link's UTM (rule 1: other parameters and the fragment stay)."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote_plus

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linksvc.links.appstores import play_store_url
from linksvc.links.urls import query_values, split_url, with_query
from linksvc.links.utm import UTM_FIELDS, default_utm, edit_utm, resolve_utm

FAST = settings(max_examples=80, deadline=None)
KINDS = ("campaign", "email", "push", "whatsapp", "in_app", "news_feed", "external")

# Values a marketer or a client might send: the URL's own separators made likely; blanks count as empty.
TEXT = st.text(st.one_of(st.sampled_from("+&=% #?/;é中"), st.characters(codec="utf-8")), min_size=1, max_size=12)
BLANK = st.sampled_from(["", " ", "\t"])
VALUE = st.one_of(TEXT, BLANK)
OTHERS = st.dictionaries(st.sampled_from(["lang", "page", "ref", "id", "referrer_x"]), TEXT, max_size=3)
FRAGMENT = st.sampled_from(["", "#top", "#a?b=c"])


SOURCES = ("incoming", "destination", "fallback", "referrer", "defaults")  # in the order of precedence
Click = tuple[dict[str, str], str, str | None, dict[str, str], dict[str, dict[str, str]]]


@st.composite
def clicks(draw: st.DrawFn) -> Click:
    """(incoming query, stored destination, selected fallback, defaults, and what each source holds): each UTM
    field, in each source, given (a value naming its source), sent blank, or absent, independently, so that
    every combination of sources turns up. ``referrer`` is the inside of a Play fallback's install referrer."""
    shape = draw(st.sampled_from(["none", "web", "play"]))
    present = {"none": SOURCES[:2] + SOURCES[4:], "web": SOURCES[:3] + SOURCES[4:], "play": SOURCES}[shape]
    held: dict[str, dict[str, str]] = {source: {} for source in SOURCES}
    for field in UTM_FIELDS:
        for source in present:
            state = draw(st.sampled_from(["given", "blank", "absent"]))
            if state == "given":
                held[source][field] = f"{source}:{draw(TEXT)}"
            elif state == "blank":
                held[source][field] = draw(BLANK)
    destination = with_query("https://shop.example/p", {**draw(OTHERS), **held["destination"]}) + draw(FRAGMENT)
    fallback = None
    if shape == "web":
        fallback = with_query("https://shop.example/web", {**draw(OTHERS), **held["fallback"]})
    elif shape == "play":
        fallback = with_query(play_store_url("com.demo.app", {**held["referrer"], "gclid": "G1"}), held["fallback"])
    incoming = {**draw(st.dictionaries(st.sampled_from(["tracking_id", "gclid", "x"]), VALUE)), **held["incoming"]}
    return incoming, destination, fallback, held["defaults"], held


@FAST
@given(clicks())
def test_each_field_is_the_first_non_empty_of_click_destination_fallback_defaults(click: Click) -> None:
    incoming, destination, fallback, defaults, held = click
    resolved = resolve_utm(incoming, destination, fallback, defaults)
    for field in UTM_FIELDS:
        # The fallback's own parameters come before the campaign fields inside its install referrer.
        candidates = [held[source].get(field, "") for source in SOURCES]
        assert resolved.get(field) == next((value for value in candidates if value.strip()), None)


@FAST
@given(clicks(), st.sampled_from(UTM_FIELDS), BLANK)
def test_an_empty_incoming_value_never_erases(click: Click, field: str, blank: str) -> None:
    incoming, destination, fallback, defaults, _ = click
    without = resolve_utm({k: v for k, v in incoming.items() if k != field}, destination, fallback, defaults)
    assert resolve_utm({**incoming, field: blank}, destination, fallback, defaults) == without


@FAST
@given(clicks())
def test_only_non_empty_utm_fields_some_source_has_come_out(click: Click) -> None:
    incoming, destination, fallback, defaults, held = click
    resolved = resolve_utm(incoming, destination, fallback, defaults)
    assert set(resolved) <= set(UTM_FIELDS)  # never the tracking id or another click parameter
    for field, value in resolved.items():
        assert value.strip()
        assert value in [held[source].get(field) for source in SOURCES]


CAMPAIGN_IDS = st.one_of(st.none(), st.sampled_from(["c-1", "6f1c0b9e-0000-4000-8000-000000000001"]))


@FAST
@given(st.sampled_from(KINDS), st.sampled_from(["linksvc", "Demo Coffee"]), CAMPAIGN_IDS, CAMPAIGN_IDS)
def test_only_email_push_and_whatsapp_links_get_defaults(kind: str, label: str, campaign_id: str | None,
                                                         template_id: str | None) -> None:
    defaults = default_utm(kind, label, campaign_id, template_id)
    if kind not in ("email", "push", "whatsapp"):
        assert defaults == {}
        return
    assert defaults["utm_source"] == label and defaults["utm_medium"] == kind
    assert defaults.get("utm_campaign") == (campaign_id or template_id)
    assert set(defaults) <= {"utm_source", "utm_medium", "utm_campaign"}


@st.composite
def stored_links(draw: st.DrawFn) -> str:
    """A stored destination: other parameters (a duplicate, a bare key, odd encodings) mixed with UTM ones."""
    segments = draw(st.lists(st.one_of(
        st.builds(lambda k, v: f"{k}={v}", st.sampled_from(["lang", "a", "a", "x%20y", "p+q"]),
                  st.sampled_from(["1", "es", "%7E", "a+b", ""])),
        st.sampled_from(["flag", "utm_sourcex=1", "xutm_medium=2"]),
        st.builds(lambda k, v: f"{k}={v}", st.sampled_from(UTM_FIELDS), st.sampled_from(["old", "a%20b", ""])),
    ), max_size=6))
    query = "&".join(segments)
    return "https://shop.example/menu" + (f"?{query}" if query else "") + draw(FRAGMENT)


def raw_segments_except(url: str, keys: set[str]) -> list[str]:
    query = split_url(url)[1]
    return [s for s in query.split("&") if s and unquote_plus(s.partition("=")[0]) not in keys] if query else []


@FAST
@given(stored_links(), st.dictionaries(st.sampled_from(UTM_FIELDS), st.one_of(st.none(), st.just(""), TEXT)))
def test_editing_utm_changes_only_the_named_utm_fields(url: str, changes: dict[str, Any]) -> None:
    edited = edit_utm(url, changes)
    before, after = query_values(url), query_values(edited)
    for field in UTM_FIELDS:
        if field not in changes:
            assert after.get(field) == before.get(field)
        elif changes[field]:
            assert after[field] == changes[field]
        else:
            assert field not in after
    # Every parameter the edit does not name keeps its exact text and order; the fragment stays.
    assert raw_segments_except(edited, set(changes)) == raw_segments_except(url, set(changes))
    assert split_url(edited)[0] == split_url(url)[0] and split_url(edited)[2] == split_url(url)[2]


@settings(max_examples=20, deadline=None)
@given(stored_links(), st.sampled_from(["tracking_id", "lang", "utm_id", "UTM_SOURCE"]), TEXT)
def test_editing_anything_but_utm_is_refused(url: str, key: str, value: str) -> None:
    with pytest.raises(KeyError):
        edit_utm(url, {key: value})
