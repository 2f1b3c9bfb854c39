"""GA4: every recorded answer judged, the 72-hour limit, names mapped in the request, the connection test."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from linksvc.forwarding import ga4
from linksvc.forwarding.outgoing import Filtered, Outgoing, Skipped
from linksvc.forwarding.verdicts import DELIVERED, FAILED, RETRY
from tests.vendor_fixtures import body_bytes, fixture_cases

COLLECT = Outgoing("POST", "https://www.google-analytics.com/mp/collect?measurement_id=G-1&api_secret=s", {}, b"{}")
DEBUG = Outgoing("POST", "https://www.google-analytics.com/debug/mp/collect?measurement_id=G-1&api_secret=s", {},
                 b"{}")
NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
CONNECTION = {"destination": "ga4", "config": {"endpoint_url": "http://127.0.0.1:9/g", "measurement_id": "G-1",
                                               "api_secret": "s"}}


@pytest.mark.parametrize(("name", "case"), fixture_cases("ga4"), ids=[n for n, _ in fixture_cases("ga4")])
def test_every_recorded_answer(name: str, case: dict[str, Any]) -> None:
    sent = DEBUG if name.startswith("debug_") else COLLECT
    verdict = ga4.judge(case["status"], body_bytes(case["body"]), sent)
    assert verdict.outcome == case["outcome"]
    for message in (case["body"] or {}).get("validationMessages", []) if isinstance(case["body"], dict) else []:
        assert verdict.message is not None
        assert message["validationCode"] in verdict.message and message["fieldPath"] in verdict.message
        assert message["description"] in verdict.message
    if verdict.outcome == RETRY:
        assert verdict.message == f"HTTP {case['status']}"


@pytest.mark.parametrize(("status", "body", "sent", "outcome"), [
    (204, b"", COLLECT, DELIVERED),
    (200, b'{"validationMessages": [{"validationCode": "NAME_INVALID"}]}', COLLECT, DELIVERED),  # /mp/collect: 2xx
    (200, b"not json", DEBUG, FAILED),
    (200, b"{}", DEBUG, FAILED),
    (500, b"", DEBUG, RETRY),
    (400, b"", COLLECT, FAILED),
])
def test_statuses_and_odd_bodies(status: int, body: bytes, sent: Outgoing, outcome: str) -> None:
    assert ga4.judge(status, body, sent).outcome == outcome


def event(issued_at: datetime, type_: str = "PURCHASE", **body: Any) -> dict[str, Any]:
    moment = issued_at.isoformat()
    return {"id": "e-1", "type": type_, "customer_id": "c", "issued_at": moment, "reversal": None,
            "body": {"issued_at": moment, "order_id": "A-1", "currency": "COP", "value": 10,
                     "analytics": {"client_id": "1.2"}, **body}}


@pytest.mark.parametrize(("age", "sent"), [
    (timedelta(0), True),
    (timedelta(hours=71, minutes=59), True),
    (timedelta(hours=71, minutes=59, seconds=59, microseconds=999999), True),
    (timedelta(hours=72), False),
    (timedelta(hours=72, seconds=1), False),
    (timedelta(days=30), False),
    (-timedelta(hours=1), True),  # a clock a little ahead: GA4 is not asked to backdate
])
def test_the_72_hour_limit(age: timedelta, sent: bool) -> None:
    request = ga4.build("event", event(NOW - age), None, CONNECTION, "d", NOW)
    if sent:
        assert isinstance(request, Outgoing)
    else:
        assert isinstance(request, Skipped)
        assert "72 hours" in request.reason and f"{int(age.total_seconds() // 3600)} hours old" in request.reason


def test_a_refund_is_judged_by_the_reversal_time() -> None:
    old = event(NOW - timedelta(days=10))
    fresh = {**old, "reversal": {"reversed_at": (NOW - timedelta(hours=1)).isoformat()}}
    assert isinstance(ga4.build("reversal", fresh, None, CONNECTION, "d", NOW), Outgoing)
    stale = {**old, "reversal": {"reversed_at": (NOW - timedelta(hours=80)).isoformat()}}
    assert isinstance(ga4.build("reversal", stale, None, CONNECTION, "d", NOW), Skipped)


def test_a_custom_event_goes_under_a_valid_name_with_its_campaign_cut() -> None:
    request = ga4.build("event", event(NOW, "session_start", attribution={"utm_campaign": "c" * 300}), None,
                        CONNECTION, "d", NOW)
    assert isinstance(request, Outgoing)
    sent = json.loads(request.body)["events"][0]
    assert sent["name"] == "ls_session_start"
    assert sent["params"]["campaign_name"] == "c" * 100


def test_the_connection_test_posts_to_the_validation_server() -> None:
    request = ga4.build_test(CONNECTION, NOW)
    assert isinstance(request, Outgoing)
    assert request.url == "http://127.0.0.1:9/g/debug/mp/collect?measurement_id=G-1&api_secret=s"
    payload = json.loads(request.body)
    assert payload["validation_behavior"] == "ENFORCE_RECOMMENDATIONS" and "client_id" in payload
    assert payload["events"][0]["name"] == "purchase"
    assert payload["events"][0]["params"]["currency"] == "USD"


def test_the_app_stream_connection_test() -> None:
    request = ga4.build_test({"config": {"firebase_app_id": "1:2:android:3", "api_secret": "s"}}, NOW)
    assert isinstance(request, Outgoing) and "firebase_app_id=1%3A2%3Aandroid%3A3" in request.url
    assert len(json.loads(request.body)["app_instance_id"]) == 32


@pytest.mark.parametrize(("config", "reason"), [
    ({"measurement_id": "G-1"}, "api_secret"),
    ({"api_secret": "s"}, "measurement_id or firebase_app_id"),
])
def test_no_connection_test_without_its_config(config: dict[str, Any], reason: str) -> None:
    found = ga4.build_test({"config": config}, NOW)
    assert isinstance(found, Filtered) and not isinstance(found, Skipped) and reason in found.reason
