"""TikTok's answers judged from the body (every recorded vendor response), and the connection test."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from linksvc.forwarding import tiktok
from linksvc.forwarding.outgoing import Filtered, Outgoing
from linksvc.forwarding.verdicts import DELIVERED, FAILED, RETRY
from tests.vendor_fixtures import body_bytes, fixture_cases

SENT = Outgoing("POST", "https://business-api.tiktok.com/open_api/v1.3/event/track/", {}, b"{}")


@pytest.mark.parametrize(("name", "case"), fixture_cases("tiktok"), ids=[n for n, _ in fixture_cases("tiktok")])
def test_every_recorded_answer(name: str, case: dict[str, Any]) -> None:
    verdict = tiktok.judge(case["status"], body_bytes(case["body"]), SENT)
    assert verdict.outcome == case["outcome"]
    code = case["body"].get("code")
    if verdict.outcome != DELIVERED:  # the vendor's own code, message and request id, for a person to read
        assert verdict.message is not None and str(code) in verdict.message
        assert case["body"]["message"] in verdict.message
        if "request_id" in case["body"]:
            assert case["body"]["request_id"] in verdict.message


def test_the_fixtures_cover_each_outcome() -> None:
    assert {c["outcome"] for _, c in fixture_cases("tiktok")} == {DELIVERED, RETRY, FAILED}


@pytest.mark.parametrize(("status", "body", "outcome", "in_message"), [
    (200, {"code": 0, "message": "OK"}, DELIVERED, None),
    (200, {"code": 40002, "message": "Invalid value for event_id"}, FAILED, "TikTok code 40002: Invalid value"),
    (200, {"code": 40100, "message": "App reaches the QPS limit."}, RETRY, "40100"),
    (200, {"code": 50000, "message": "System error"}, RETRY, "50000"),
    (200, {"code": 51004, "message": "?"}, RETRY, "51004"),
    (200, {"code": 40105, "message": "Access token is incorrect"}, FAILED, "a person must replace"),
    (200, {"code": 40001, "message": "Permission error"}, FAILED, "a person must replace"),
    (200, {"code": 40006, "message": "no permission"}, FAILED, "40006"),
    (200, {"code": "0"}, RETRY, "without TikTok's code"),  # not TikTok's envelope: someone else answered
    (200, {}, RETRY, "without TikTok's code"),
    (502, "<html>Bad gateway</html>", RETRY, "HTTP 502"),
    (429, "", RETRY, "HTTP 429"),
    (400, {"code": "invalid_params", "message": "bad"}, FAILED, "invalid_params: bad"),
    (200, {"code": True, "message": "odd"}, RETRY, "without TikTok's code"),
])
def test_codes_and_statuses(status: int, body: Any, outcome: str, in_message: str | None) -> None:
    verdict = tiktok.judge(status, body_bytes(body), SENT)
    assert verdict.outcome == outcome
    if in_message is not None:
        assert verdict.message is not None and in_message in verdict.message


NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
CONNECTION = {"destination": "tiktok", "config": {"endpoint_url": "http://127.0.0.1:9/tt", "pixel_code": "PX",
                                                  "access_token": "tok", "test_event_code": "TEST123"}}


def test_the_connection_test_sends_the_test_event_code() -> None:
    request = tiktok.build_test(CONNECTION, NOW)
    assert isinstance(request, Outgoing)
    assert request.url == "http://127.0.0.1:9/tt/open_api/v1.3/event/track/"
    assert request.headers["Access-Token"] == "tok"
    payload = json.loads(request.body)
    assert payload["test_event_code"] == "TEST123" and payload["event_source_id"] == "PX"
    assert payload["data"][0]["event"] == "CompletePayment"
    assert payload["data"][0]["event_time"] == int(NOW.timestamp())


@pytest.mark.parametrize(("config", "reason"), [
    ({"pixel_code": "PX", "access_token": "tok"}, "test_event_code"),
    ({"pixel_code": "PX", "access_token": "tok", "test_event_code": "  "}, "test_event_code"),
    ({"pixel_code": "PX", "test_event_code": "T"}, "access_token"),
])
def test_no_connection_test_without_what_it_needs(config: dict[str, Any], reason: str) -> None:
    found = tiktok.build_test({"destination": "tiktok", "config": config}, NOW)
    assert isinstance(found, Filtered) and reason in found.reason
