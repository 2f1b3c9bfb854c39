"""The full parse of a click's user agent on real strings, and the cache the click writer keeps."""

from __future__ import annotations

import asyncio

import pytest

from linksvc.links.click_details import NO_DETAILS, ClickDetails, DetailsCache, parse_details, stored_user_agent

CHROME_ANDROID = ("Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) "
                  "Chrome/120.0.6099.144 Mobile Safari/537.36")
IPHONE_SAFARI = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
                 "Version/17.1 Mobile/15E148 Safari/604.1")
DESKTOP_FIREFOX = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:126.0) Gecko/20100101 Firefox/126.0"
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
PIXEL_WITH_FFFD = ("Mozilla/5.0 (Linux; Android 13; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) "
                   "Chrome/116.0.0.0 Mobile Safari/537.36 \ufffd\ufffd")

CASES = [
    (CHROME_ANDROID, ClickDetails("Chrome Mobile", "120.0.6099", "Android", "14", "Samsung", "SM-S918B")),
    (IPHONE_SAFARI, ClickDetails("Mobile Safari", "17.1", "iOS", "17.1", "Apple", "iPhone")),
    (DESKTOP_FIREFOX, ClickDetails("Firefox", "126.0", "Windows", "10", None, None)),
    (GOOGLEBOT, ClickDetails("Googlebot", "2.1", None, None, "Spider", "Desktop")),
    (PIXEL_WITH_FFFD, ClickDetails("Chrome Mobile", "116.0.0", "Android", "13", "Google", "Pixel 7")),
    ("garbage", NO_DETAILS),
    ("\ufffd\ufffd(", NO_DETAILS),
    ("", NO_DETAILS),
]


@pytest.mark.parametrize(("user_agent", "expected"), CASES, ids=[c[0][:40] or "empty" for c in CASES])
def test_real_user_agents(user_agent: str, expected: ClickDetails) -> None:
    assert parse_details(user_agent) == expected


def test_the_cache_key_is_the_stored_header_made_safe_and_cut() -> None:
    assert stored_user_agent("Mozilla/5.0 \udcff") == "Mozilla/5.0 \ufffd"
    assert len(stored_user_agent("x" * 5000)) == 1000


async def test_a_batch_parses_each_distinct_string_once_and_repeats_hit_the_cache() -> None:
    cache = DetailsCache()
    first = await cache.details_of_batch([CHROME_ANDROID, IPHONE_SAFARI, CHROME_ANDROID, "garbage"])
    assert first[IPHONE_SAFARI].os_family == "iOS" and first["garbage"] == NO_DETAILS
    assert (cache.hits, cache.misses, len(cache)) == (0, 3, 3)
    again = await cache.details_of_batch([CHROME_ANDROID, IPHONE_SAFARI] * 50)
    assert again[CHROME_ANDROID] == first[CHROME_ANDROID]
    assert (cache.hits, cache.misses) == (2, 3)


def test_the_least_recently_used_string_leaves_a_full_cache() -> None:
    cache = DetailsCache(size=2)
    cache.parse_all(["a", "b"])
    assert cache.get("a") is not None  # "b" is now the oldest
    cache.parse_all(["c"])
    assert cache.get("b") is None and cache.get("a") is not None and len(cache) == 2


async def test_the_parse_of_unseen_strings_leaves_the_event_loop_free() -> None:
    """While a batch of never-seen strings is parsed, other tasks run: it happens in a worker thread."""
    cache = DetailsCache()
    agents = [f"Mozilla/5.0 (Linux; Android 14; SM-A{n}5F) AppleWebKit/537.36 (KHTML, like Gecko) "
              f"Chrome/12{n % 10}.0.0.0 Mobile Safari/537.36" for n in range(300)]
    ticks = 0
    parsing = asyncio.create_task(cache.details_of_batch(agents))
    while not parsing.done():
        ticks += 1
        await asyncio.sleep(0)
    details = parsing.result()
    assert ticks > 1 and len(details) == 300
    assert {d.os_family for d in details.values()} == {"Android"}
