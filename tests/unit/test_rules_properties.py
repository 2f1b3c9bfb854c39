"""The fast pick of a link's rules (linksvc.rules.engine.pick: every kind of condition tested once per click,
for all the rules at once) chooses exactly what the straightforward evaluation chooses: the first rule, in
order, whose target is known and each of whose conditions holds, tested one by one (the tests `explain`
runs). Rules and clicks are drawn from small pools of values, so that conditions often hold, and a rule often
shares a value with another or with the click."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from linksvc.links.devices import classify
from linksvc.rules.engine import CompiledRule, Facts, Rules, compile_rules, explain, pick
from linksvc.rules.geo import Place

FAST = settings(max_examples=400, deadline=None)

AGENTS = [
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.4 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36",
    "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 "
    "Safari/605.1.15",
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "",
]
COUNTRIES = ["US", "FR", "DE", "JP"]
REGIONS = ["US-CA", "US-NY", "FR-IDF"]
LANGUAGE_TAGS = ["en", "en-US", "en-GB", "de", "pt", "pt-BR", "fr", "zh-Hant", "ZH"]
HEADERS = ["en-US,en;q=0.9", "de-DE,de;q=0.9,en-US;q=0.8,en;q=0.7", "pt-BR,pt;q=0.9", "fr,fr-FR;q=0.8",
           "zh-Hant-TW", "de, en", "*", ""]
PARAMS = ["src", "utm_source", "ref"]
VALUES = ["mail", "ads", "", "Mail"]
NETWORKS = ["10.0.0.0/8", "10.1.0.0/16", "10.1.2.0/24", "192.168.0.0/16", "8.8.8.0/24", "0.0.0.0/0",
            "2001:db8::/32", "2001:db8:1::/48", "::/0"]
ADDRESSES = ["10.1.2.3", "10.9.9.9", "192.168.1.1", "8.8.8.8", "1.0.16.1", "2001:db8:1::5", "2001:4860::1",
             "::ffff:10.1.2.3", "not-an-address", ""]
HOSTS = ["example.com", "*.example.com", "a.example.com", "*.b.example.com", "partner.example", "*.example"]
REFERERS = ["https://example.com/x", "https://a.example.com", "https://x.b.example.com:8080/p",
            "http://user@Example.COM./", "https://partner.example?q=1", "https://b.example.com", "not a url", "",
            "https://[2001:db8::1]/"]
WINDOWS = [{"timezone": "Europe/Paris", "days": ["mon"]},
           {"timezone": "UTC", "from": "09:00", "to": "17:00"},
           {"timezone": "Asia/Tokyo", "days": ["mon", "tue"], "from": "20:00", "to": "02:00"},
           {"timezone": "America/New_York", "from": "06:00", "to": "08:00"}]
# Monday noon UTC, Monday 23:00 UTC, Sunday 03:00 UTC (early Monday in Tokyo).
TIMES = [datetime(2026, 3, 2, 12, 0, tzinfo=ZoneInfo("UTC")).timestamp(),
         datetime(2026, 3, 2, 23, 0, tzinfo=ZoneInfo("UTC")).timestamp(),
         datetime(2026, 3, 1, 3, 0, tzinfo=ZoneInfo("UTC")).timestamp()]


def some(pool: list[Any]) -> st.SearchStrategy[list[Any]]:
    return st.lists(st.sampled_from(pool), min_size=1, max_size=3)


QUERY_ITEMS = st.one_of(
    st.builds(lambda param, present: {"param": param, "present": present}, st.sampled_from(PARAMS), st.booleans()),
    st.builds(lambda param, value: {"param": param, "equals": value}, st.sampled_from(PARAMS),
              st.sampled_from(VALUES)),
    st.builds(lambda param, values: {"param": param, "one_of": values}, st.sampled_from(PARAMS), some(VALUES)),
)
CONDITIONS = st.fixed_dictionaries({}, optional={
    "countries": some(COUNTRIES), "regions": some(REGIONS), "languages": some(LANGUAGE_TAGS),
    "platforms": some(["android", "ios", "desktop", "unknown"]),
    "os": some(["android", "ios", "windows", "macos", "linux", "other"]),
    "browsers": some(["chrome", "safari", "firefox", "other"]),
    "devices": some(["mobile", "tablet", "desktop", "other"]), "bot": st.booleans(),
    "time": st.sampled_from(WINDOWS), "query": st.lists(QUERY_ITEMS, min_size=1, max_size=3),
    "networks": some(NETWORKS), "referrer_hosts": some(HOSTS),
})
# A target is URLs, or another link: "known" is among the links the rules lead to, "gone" is not.
TARGETS = st.sampled_from([{"destination_url": "https://t.example/"}, {"link": "known"}, {"link": "gone"}])
RULES = st.lists(st.tuples(CONDITIONS, TARGETS), max_size=12).map(
    lambda drawn: [{"name": f"rule-{index}", "conditions": conditions, "target": target}
                   for index, (conditions, target) in enumerate(drawn)])


@st.composite
def clicks(draw: st.DrawFn) -> dict[str, Any]:
    """What makes a click's facts (built afresh for each evaluation: a Facts works its facts out once)."""
    return {
        "agent": draw(st.sampled_from(AGENTS)),
        "query": draw(st.dictionaries(st.sampled_from(PARAMS), st.sampled_from(VALUES), max_size=3)),
        "now": draw(st.sampled_from(TIMES)),
        "language": draw(st.sampled_from(HEADERS)),
        "referer": draw(st.sampled_from(REFERERS)),
        "peer": draw(st.sampled_from([*ADDRESSES, None])),
        # The place as given (linksvc route --country), or None: placed from the address.
        "place": draw(st.one_of(st.none(), st.builds(Place, st.sampled_from([*COUNTRIES, None]),
                                                     st.sampled_from([*REGIONS, None])))),
    }


def facts_of(click: dict[str, Any]) -> Facts:
    facts = Facts(classify(click["agent"]), click["agent"], click["query"], click["now"], click["language"],
                  click["referer"], click["peer"])
    if click["place"] is not None:
        facts.place = click["place"]
    return facts


def reference(rules: Rules, facts: Facts) -> CompiledRule | None:
    """The first rule with a known target whose conditions all hold, tested one by one."""
    for rule in rules.rules:
        if rule.target is not None and all(check(facts) for _, check in rule.checks):
            return rule
    return None


def compiled(rules: list[dict[str, Any]]) -> Rules:
    return compile_rules(rules, {"known": {"destination_url": "https://known.example/"}})


@FAST
@given(RULES, clicks())
def test_the_fast_pick_is_the_first_rule_that_holds(rules: list[dict[str, Any]], click: dict[str, Any]) -> None:
    link = compiled(rules)
    expected = reference(link, facts_of(click))
    assert pick(link, facts_of(click)) is expected
    verdicts = explain(link, facts_of(click))
    assert [verdict.name for verdict in verdicts if verdict.matched] == ([] if expected is None else [expected.name])


@FAST
@given(st.lists(st.tuples(st.sampled_from(["countries", "platforms", "languages", "referrer_hosts", "networks"]),
                          st.integers(0, 8)), min_size=1, max_size=30), clicks())
def test_many_rules_of_one_kind_keep_their_order(shapes: list[tuple[str, int]], click: dict[str, Any]) -> None:
    """Long runs of rules of one or two kinds of condition, as links have them (a rule per country, per
    partner site...), the values often repeated."""
    pools = {"countries": COUNTRIES, "platforms": ["android", "ios", "desktop"], "languages": LANGUAGE_TAGS,
             "referrer_hosts": HOSTS, "networks": NETWORKS}
    rules = [{"name": f"rule-{index}", "conditions": {kind: [pools[kind][value % len(pools[kind])]]},
              "target": {"destination_url": f"https://t.example/{index}"}}
             for index, (kind, value) in enumerate(shapes)]
    link = compiled(rules)
    assert pick(link, facts_of(click)) is reference(link, facts_of(click))


def test_a_rule_without_conditions_holds_for_every_click() -> None:
    link = compiled([{"name": "never", "conditions": {"countries": ["FR"]}, "target": {"link": "known"}},
                     {"name": "always", "conditions": {}, "target": {"link": "known"}}])
    click = {"agent": AGENTS[0], "query": {}, "now": TIMES[0], "language": "", "referer": "", "peer": "8.8.8.8",
             "place": Place("US")}
    found = pick(link, facts_of(click))
    assert found is not None and found.name == "always"
