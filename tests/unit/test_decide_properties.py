"""Properties of where a click goes (product decisions, section 11; the specification's campaign link rules):
every URL the answer leads to is one of the link's own (never one taken from the request) and carries the
resolved UTM fields and the tracking id, and the answer depends on the device and the link only."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import unquote

from hypothesis import given, settings
from hypothesis import strategies as st

from linksvc.links.appstores import PLAY_DETAILS, play_store_url, read_install_referrer
from linksvc.links.decide import APP_STORE, Decision, decide
from linksvc.links.urls import query_values, split_url, with_query
from linksvc.links.utm import UTM_FIELDS

FAST = settings(max_examples=60, deadline=None)
SHORT = "https://l.example/AbC1234"
CARRIED_KEYS = [*UTM_FIELDS, "tracking_id"]


@dataclass(frozen=True)
class Device:
    platform: str
    chromium: bool
    bot: bool
    in_app: str | None


TEXT = st.text(st.one_of(st.sampled_from("+&=% #?/;é"), st.characters(codec="utf-8")), min_size=1, max_size=10)
VALUE = st.one_of(TEXT, st.sampled_from(["", " "]))
UTM = st.dictionaries(st.sampled_from(UTM_FIELDS), VALUE, max_size=5)
OTHERS = st.dictionaries(st.sampled_from(["lang", "id", "page"]), TEXT, max_size=2)
FRAGMENT = st.sampled_from(["", "#top"])
EVIL = "https://evil.example/phish?a=1"


def web_url(host: str) -> st.SearchStrategy[str]:
    return st.builds(lambda others, utm, fragment: with_query(f"https://{host}/p", {**others, **utm}) + fragment,
                     OTHERS, UTM, FRAGMENT)


STORED_PLAY = st.builds(lambda utm: with_query(play_store_url("com.demo.app", {**utm, "gclid": "G1"}), {"hl": "es"}),
                        UTM)
DEVICES = st.builds(Device, st.sampled_from(["android", "android", "ios", "ios", "desktop", "unknown"]), st.booleans(),
                    st.sampled_from([False, False, True]), st.sampled_from([None, None, "facebook"]))
LINKS = st.fixed_dictionaries({
    "id": st.just("l-1"),
    "kind": st.sampled_from(["campaign", "email", "push", "whatsapp", "in_app", "news_feed", "external"]),
    "campaign_id": st.sampled_from([None, "c-1"]),
    "template_id": st.sampled_from([None, "tpl-1"]),
    "destination_url": web_url("shop.example"),
    "deeplink": st.one_of(st.none(), st.builds(lambda o: with_query("democoffee://menu/item", o), OTHERS)),
    "android": st.one_of(st.none(), *[st.fixed_dictionaries({
        "package": st.just("com.demo.app"),
        "fallback_url": st.one_of(st.none(), web_url("android.example"), STORED_PLAY)})] * 2),
    "ios": st.one_of(st.none(), *[st.fixed_dictionaries({
        "app_store_id": st.sampled_from([None, "1234567890"]), "bundle_id": st.just("com.demo.app"),
        "fallback_url": st.one_of(st.none(), web_url("ios.example"))})] * 2),
    "fallback_url": st.one_of(st.none(), web_url("web.example")),
})
# A click's query: UTM, a tracking id, the app-found flag, and parameters that try to choose the target.
QUERIES = st.builds(
    lambda utm, tracking, found, hostile: {**utm, **tracking, **found, **hostile},
    UTM,
    st.one_of(st.just({}), st.builds(lambda t: {"tracking_id": t}, st.one_of(TEXT, st.just("")))),
    st.sampled_from([{}, {"$app-found": "true"}, {"$app-found": "false"}]),
    st.dictionaries(st.sampled_from(["url", "redirect", "next", "destination_url", "deeplink", "fallback_url",
                                     "$fallback_url", "$deeplink_path", "link"]), st.just(EVIL), max_size=3),
)


def run(link: dict[str, Any], device: Device, query: dict[str, str], accepts_json: bool,
        tracking_id: str = "t-new", label: str = "linksvc") -> Decision:
    return decide(link, device, query, accepts_json, SHORT, tracking_id, label)


def hops(decision: Decision) -> list[tuple[str, str]]:
    """Every URL the answer leads to, as (how it carries the fields, URL): ``query`` in its own query,
    ``referrer`` inside a Play install referrer."""
    if decision.status == 200:
        assert decision.body is not None
        data = decision.body["data"]
        return [("query", url) for url in (data["deeplink"], data["destination_url"]) if url is not None]
    assert decision.location is not None
    return _hops_of(decision.location)


def _hops_of(url: str) -> list[tuple[str, str]]:
    if url.startswith("intent://"):
        data, _, intent = url.rpartition("#")  # Intent.parseUri reads the extras after the last '#'
        assert intent.startswith("Intent;") and intent.endswith(";end")
        extras = dict(part.split("=", 1) for part in intent.removeprefix("Intent;").removesuffix(";end").split(";"))
        return [("query", data), *_hops_of(unquote(extras["S.browser_fallback_url"]))]
    if url.startswith(PLAY_DETAILS):
        return [("referrer", url)]
    return [("query", url)]


def allowed_bases(link: dict[str, Any]) -> set[str]:
    """Where a link may send a click: its own URLs (and the stores), nothing else."""
    own = [link["destination_url"], link["deeplink"], link["fallback_url"],
           (link["android"] or {}).get("fallback_url"), (link["ios"] or {}).get("fallback_url")]
    bases = {split_url(url)[0] for url in own if url}
    bases |= {"intent://" + base.split("://", 1)[1] for base in bases}
    bases.add(PLAY_DETAILS)
    if link["ios"] and link["ios"]["app_store_id"]:
        bases.add(APP_STORE.format(link["ios"]["app_store_id"]))
    return bases


@FAST
@given(LINKS, DEVICES, QUERIES, st.booleans())
def test_every_hop_carries_the_utm_fields_and_the_tracking_id(link: dict[str, Any], device: Device,
                                                              query: dict[str, str], accepts_json: bool) -> None:
    decision = run(link, device, query, accepts_json)
    carried = {**decision.utm, "tracking_id": decision.tracking_id}
    for how, url in hops(decision):
        values = read_install_referrer(url) if how == "referrer" else query_values(url)
        assert {key: values.get(key) for key in carried} == carried, (how, url)
        if how == "referrer":
            assert values["link"] == SHORT


@FAST
@given(LINKS, DEVICES, QUERIES, st.booleans())
def test_the_click_keeps_its_own_values(link: dict[str, Any], device: Device, query: dict[str, str],
                                        accepts_json: bool) -> None:
    decision = run(link, device, query, accepts_json, tracking_id="t-generated")
    for field in UTM_FIELDS:
        if query.get(field, "").strip():
            assert decision.utm[field] == query[field]  # non-empty incoming values override stored ones
    sent = query.get("tracking_id", "")
    assert decision.tracking_id == (sent.strip() if sent.strip() else "t-generated")


@FAST
@given(LINKS, DEVICES, QUERIES, st.booleans())
def test_no_hop_goes_anywhere_the_link_does_not_name(link: dict[str, Any], device: Device, query: dict[str, str],
                                                     accepts_json: bool) -> None:
    decision = run(link, device, query, accepts_json)
    allowed = allowed_bases(link)
    for _, url in hops(decision):
        assert split_url(url)[0] in allowed, url


def skeleton(decision: Decision) -> list[tuple[str, Any]]:
    """The hops with the carried values taken out: what the click's query must not be able to change."""
    out: list[tuple[str, Any]] = []
    for how, url in hops(decision):
        stripped = with_query(url, {}, remove=[*CARRIED_KEYS, "referrer"])
        extra = {k: v for k, v in read_install_referrer(url).items() if k not in CARRIED_KEYS} \
            if how == "referrer" else None
        out.append((stripped, extra))
    return out


@FAST
@given(LINKS, DEVICES, QUERIES, QUERIES, st.booleans(), st.sampled_from(["linksvc", "other-label"]))
def test_the_answer_depends_on_the_device_and_the_link_only(link: dict[str, Any], device: Device,
                                                            one: dict[str, str], other: dict[str, str],
                                                            accepts_json: bool, label: str) -> None:
    # The app-found flag is the one part of the query that chooses (the app says it is installed).
    flag = {key: value for key, value in one.items() if key == "$app-found"}
    other = {key: value for key, value in other.items() if key != "$app-found"} | flag
    first = run(link, device, one, accepts_json)
    for query in (other, flag):  # another click's query, and a bare one
        second = run(link, device, query, accepts_json, tracking_id="t-other", label=label)
        assert (first.status, first.answer) == (second.status, second.answer)
        assert skeleton(first) == skeleton(second)


@FAST
@given(LINKS, DEVICES, QUERIES, st.booleans())
def test_bots_and_desktops_go_to_the_destination_and_only_app_found_answers_json(
        link: dict[str, Any], device: Device, query: dict[str, str], accepts_json: bool) -> None:
    decision = run(link, device, query, accepts_json)
    app_found = query.get("$app-found") == "true" and not device.bot
    assert (decision.status == 200) == (app_found and accepts_json)
    if device.bot or (device.platform in ("desktop", "unknown") and not app_found):
        assert decision.answer == "destination"
        assert decision.location is not None
        assert split_url(decision.location)[0] == split_url(link["destination_url"])[0]
    if decision.answer == "intent":
        assert device.platform == "android" and device.chromium and not device.in_app and link["android"]
    # The same click by a crawler: the destination, even when it claims the app is installed.
    for claimed in (query, {**query, "$app-found": "true"}):
        crawled = run(link, replace(device, bot=True), claimed, accepts_json)
        assert (crawled.status, crawled.answer) == (302, "destination")
