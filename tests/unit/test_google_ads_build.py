"""The Google Ads upload request (product decisions, section 10): the API version in the URL, the credentials
it needs (the reason names what is missing), the optional headers, and the connection test's validateOnly
upload."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from linksvc.forwarding.google_ads import TEST_GCLID, build, build_test
from linksvc.forwarding.outgoing import Filtered, Outgoing
from linksvc.forwarding.versions import default_version

NOW = datetime(2026, 11, 23, 10, 0, 0, tzinfo=UTC)
EVENT = {"id": "e-1", "type": "PURCHASE", "issued_at": "2026-11-22T18:30:00.000000Z",
         "body": {"order_id": "A-1", "value": 10, "currency": "USD", "click_ids": {"gclid": "Cj0-g"}}}
CONFIG = {"customer_id": "123-456-7890", "conversion_action_id": "55", "access_token": "ya29.t"}


def _build(config: dict[str, Any], destination: str | None = "google_ads") -> Outgoing | Filtered:
    connection: dict[str, Any] = {"id": "c-1", "config": config}
    if destination:
        connection["destination"] = destination
    return build("event", EVENT, None, connection, "d-1", NOW)


def _sent(request: Outgoing | Filtered) -> Outgoing:
    assert isinstance(request, Outgoing), request
    return request


URLS = [
    ("the default version", CONFIG, f"https://googleads.googleapis.com/{default_version('google_ads')}/customers/"
     "1234567890:uploadClickConversions"),
    ("a configured version", {**CONFIG, "api_version": "v25"},
     "https://googleads.googleapis.com/v25/customers/1234567890:uploadClickConversions"),
    ("a version written as a number", {**CONFIG, "api_version": " 24 "},
     "https://googleads.googleapis.com/v24/customers/1234567890:uploadClickConversions"),
    ("a local endpoint", {**CONFIG, "endpoint_url": "http://127.0.0.1:9/g/"},
     f"http://127.0.0.1:9/g/{default_version('google_ads')}/customers/1234567890:uploadClickConversions"),
]


@pytest.mark.parametrize(("config", "url"), [c[1:] for c in URLS], ids=[c[0] for c in URLS])
def test_url(config: dict[str, Any], url: str) -> None:
    assert _sent(_build(config)).url == url
    assert _sent(_build(config, destination=None)).url == url  # a connection given without its destination


def test_the_default_is_not_the_sunset_v17() -> None:
    assert "/v17/" not in _sent(_build(CONFIG)).url and default_version("google_ads") != "v17"


REFRESH = {"client_id": "c", "client_secret": "s", "refresh_token": "r"}
MISSING = [
    ("no customer", {k: v for k, v in CONFIG.items() if k != "customer_id"}, "no customer_id"),
    ("no conversion action", {**CONFIG, "conversion_action_id": " "}, "no conversion_action_id"),
    ("no token at all", {"customer_id": "1", "conversion_action_id": "2"},
     "no access_token, nor client_id, client_secret and refresh_token"),
    ("a refresh token set without its secret", {"customer_id": "1", "conversion_action_id": "2",
                                                "client_id": "c", "refresh_token": "r"},
     "no access_token, and its refresh token set lacks client_secret"),
    ("a whole refresh token set never exchanged", {"customer_id": "1", "conversion_action_id": "2", **REFRESH},
     "the refresh token was not exchanged"),
]


@pytest.mark.parametrize(("config", "reason"), [c[1:] for c in MISSING], ids=[c[0] for c in MISSING])
def test_missing(config: dict[str, Any], reason: str) -> None:
    request = _build(config)
    assert isinstance(request, Filtered) and reason in request.reason, request
    assert isinstance(build_test({"config": config}, NOW), Filtered)


HEADERS = [
    ("the access token only", CONFIG, {"Authorization": "Bearer ya29.t"}),
    ("a developer token still configured", {**CONFIG, "developer_token": "dev"},
     {"Authorization": "Bearer ya29.t", "developer-token": "dev"}),
    ("a manager account", {**CONFIG, "login_customer_id": "999-000-1111"},
     {"Authorization": "Bearer ya29.t", "login-customer-id": "9990001111"}),
    ("a token from the refresh token", {**CONFIG, **REFRESH, "access_token": "ya29.fresh"},
     {"Authorization": "Bearer ya29.fresh"}),
]


@pytest.mark.parametrize(("config", "headers"), [c[1:] for c in HEADERS], ids=[c[0] for c in HEADERS])
def test_headers(config: dict[str, Any], headers: dict[str, str]) -> None:
    assert _sent(_build(config)).headers == {"Content-Type": "application/json", **headers}


def test_the_upload_is_not_validate_only() -> None:
    body = json.loads(_sent(_build(CONFIG)).body)
    assert body == {"conversions": [{"gclid": "Cj0-g", "conversionAction": "customers/1234567890/conversionActions/55",
                                     "conversionDateTime": "2026-11-22 18:30:00+00:00", "conversionValue": 10,
                                     "currencyCode": "USD", "orderId": "A-1"}], "partialFailure": True}


def test_the_connection_test_validates_a_made_up_conversion() -> None:
    request = _sent(build_test({"destination": "google_ads", "config": {**CONFIG, "api_version": "v25"}}, NOW))
    assert request.url == "https://googleads.googleapis.com/v25/customers/1234567890:uploadClickConversions"
    assert json.loads(request.body) == {
        "conversions": [{"gclid": TEST_GCLID, "conversionAction": "customers/1234567890/conversionActions/55",
                         "conversionDateTime": "2026-11-23 10:00:00+00:00"}],
        "partialFailure": True, "validateOnly": True}
