"""Meta's rules (linksvc/forwarding/meta_rules.py): phones as E.164 digits, the 7-day limit, the action source
a website event can honestly carry, and what every recorded Meta answer means."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from linksvc.forwarding.meta_rules import action_source, browser_of, e164_digits, judge, too_old
from linksvc.forwarding.outgoing import post_json
from linksvc.forwarding.verdicts import DELIVERED, FAILED, RETRY
from tests.vendor_fixtures import fixture_cases

NOW = datetime(2026, 11, 23, 12, 0, 0, tzinfo=UTC)
ONE = post_json("http://127.0.0.1/v26.0/1/events", {"data": [{"event_name": "Purchase"}]})

PHONES: list[tuple[str, Any, str | None, str | None]] = [
    ("international with +", "+57 300 123 4567", None, "573001234567"),
    ("+ wins over the default", "+57 300 123 4567", "1", "573001234567"),
    ("already international, default 57", "573001234567", "57", "573001234567"),
    ("no default: as stored", "573001234567", None, "573001234567"),
    ("national with default 57", "3001234567", "57", "573001234567"),
    ("default given with its +", "300-123-4567", "+57", "573001234567"),
    ("00 international prefix", "00 57 300 123 4567", "1", "573001234567"),
    ("00 without default", "0057 3001234567", None, "573001234567"),
    ("US national with default 1", "(300) 123-4567", "1", "13001234567"),
    ("US already with 1", "1 300 123 4567", "1", "13001234567"),
    ("national trunk 0 dropped", "0300 1234567", "57", "573001234567"),
    ("UK trunk 0 dropped", "07911 123456", "44", "447911123456"),
    ("Italy keeps its 0", "06 1234 5678", "39", "390612345678"),
    ("national without default: digits as stored", "3001234567", None, "3001234567"),
    ("too long for E.164", "+57 300 123 4567 8901", None, None),
    ("too short", "12 34", "57", None),
    ("blank", "  ", "57", None),
    ("not text", 573001234567, "57", None),
    ("none", None, "57", None),
]


@pytest.mark.parametrize(("phone", "default", "expected"), [c[1:] for c in PHONES], ids=[c[0] for c in PHONES])
def test_phones_become_e164_digits(phone: Any, default: str | None, expected: str | None) -> None:
    assert e164_digits(phone, default) == expected


@pytest.mark.parametrize(("issued", "old"), [
    (NOW - timedelta(days=7), False),
    (NOW - timedelta(days=7, microseconds=1), True),
    (NOW - timedelta(days=8), True),
    (NOW - timedelta(days=6, hours=23), False),
    (NOW, False),
    ((NOW - timedelta(days=7)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"), False),
    ((NOW - timedelta(days=7, seconds=1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"), True),
])
def test_seven_days_is_the_limit(issued: Any, old: bool) -> None:
    assert too_old(issued, NOW) is old


UA = "Mozilla/5.0 (iPhone)"
CLICK = {"user_agent": UA, "destination_url": "https://shop.example/p/1", "bot": False, "referer": "https://x.example"}


@pytest.mark.parametrize(("click", "browser"), [
    (CLICK, (UA, "https://shop.example/p/1")),
    (None, None),
    ({**CLICK, "bot": True}, None),
    ({**CLICK, "user_agent": ""}, None),
    ({**CLICK, "user_agent": None}, None),
    ({**CLICK, "destination_url": None}, None),
    ({**CLICK, "destination_url": "myapp://product/1"}, None),
])
def test_the_browser_comes_from_a_persons_click(click: dict[str, Any] | None,
                                                browser: tuple[str, str] | None) -> None:
    assert browser_of(click) == browser


@pytest.mark.parametrize(("configured", "browser", "store", "source"), [
    (None, (UA, "https://s.example"), None, "website"),
    ("website", (UA, "https://s.example"), "S1", "website"),
    (None, None, None, "other"),
    ("website", None, "S1", "physical_store"),
    ("app", None, None, "app"),
    ("physical_store", (UA, "https://s.example"), None, "physical_store"),
])
def test_a_website_event_needs_its_click(configured: str | None, browser: tuple[str, str] | None, store: Any,
                                         source: str) -> None:
    assert action_source(configured, browser, store) == source


def meta_cases() -> list[Any]:
    return [pytest.param(case, id=name.removesuffix(".json")) for name, case in fixture_cases("meta")]




@pytest.mark.parametrize("case", meta_cases())
def test_every_recorded_answer(case: dict[str, Any]) -> None:
    verdict = judge(case["status"], json.dumps(case["body"]).encode(), ONE)
    assert verdict.outcome == case["outcome"]
    assert verdict.message
    error = case["body"].get("error")
    if error:
        assert f"(#{error['code']})" in verdict.message and f"code {error['code']}" in verdict.message
        assert error["fbtrace_id"] in verdict.message
        if "error_subcode" in error:
            assert f"subcode {error['error_subcode']}" in verdict.message
    else:
        assert verdict.message == f"events_received 1, fbtrace_id {case['body']['fbtrace_id']}"


def test_the_fixtures_are_all_there() -> None:
    assert len(fixture_cases("meta")) >= 10


def answer(status: int, body: Any) -> tuple[str, str | None]:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    verdict = judge(status, raw, ONE)
    return verdict.outcome, verdict.message


def error(code: int, **more: Any) -> dict[str, Any]:
    return {"error": {"message": "Something", "type": "OAuthException", "code": code, "fbtrace_id": "T1", **more}}


@pytest.mark.parametrize(("status", "body", "outcome", "message"), [
    (200, {"events_received": 1, "messages": [], "fbtrace_id": "T1"}, DELIVERED, "events_received 1, fbtrace_id T1"),
    (200, {"events_received": 0, "messages": ["event dropped"], "fbtrace_id": "T1"}, FAILED,
     "events_received 0 of 1: event dropped, fbtrace_id T1"),
    (200, {"events_received": 0}, FAILED, "events_received 0 of 1: no message"),
    (200, {}, RETRY, "HTTP 200 without events_received: not an answer of the Conversions API"),
    (200, b"", RETRY, "HTTP 200 without events_received: not an answer of the Conversions API"),
    (502, b"<html>Bad gateway</html>", RETRY, "HTTP 502: <html>Bad gateway</html>"),
    (400, b"not json", FAILED, "HTTP 400: not json"),
    (429, {}, RETRY, "HTTP 429: {}"),
    (400, error(100, error_subcode=2804003), FAILED, "(#100) Something [code 100, subcode 2804003, fbtrace_id T1]"),
    (400, error(100, message="(#100) Param x"), FAILED, "(#100) Param x [code 100, fbtrace_id T1]"),
    (400, error(80004), RETRY, "(#80004) Something [code 80004, fbtrace_id T1]"),
    (400, error(32), RETRY, "(#32) Something [code 32, fbtrace_id T1]"),
    (400, error(341), RETRY, "(#341) Something [code 341, fbtrace_id T1]"),
    (400, error(100, is_transient=True), RETRY, "(#100) Something [code 100, fbtrace_id T1]"),
    (500, error(100), RETRY, "(#100) Something [code 100, fbtrace_id T1]"),
    (403, error(10), FAILED, "(#10) Something [code 10, fbtrace_id T1]"),
    (200, error(100), FAILED, "(#100) Something [code 100, fbtrace_id T1]"),
])
def test_answers(status: int, body: Any, outcome: str, message: str | None) -> None:
    assert answer(status, body) == (outcome, message)


def test_an_invalid_token_fails_and_says_a_person_must_replace_it() -> None:
    outcome, message = answer(400, error(190, error_subcode=463))
    assert outcome == FAILED and message is not None
    assert message.startswith("(#190) Something [code 190, subcode 463, fbtrace_id T1]")
    assert "a person must put a new system-user token" in message


NATIONAL = st.text("123456789", min_size=1, max_size=1).flatmap(
    lambda first: st.text("0123456789", min_size=6, max_size=9).map(lambda rest: first + rest))
CODES = st.sampled_from(["1", "44", "52", "57", "351"])
NOISE = st.lists(st.sampled_from([" ", "-", ".", "(", ")"]), max_size=3)


def typed(digits: str, noise: list[str]) -> str:
    """The digits as a person might type them: groups of three split by the noise."""
    groups = [digits[i:i + 3] for i in range(0, len(digits), 3)]
    return "".join(group + (noise[i % len(noise)] if noise else "") for i, group in enumerate(groups))


@settings(max_examples=200, deadline=None)
@given(CODES, NATIONAL, NOISE, st.sampled_from(["+", "00", "+ ", "00 "]))
def test_an_international_number_is_its_digits_however_typed(code: str, national: str, noise: list[str],
                                                             prefix: str) -> None:
    expected = code + national
    assert e164_digits(prefix + typed(expected, noise), None) == expected
    assert e164_digits(prefix + typed(expected, noise), "57") == expected  # the default never applies


@settings(max_examples=200, deadline=None)
@given(CODES, NATIONAL, NOISE)
def test_a_national_number_gets_the_default_code_once(code: str, national: str, noise: list[str]) -> None:
    assume(not national.startswith(code) or len(national) <= 10)
    assert e164_digits(typed(national, noise), code) == code + national
    if len(code + national) > 10:  # stored already with the code (no +): not prefixed twice
        assert e164_digits(code + national, code) == code + national
