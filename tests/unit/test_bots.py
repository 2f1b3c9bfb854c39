"""The bot list: the crawler-user-agents package's patterns, our narrowed forms and extra patterns, and the
prefilter that must never change what the patterns alone would answer."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linksvc.links import bots
from linksvc.links.devices import MAX_EXAMINED, classify

ENTRIES = bots.package_entries()
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
PEOPLE = [
    entry["user_agent"]
    for name in ("user_agents.json", "user_agents_labelled.json")
    for entry in json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    if not entry["bot"]
]

# People's browsers and phones that an upstream pattern as shipped takes for a bot (from the Matomo
# device-detector fixtures), one or more for each narrowed pattern.
NARROWED_PEOPLE = {
    "AP3A\\.240617\\.008": [
        "Mozilla/5.0 (Linux; Android 15; CPH2655 Build/AP3A.240617.008) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/119.0.6045.163 Mobile Safari/537.36",
    ],
    "Sogou": [
        "Mozilla/5.0 (Linux; Android 7.1.2; Neolix X9-JD; Build/N2G47H; wv) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/46.0.2490.92 Mobile Safari/537.36 SogouMSE,SogouMobileBrowser/5.6.3",
        "Mozilla/5.0 (Linux; Android 7.1.2; MANN 8S Build/N2G47H; wv) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Version/4.0 Chrome/55.0.2883.91 Mobile Safari/537.36 SGInfo/1080/1776/3.0 SogouSearch Android1.0 "
        "version3.0 AppVersion/7702 NoHead",
    ],
    "Viber": [
        "Mozilla/5.0 (Linux; Android 16; SM-F966N; BP2A.250605.031.A3; wv) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Version/4.0 Chrome/145.0.7632.120 Mobile Safari/537.36 Viber/27.4.0.0",
    ],
    "Sonic": [
        "Mozilla/5.0 (Linux; Android 4.4.2; ViewSonic V500 Build/KVT49L) AppleWebKit/535.19 (KHTML, like Gecko) "
        "Chrome/18.0.1025.166 Mobile Safari/535.19",
        "Mozilla/5.0 (Linux; U; Android 2.3.6; fr-fr; Cherry Sonic  Build/GRK39F) AppleWebKit/533.1 (KHTML, like "
        "Gecko) Version/4.0 Mobile Safari/533.1",
        "Mozilla/5.0 (Linux; Android 5.1; O+ Sonic) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/80.0.3987.162 "
        "Mobile Safari/537.36",
    ],
    "Butterfly": [
        "Mozilla/5.0 (Linux; Android 4.2.2; HTC Butterfly Build/JDQ39) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/31.0.1650.59 Mobile Safari/537.36",
        "Mozilla/5.0 (Linux; Android 4.4.2; HTCButterflys901s Build/KOT49H) AppleWebKit/537.36 (KHTML like Gecko) "
        "Chrome/41.0.2272.96 Mobile Safari/537.36",
    ],
    "Fever": [
        "Mozilla/5.0 (Linux; Android 8.1.0; Fever_Plus_J) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/95.0.4638.50 Safari/537.36",
    ],
    "Expanse": [
        "Mozilla/5.0 (Linux; Android 8.0.0; Expanse) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/86.0.4240.99 "
        "Mobile Safari/537.36",
    ],
    "008\\/": [
        "DESAY TS1008/1.0 Release/07.12.2013 Mozilla/5.0 (Linux; U; Android 4.0.3; zh-cn) AppleWebKit/534.30 "
        "(KHTML, like Gecko) Version/4.0 Mobile Safari/534.30",
    ],
}

WELL_KNOWN = [
    ("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "googlebot"),
    ("facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", "facebookexternalhit"),
    ("meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)",
     "meta-externalagent"),
    ("Facebot", "facebot"),
    ("Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", "bingbot"),
    ("Twitterbot/1.0", "twitterbot"),
    ("LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)", "linkedinbot"),
    ("Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", "slackbot"),
    ("TelegramBot (like TwitterBot)", "telegrambot"),
    ("Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)", "discordbot"),
    ("Mozilla/5.0 (Applebot/0.1; +http://www.apple.com/go/applebot)", "applebot"),
    ("Mozilla/5.0 (compatible; Pinterestbot/1.0; +http://www.pinterest.com/bot.html)", "pinterestbot"),
    ("Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)", "yandexbot"),
    ("Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)", "baiduspider"),
    ("WhatsApp/2.23.20.0 A", "whatsapp"),
    ("WhatsApp/2.2437.6 W", "whatsapp"),
    ("WhatsApp/2.24.10.79 i", "whatsapp"),
    ("curl/8.5.0", "curl"),
    ("Wget/1.21.3", "wget"),
    ("python-requests/2.31.0", "python-requests"),
    ("Go-http-client/2.0", "go-http-client"),
]


def _package_matches(text: str) -> bool:
    return any(re.search(str(entry["pattern"]), text) for entry in ENTRIES)


def test_every_package_pattern_compiles_with_python_re() -> None:
    """The alarm for an upgrade that ships a pattern Python cannot compile (the matcher skips it)."""
    failures = []
    for entry in ENTRIES:
        try:
            re.compile(str(entry["pattern"]))
        except re.error as error:
            failures.append(f"{entry['pattern']!r}: {error}")
    assert not failures
    assert not bots.MATCHER.skipped


def test_every_package_instance_is_a_bot() -> None:
    instances = [str(text) for entry in ENTRIES for text in entry.get("instances", [])]
    assert len(instances) >= 2000
    missed = [text for text in instances if not classify(text).bot]
    assert missed == []


def test_the_package_is_read_whole() -> None:
    assert len(ENTRIES) >= 1500
    assert bots.MATCHER.unfiltered() == []  # every pattern has a literal for the prefilter
    assert len(bots.MATCHER.sources) == len(ENTRIES) + len(bots.EXTRA) + len(bots.GENERIC)


@pytest.mark.parametrize(("pattern", "name", "example"), bots.EXTRA + bots.GENERIC, ids=lambda value: str(value)[:30])
def test_each_extra_pattern_is_needed_and_recognised(pattern: str, name: str, example: str) -> None:
    assert re.search(pattern, example)
    assert not _package_matches(example), "the package matches this now: drop our pattern"
    device = classify(example)
    assert device.bot and device.browser == name


@pytest.mark.parametrize(("user_agent", "name"), WELL_KNOWN, ids=[name for _, name in WELL_KNOWN])
def test_well_known_bots_keep_their_names(user_agent: str, name: str) -> None:
    device = classify(user_agent)
    assert device.bot and device.browser == name and device.platform == "unknown" and not device.chromium


@pytest.mark.parametrize("user_agent", PEOPLE)
def test_people_are_not_bots(user_agent: str) -> None:
    assert not classify(user_agent).bot


@pytest.mark.parametrize("pattern", sorted(bots.NARROWED))
def test_each_narrowed_pattern_still_matches_upstream_examples_but_not_people(pattern: str) -> None:
    (entry,) = [entry for entry in ENTRIES if entry["pattern"] == pattern]  # gone upstream: drop ours too
    people = NARROWED_PEOPLE[pattern]
    assert all(re.search(pattern, text) for text in people)  # the reason for narrowing
    narrowed = re.compile(bots.NARROWED[pattern])
    for text in entry["instances"]:
        assert narrowed.search(text)
    for text in people:
        assert not narrowed.search(text)
        assert not classify(text).bot


def test_generic_words_need_a_word_and_spare_phone_names() -> None:
    assert classify("Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)").bot
    assert classify("SomeCrawler/1.0").browser == "crawler"
    assert classify("Mozilla/5.0 (compatible; NewEngineBot/0.1)").browser == "bot"
    for phone in ("Cubot X30", "CUBOT J9", "XBot Junior", "M bot 54", "Spider 8"):
        user_agent = f"Mozilla/5.0 (Linux; Android 13; {phone}) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0"
        assert not classify(user_agent).bot, phone
    assert not classify("Mozilla/5.0 (X11; Linux x86_64) Robotics/1.0 Chrome/125.0.0.0").bot


def test_patterns_are_case_sensitive_as_upstream() -> None:
    # "Sonic" is a crawler; "Airsonic" a media server people stream from.
    assert classify("Mozilla/5.0 (compatible; Sonic/1.0; http://www.yama.info.waseda.ac.jp/~crawler/info.html)").bot
    assert not classify("Airsonic/11.0.0 (Linux; Android 13)").bot


def test_names_are_short_lower_case_and_from_a_fixed_set() -> None:
    names = {candidate.name for owners in bots.MATCHER._owners for candidate in owners}
    assert all(name == name.lower() and 0 < len(name) <= 64 for name in names)
    assert classify("Mozilla/5.0 (compatible; Googlebot/2.1; evil-suffix-123)").browser == "googlebot"


def test_a_pattern_that_does_not_compile_is_skipped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="linksvc.links.bots"):
        matcher = bots.BotMatcher([("Broken(", None, None, False), ("GoodBot", None, "GoodBot/1.0", False)])
    assert matcher.skipped == ["Broken("]
    assert "Broken(" in caplog.text
    assert matcher.name("GoodBot/1.0") == "goodbot"
    assert matcher.name("Broken(") is None


@pytest.mark.parametrize(
    ("pattern", "literals", "plain"),
    [
        ("Googlebot\\/", {"Googlebot/"}, True),
        ("[wW]get", {"wget", "Wget"}, True),
        ("^curl", {"curl"}, False),
        ("Ahrefs(Bot|SiteAudit)", {"AhrefsBot", "AhrefsSiteAudit"}, True),
        ("Chirp|gotosocial", {"Chirp", "gotosocial"}, True),
        ("AdsBot-Google([^-]|$)", {"AdsBot-Google"}, False),
        ("Spider[\\s\\S]*spider\\.com", {"spider.com"}, False),
        ("BlogTraffic\\/\\d\\.\\d+ Feed-Fetcher", {" Feed-Fetcher"}, False),
        ("(?<!View)Sonic(?![\\s);])", {"Sonic"}, False),
        ("a+bc", {"bc"}, False),
        ("(?i)googlebot", None, False),
        ("x?y?", None, False),
    ],
)
def test_required_literals(pattern: str, literals: set[str] | None, plain: bool) -> None:
    cover, is_plain = bots.required_literals(pattern)
    assert (set(cover) if cover is not None else None, is_plain) == (literals, plain)


NAIVE = [re.compile(source) for source in bots.MATCHER.sources]


def _naive(text: str) -> bool:
    return any(regex.search(text) for regex in NAIVE)


SOURCES_TEXT = [str(text) for entry in ENTRIES for text in entry.get("instances", [])[:1]] + PEOPLE


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(SOURCES_TEXT), min_size=1, max_size=3), st.integers(0, 40), st.text(max_size=20))
def test_prefilter_answers_as_the_patterns_alone(pieces: list[str], cut: int, noise: str) -> None:
    """Cut, joined and noisy strings: a bot for the matcher exactly when some pattern matches."""
    text = (noise.join(piece[cut:] for piece in pieces))[:MAX_EXAMINED]
    assert (bots.bot_name(text) is not None) == _naive(text)


def test_prefilter_answers_as_the_patterns_alone_on_every_example() -> None:
    combined = [re.compile("|".join(f"(?:{source})" for source in bots.MATCHER.sources[at : at + 50]))
                for at in range(0, len(bots.MATCHER.sources), 50)]
    texts = [str(text)[:MAX_EXAMINED] for entry in ENTRIES for text in entry.get("instances", [])] + PEOPLE
    for text in texts:
        assert (bots.bot_name(text) is not None) == any(regex.search(text) for regex in combined), text



@pytest.mark.parametrize("repeat", [1, 3, 40])
def test_prefilter_answers_as_the_patterns_alone_on_repeated_near_misses(repeat: int) -> None:
    """Literals of the patterns that need a run, near-missed and repeated (few and many literals found)."""
    units = ["xcurl ", "SogouMSE ", "ViewSonic ", "xPTST/ ", "Viber/ ", "Expanse) ", "TS1008/ ", "Cubot ",
             "Spider 8 ", "AdsBot-Google-", "outcomes.net ", "ContextualBotx ", "Currentx ", "xsentry/ ",
             "AP3A.240617.008 ", "SSL Labsx ", "GoogleAssociationServicex "]
    for unit in units:
        for tail in ("", " ContextualBot/1.0; +http://outcomes.net", " Sonic/1.0", " (compatible; PTST/1)"):
            text = ((unit * repeat) + tail)[:MAX_EXAMINED]
            assert (bots.bot_name(text) is not None) == _naive(text), text


def test_a_long_gap_pattern_needs_its_literals_in_order() -> None:
    assert bots.bot_name("Mozilla/5.0 (compatible; ContextualBot/1.0; +http://outcomes.net)") is not None
    assert bots.bot_name("outcomes.net ContextualBotx ContextualBotx") is None


def test_a_header_that_is_not_utf8_is_classified() -> None:
    """aiohttp hands header bytes that are not UTF-8 over as lone surrogates; the Rust automaton cannot take
    them, and the click must still be classified (not answered 500)."""
    crawler = b"Mozilla/5.0 (compatible; Googlebot/2.1; \xff\xfe)".decode("utf-8", "surrogateescape")
    person = b"Mozilla/5.0 (Linux; Android 14; \xc3(\x80) AppleWebKit/537.36 Chrome/126.0.0.0 Mobile".decode(
        "utf-8", "surrogateescape")
    assert bots.MATCHER.name(crawler) == "googlebot"
    assert bots.MATCHER.name(person) is None
    assert classify(person).platform == "android"
