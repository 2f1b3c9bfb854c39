"""Where the demo's deliveries go (linksvc.demo.endpoints): the service's own address, read from
the sockets it listens on, for the demo accounts' placeholder URLs only; the sink's signature check against
the reference Standard Webhooks library; the vendors' stand-ins answering the documented fixtures."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from standardwebhooks.webhooks import Webhook

from linksvc.demo.endpoints import NOT_LISTENING, DemoEndpoints, base_url, signature_problem, vendor_answer
from linksvc.forwarding.meta_rules import judge
from linksvc.forwarding.outgoing import post_json
from linksvc.forwarding.verdicts import DELIVERED, FAILED

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "vendors"
SECRET = "whsec_ZGVtby1jb2ZmZWUtd2ViaG9vay1zZWNyZXQtMDAx"
NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(("host", "port", "base"), [
    ("127.0.0.1", 8080, "http://127.0.0.1:8080"),
    ("0.0.0.0", 9000, "http://127.0.0.1:9000"),
    ("", 9000, "http://127.0.0.1:9000"),
    ("::", 8081, "http://[::1]:8081"),
    ("::1", 8081, "http://[::1]:8081"),
    ("192.168.1.20", 80, "http://192.168.1.20:80"),
])
def test_the_base_that_reaches_a_listening_address(host: str, port: int, base: str) -> None:
    assert base_url(host, port) == base


def _endpoints(addresses: list[Any], port: int, accounts: set[str]) -> DemoEndpoints:
    async def demo_accounts() -> list[str]:
        return sorted(accounts)

    return DemoEndpoints(demo_accounts, lambda: addresses, "127.0.0.1", port)


async def test_only_demo_placeholders_come_home() -> None:
    endpoints = _endpoints([("0.0.0.0", 41234)], 0, {"demo"})
    sink = "http://this-service.invalid/demo/webhook-sink"
    assert await endpoints.local_url("demo", sink) == "http://127.0.0.1:41234/demo/webhook-sink"
    meta = "http://this-service.invalid/demo/vendor/meta/v26.0/1/events?access_token=t"
    assert await endpoints.local_url("demo", meta) == "http://127.0.0.1:41234/demo/vendor/meta/v26.0/1/events?access_token=t"
    assert await endpoints.local_url("other", sink) is None  # not demo data: the placeholder stays (and fails)
    for url in ("http://this-service.invalid/api/admin/v1/accounts", "http://this-service.invalid/demo/../api/x",
                "https://hooks.example.com/demo/webhook-sink", "not a url"):
        assert await endpoints.local_url("demo", url) is None, url


async def test_the_port_follows_the_server_and_waits_for_it() -> None:
    listening: list[Any] = []
    endpoints = _endpoints(listening, 0, {"demo"})
    sink = "http://this-service.invalid/demo/webhook-sink"
    assert await endpoints.local_url("demo", sink) is NOT_LISTENING  # port 0 and no socket yet
    listening.append(("::", 5555, 0, 0))
    assert await endpoints.local_url("demo", sink) == "http://[::1]:5555/demo/webhook-sink"
    fixed = _endpoints([], 8123, {"demo"})  # LINKSVC_PORT / --port before the socket opens
    assert await fixed.local_url("demo", sink) == "http://127.0.0.1:8123/demo/webhook-sink"


def _signed(secret: str, body: str, when: datetime, msg_id: str = "msg_1") -> dict[str, str]:
    return {"webhook-id": msg_id, "webhook-timestamp": str(int(when.timestamp())),
            "webhook-signature": Webhook(secret).sign(msg_id, when, body)}


def test_the_sink_accepts_what_the_reference_library_signs() -> None:
    body = '{"type":"event.accepted"}'
    assert signature_problem([SECRET], _signed(SECRET, body, NOW), body.encode(), NOW) is None
    rotated = "whsec_" + "A" * 40
    both = _signed(rotated, body, NOW)
    both["webhook-signature"] += " " + _signed(SECRET, body, NOW)["webhook-signature"]
    assert signature_problem([SECRET], both, body.encode(), NOW) is None  # a rotation's two signatures


@pytest.mark.parametrize(("change", "why"), [
    (lambda h, b: (h, b + b" "), "no signature matches"),
    (lambda h, b: ({**h, "webhook-id": "msg_2"}, b), "no signature matches"),
    (lambda h, b: ({k: v for k, v in h.items() if k != "webhook-signature"}, b), "are required"),
    (lambda h, b: ({**h, "webhook-timestamp": "soon"}, b), "Unix time"),
    (lambda h, b: ({**h, "webhook-timestamp": str(int((NOW - timedelta(minutes=6)).timestamp()))}, b), "5 minutes"),
])
def test_the_sink_refuses_anything_else(change: Any, why: str) -> None:
    body = b'{"type":"event.accepted"}'
    headers, sent = change(_signed(SECRET, body.decode(), NOW), body)
    problem = signature_problem([SECRET], headers, sent, NOW)
    assert problem is not None and why in problem


def test_meta_stand_in_answers_the_documented_expired_token() -> None:
    request = post_json("http://x/v26.0/1/events?access_token=demo-expired-access-token", {"data": [{}, {}]})
    answer = vendor_answer("meta", "/demo/vendor/meta/v26.0/1/events", {"access_token": "demo-expired-access-token"},
                           request.body)
    assert answer is not None
    fixture = json.loads((FIXTURES / "meta" / "auth_expired_token_190_463.json").read_text())
    assert (answer.status, json.loads(answer.body)) == (fixture["status"], fixture["body"])
    assert fixture["body"]["error"]["code"] == 190 and fixture["body"]["error"]["error_subcode"] == 463
    verdict = judge(answer.status, answer.body, request)
    assert verdict.outcome == FAILED and "Session has expired" in (verdict.message or "")

    fixed = vendor_answer("meta", "/demo/vendor/meta/v26.0/1/events", {"access_token": "a-new-token"}, request.body)
    assert fixed is not None and judge(fixed.status, fixed.body, request).outcome == DELIVERED
    assert json.loads(fixed.body)["events_received"] == 2


def test_ga4_stand_in_and_unknown_vendors() -> None:
    answer = vendor_answer("ga4", "/demo/vendor/ga4/mp/collect", {}, b"{}")
    assert answer is not None and (answer.status, answer.body) == (204, b"")
    debug = vendor_answer("ga4", "/demo/vendor/ga4/debug/mp/collect", {}, b"{}")
    assert debug is not None and json.loads(debug.body) == {"validationMessages": []}
    assert vendor_answer("tiktok", "/demo/vendor/tiktok/x", {}, b"{}") is None
