"""User-Agent classification: platform, Chromium (intent URLs), bots and in-app browsers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from linksvc.links.devices import MAX_EXAMINED, UNKNOWN, Device, classify, classify_uncached, clear_cache

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "user_agents.json"
USER_AGENTS: list[dict[str, Any]] = json.loads(FIXTURE.read_text(encoding="utf-8"))
PLATFORMS = {"android", "ios", "desktop", "unknown"}


def test_fixture_covers_every_platform_and_each_entry_has_the_stable_keys() -> None:
    assert len(USER_AGENTS) >= 30
    for entry in USER_AGENTS:
        assert set(entry) == {"name", "user_agent", "platform", "chromium", "bot", "in_app"}
    assert {entry["platform"] for entry in USER_AGENTS} == PLATFORMS
    assert {entry["in_app"] for entry in USER_AGENTS} >= {None, "facebook", "instagram", "tiktok"}


@pytest.mark.parametrize("entry", USER_AGENTS, ids=[entry["name"] for entry in USER_AGENTS])
def test_real_user_agents(entry: dict[str, Any]) -> None:
    device = classify(entry["user_agent"])
    got = (device.platform, device.chromium, device.bot, device.in_app)
    assert got == (entry["platform"], entry["chromium"], entry["bot"], entry["in_app"])
    assert classify_uncached(entry["user_agent"]) == device


@pytest.mark.parametrize(
    ("name", "browser"),
    [
        ("Chrome on Android (reduced user agent)", "chrome"),
        ("Samsung Internet on Android", "samsung"),
        ("Edge on Android", "edge"),
        ("Opera on Android", "opera"),
        ("Firefox on Android", "firefox"),
        ("Facebook in-app browser on Android", "webview"),
        ("Safari on iPhone", "safari"),
        ("Chrome on iOS (CriOS)", "chrome"),
        ("Firefox on iOS (FxiOS)", "firefox"),
        ("TikTok in-app browser on iOS", "webview"),
        ("Edge on Windows", "edge"),
        ("Firefox on Windows", "firefox"),
        ("Safari on macOS", "safari"),
        ("Chrome on ChromeOS", "chrome"),
        ("Googlebot smartphone", "googlebot"),
        ("TelegramBot", "telegrambot"),
        ("WhatsApp link preview (Android)", "whatsapp"),
        ("YandexBot (generic bot word)", "yandexbot"),
        ("Baiduspider (generic spider word)", "baiduspider"),
    ],
)
def test_browser_names(name: str, browser: str) -> None:
    (entry,) = [e for e in USER_AGENTS if e["name"] == name]
    assert classify(entry["user_agent"]).browser == browser


@pytest.mark.parametrize("user_agent", [None, "", "   ", "\t"])
def test_missing_or_blank_user_agent_is_unknown(user_agent: str | None) -> None:
    assert classify(user_agent) == UNKNOWN


def test_bot_word_needs_a_word_end() -> None:
    assert classify("Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)").bot
    assert classify("SomeCrawler/1.0").bot
    assert not classify("Mozilla/5.0 (X11; Linux x86_64) Robotics/1.0 Chrome/125.0.0.0").bot


def test_huge_header_is_classified_from_its_start() -> None:
    chrome_android = "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0"
    huge = chrome_android + " " + "A" * 100_000 + " Googlebot/2.1"
    device = classify(huge)
    assert (device.platform, device.chromium, device.bot) == ("android", True, False)
    assert classify("x" * 100_000) == UNKNOWN


def test_only_the_first_characters_are_examined() -> None:
    tail = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X)"
    assert classify(" " * MAX_EXAMINED + tail) == UNKNOWN
    assert classify(" " * (MAX_EXAMINED - len(tail)) + tail).platform == "ios"


def test_cached_and_uncached_agree_after_clearing() -> None:
    user_agent = USER_AGENTS[0]["user_agent"]
    first = classify(user_agent)
    clear_cache()
    assert classify(user_agent) == first == classify_uncached(user_agent)


@given(st.text(max_size=2000))
def test_classify_never_raises_and_names_a_platform(text: str) -> None:
    device = classify(text)
    assert isinstance(device, Device)
    assert device.platform in PLATFORMS
    if device.bot:
        assert not device.chromium
    if device.chromium:
        assert device.platform == "android" and device.in_app is None


@given(st.text(max_size=200), st.sampled_from(["Googlebot/2.1", "facebookexternalhit/1.1", "WhatsApp/2.23.20.0 A"]))
def test_a_bot_is_never_chromium(prefix: str, crawler: str) -> None:
    android_chrome = "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 "
    device = classify(android_chrome + prefix + " " + crawler)
    assert device.bot
    assert not device.chromium
