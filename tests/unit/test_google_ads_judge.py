"""What Google Ads' answers mean (product decisions, section 10): every documented answer in
``fixtures/vendors/google_ads`` judged as its ``outcome`` says, with Google's error codes in the message, and
the answers a connection test gets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from linksvc.forwarding.google_ads import judge
from linksvc.forwarding.outgoing import Outgoing, post_json
from linksvc.forwarding.verdicts import DELIVERED, FAILED, RETRY

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "vendors" / "google_ads"
UPLOAD = post_json("https://googleads.googleapis.com/v26/customers/1:uploadClickConversions",
                   {"conversions": [{"gclid": "G"}], "partialFailure": True})
TEST = post_json("https://googleads.googleapis.com/v26/customers/1:uploadClickConversions",
                 {"conversions": [{"gclid": "G"}], "partialFailure": True, "validateOnly": True})
# Answers of the token endpoint, judged by linksvc.forwarding.oauth, not by the upload's judge.
TOKEN_ENDPOINT = {"oauth_token_success.json", "oauth_invalid_grant.json"}
# The codes each fixture's message must carry.
CODES = {
    "upload_success.json": [],
    "partial_failure_event_not_found.json": ["conversionUploadError: EVENT_NOT_FOUND at conversions[0]"],
    "partial_failure_mixed_expired_event.json": ["conversionUploadError: EXPIRED_EVENT at conversions[1]"],
    "partial_failure_too_recent_conversion_action.json": ["TOO_RECENT_CONVERSION_ACTION at conversions[0]"],
    "partial_failure_too_recent_event.json": ["TOO_RECENT_EVENT at conversions[0]"],
    "invalid_argument_too_many_conversions.json": ["INVALID_ARGUMENT", "TOO_MANY_CONVERSIONS_IN_REQUEST"],
    "unauthenticated_401.json": ["UNAUTHENTICATED", "authenticationError: AUTHENTICATION_ERROR"],
    "permission_denied_developer_token_403.json": ["PERMISSION_DENIED", "DEVELOPER_TOKEN_NOT_APPROVED"],
    "permission_denied_user_403.json": ["PERMISSION_DENIED", "authorizationError: USER_PERMISSION_DENIED"],
    "resource_exhausted_429.json": ["RESOURCE_EXHAUSTED", "quotaError: RESOURCE_TEMPORARILY_EXHAUSTED"],
    "internal_500.json": ["HTTP 500 INTERNAL", "internalError: INTERNAL_ERROR"],
    "unavailable_503.json": ["HTTP 503 UNAVAILABLE"],
}


def _fixtures() -> list[Path]:
    return sorted(p for p in FIXTURES.glob("*.json") if p.name not in TOKEN_ENDPOINT)


def test_every_upload_fixture_has_its_expected_codes() -> None:
    assert sorted(p.name for p in _fixtures()) == sorted(CODES)


@pytest.mark.parametrize("path", _fixtures(), ids=lambda p: p.stem)
def test_each_documented_answer(path: Path) -> None:
    fixture = json.loads(path.read_text())
    verdict = judge(fixture["status"], json.dumps(fixture["body"]).encode(), UPLOAD)
    assert verdict.outcome == fixture["outcome"]
    assert verdict.token_expired == (fixture["status"] == 401)
    for code in CODES[path.name]:
        assert code in (verdict.message or "")
    has_request_id = "requestId" in json.dumps(fixture["body"])
    assert ("(request id aBcDeFgHiJkLmNoPqRsT12)" in (verdict.message or "")) == has_request_id


def _failure(*codes: str, test: bool = False) -> tuple[int, bytes, Outgoing]:
    errors = [{"errorCode": {"conversionUploadError": code}, "message": f"about {code}",
               "location": {"fieldPathElements": [{"fieldName": "conversions", "index": 0},
                                                  {"fieldName": "gclid"}]}} for code in codes]
    body = {"partialFailureError": {"code": 3, "message": "m", "details": [
        {"@type": "type.googleapis.com/google.ads.googleads.v26.errors.GoogleAdsFailure", "errors": errors,
         "requestId": "req-9"}]}, "results": [{}]}
    return 200, json.dumps(body).encode(), TEST if test else UPLOAD


CASES: list[tuple[str, tuple[int, bytes, Outgoing], str, list[str]]] = [
    ("a made-up click refused in a test", _failure("UNPARSEABLE_GCLID", test=True), DELIVERED,
     ["validateOnly", "UNPARSEABLE_GCLID at conversions[0].gclid", "req-9"]),
    ("an unknown click in a test", _failure("EVENT_NOT_FOUND", test=True), DELIVERED, ["EVENT_NOT_FOUND"]),
    ("a wrong conversion action in a test", _failure("NO_CONVERSION_ACTION_FOUND", "UNPARSEABLE_GCLID", test=True),
     FAILED, ["NO_CONVERSION_ACTION_FOUND", "UNPARSEABLE_GCLID"]),
    ("a new conversion action in a test", _failure("TOO_RECENT_CONVERSION_ACTION", test=True), RETRY,
     ["TOO_RECENT_CONVERSION_ACTION"]),
    ("a test Google found nothing wrong with", (200, b'{"jobId": "7"}', TEST), DELIVERED, ["validateOnly"]),
    ("a made-up click outside a test", _failure("UNPARSEABLE_GCLID"), FAILED, ["UNPARSEABLE_GCLID"]),
    ("the old click-not-found code", _failure("CLICK_NOT_FOUND"), FAILED,
     ["conversionUploadError: CLICK_NOT_FOUND at conversions[0].gclid: about CLICK_NOT_FOUND"]),
    ("the conversion before its click", _failure("CONVERSION_PRECEDES_EVENT"), FAILED, ["CONVERSION_PRECEDES_EVENT"]),
    ("too recent, and refused too", _failure("TOO_RECENT_EVENT", "EVENT_NOT_FOUND"), FAILED,
     ["TOO_RECENT_EVENT", "EVENT_NOT_FOUND"]),
    ("too recent twice", _failure("TOO_RECENT_EVENT", "TOO_RECENT_CONVERSION_ACTION"), RETRY, ["TOO_RECENT_EVENT"]),
    ("a resend of a recorded order", _failure("ORDER_ID_ALREADY_IN_USE"), DELIVERED, ["already recorded"]),
    ("a partial failure without details", (200, b'{"partialFailureError": {"code": 3, "message": "bad"}}', UPLOAD),
     FAILED, ["partial failure: bad"]),
    ("a transient partial failure", (200, b'{"partialFailureError": {"code": 14, "message": "later"}}', UPLOAD),
     RETRY, ["later"]),
    ("an empty partial failure", (200, b'{"partialFailureError": {}, "results": [{}]}', UPLOAD), DELIVERED, []),
    ("HTML from a proxy, 502", (502, b"<html>Bad Gateway</html>", UPLOAD), RETRY, ["HTTP 502", "Bad Gateway"]),
    ("HTML from a proxy, 404", (404, b"<html>Not Found</html>", UPLOAD), FAILED, ["HTTP 404", "Not Found"]),
    ("an empty 200", (200, b"", UPLOAD), DELIVERED, []),
    ("a 503 status in a 400", (400, b'{"error": {"code": 503, "status": "UNAVAILABLE", "message": "m"}}', UPLOAD),
     RETRY, ["UNAVAILABLE: m"]),
]


@pytest.mark.parametrize(("answer", "outcome", "parts"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_answers(answer: tuple[int, bytes, Outgoing], outcome: str, parts: list[str]) -> None:
    verdict = judge(*answer)
    assert verdict.outcome == outcome
    for part in parts:
        assert part in (verdict.message or "")


def test_a_401_without_json_still_refreshes_the_token() -> None:
    verdict = judge(401, b"Unauthorized", UPLOAD)
    assert verdict.outcome == RETRY and verdict.token_expired


def test_a_long_answer_keeps_its_request_id() -> None:
    errors: list[dict[str, Any]] = [{"errorCode": {"conversionUploadError": "EVENT_NOT_FOUND"}, "message": "x" * 400}
                                    for _ in range(5)]
    body = {"partialFailureError": {"code": 3, "details": [
        {"@type": "type.googleapis.com/google.ads.googleads.v26.errors.GoogleAdsFailure", "errors": errors,
         "requestId": "req-long"}]}}
    verdict = judge(200, json.dumps(body).encode(), UPLOAD)
    assert verdict.outcome == FAILED and (verdict.message or "").endswith("(request id req-long)")
