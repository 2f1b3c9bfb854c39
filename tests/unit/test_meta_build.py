"""Meta's request (linksvc/forwarding/meta.py): the version in the URL, the 7-day skip, user_data never empty,
phones hashed as E.164 digits, the click's user agent and page for website events, and the connection test."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from linksvc.forwarding import meta
from linksvc.forwarding.outgoing import Filtered, Outgoing, Skipped
from linksvc.forwarding.versions import default_version

NOW = datetime(2026, 11, 23, 12, 0, 0, tzinfo=UTC)
UA = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)"
CLICK = {"user_agent": UA, "referer": "https://social.example/post", "clicked_at": "2026-11-22T10:00:00.000000Z",
         "platform": "ios", "bot": False, "link_id": "l-1", "code": "abc",
         "destination_url": "https://shop.example/latte?utm_source=ig"}
CONFIG = {"endpoint_url": "http://127.0.0.1:9/graph", "pixel_id": "42", "access_token": "tok"}


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def event(issued: datetime = NOW - timedelta(hours=1), click: dict[str, Any] | None = None,
          **body: Any) -> dict[str, Any]:
    stored = {"type": "PURCHASE", "customer_id": "cust-1", "order_id": "A-1", "currency": "COP", "value": 50,
              "issued_at": iso(issued), **body}
    return {"id": "ev-1", "type": stored["type"], "customer_id": stored["customer_id"], "order_id": "A-1",
            "issued_at": iso(issued), "body": stored, "click": click}


def sent(ev: dict[str, Any], customer: dict[str, Any] | None = None, **config: Any) -> tuple[str, dict[str, Any]]:
    request = meta.build("event", ev, customer, {"destination": "meta", "config": {**CONFIG, **config}}, "d-1", NOW)
    assert isinstance(request, Outgoing), request
    payload = json.loads(request.body)
    assert len(payload["data"]) == 1  # one event a request
    return request.url, payload


def test_the_url_carries_the_default_version_or_the_connections() -> None:
    url, _ = sent(event())
    assert url == f"http://127.0.0.1:9/graph/{default_version('meta')}/42/events?access_token=tok"
    assert default_version("meta") != "v19.0"
    url, _ = sent(event(), api_version="v25.0")
    assert url.startswith("http://127.0.0.1:9/graph/v25.0/42/events?")
    request = meta.build("event", event(), None, {"destination": "meta", "config": {"pixel_id": "1",
                                                                                     "access_token": "t"}}, "d", NOW)
    assert isinstance(request, Outgoing)
    assert request.url == f"https://graph.facebook.com/{default_version('meta')}/1/events?access_token=t"


@pytest.mark.parametrize(("age", "skipped"), [
    (timedelta(days=7), False),
    (timedelta(days=7, seconds=1), True),
    (timedelta(days=30), True),
    (timedelta(0), False),
])
def test_seven_days_old_is_sent_older_is_skipped(age: timedelta, skipped: bool) -> None:
    request = meta.build("event", event(NOW - age), None, {"config": CONFIG}, "d-1", NOW)
    if skipped:
        assert isinstance(request, Skipped) and "more than 7 days" in request.reason
        assert iso(NOW - age) in request.reason
    else:
        assert isinstance(request, Outgoing)
        assert json.loads(request.body)["data"][0]["event_time"] == int((NOW - age).timestamp())


def test_an_event_with_nothing_for_user_data_is_skipped_with_the_reason() -> None:
    request = meta.build("event", event(customer_id=None, store_id="S1") | {"customer_id": None}, None,
                         {"destination": "meta", "config": CONFIG}, "d-1", NOW)
    assert isinstance(request, Skipped) and "no customer information" in request.reason
    # One parameter is enough: the client's fbp alone is sent.
    _, payload = sent(event(customer_id=None, click_ids={"fbp": "fb.1.1.2"}) | {"customer_id": None})
    assert payload["data"][0]["user_data"] == {"fbp": "fb.1.1.2"}


@pytest.mark.parametrize(("phone", "default", "digits"), [
    ("+57 300 123 4567", None, "573001234567"),
    ("573001234567", "57", "573001234567"),
    ("3001234567", "57", "573001234567"),
    ("00 57 300 123 4567", "57", "573001234567"),
    ("(300) 123-4567", "1", "13001234567"),
])
def test_phones_are_hashed_as_e164_digits(phone: str, default: str | None, digits: str) -> None:
    config = {"default_country_code": default} if default else {}
    _, payload = sent(event(), {"email": " Ana@Example.com ", "phone": phone}, **config)
    user_data = payload["data"][0]["user_data"]
    assert user_data["ph"] == [sha(digits)]
    assert user_data["em"] == [sha("ana@example.com")] and user_data["external_id"] == [sha("cust-1")]


def test_a_phone_that_cannot_be_e164_is_not_sent() -> None:
    _, payload = sent(event(), {"phone": "12"})
    assert "ph" not in payload["data"][0]["user_data"]


def test_a_website_event_carries_the_clicks_browser_and_page() -> None:
    _, payload = sent(event(click=CLICK, click_ids={"fbp": "fb.1.1.2", "fbclid": "IwAR"}))
    server_event = payload["data"][0]
    assert server_event["action_source"] == "website"
    assert server_event["event_source_url"] == "https://shop.example/latte?utm_source=ig"
    assert server_event["user_data"]["client_user_agent"] == UA
    assert server_event["user_data"]["fbp"] == "fb.1.1.2" and "fbc" not in server_event["user_data"]
    assert server_event["event_id"] == "order-A-1"
    assert server_event["custom_data"] == {"currency": "COP", "value": 50, "order_id": "A-1"}


@pytest.mark.parametrize(("click", "body", "source"), [
    (None, {}, "other"),
    (None, {"store_id": "S1"}, "physical_store"),
    ({**CLICK, "bot": True}, {}, "other"),
    ({**CLICK, "destination_url": "myapp://latte"}, {"store_id": "S1"}, "physical_store"),
])
def test_a_website_event_without_a_usable_click_is_not_called_a_website_event(
        click: dict[str, Any] | None, body: dict[str, Any], source: str) -> None:
    _, payload = sent(event(click=click, **body))
    server_event = payload["data"][0]
    assert server_event["action_source"] == source
    assert "event_source_url" not in server_event and "client_user_agent" not in server_event["user_data"]


def test_a_configured_action_source_is_kept_and_gets_no_browser() -> None:
    _, payload = sent(event(click=CLICK), action_source="physical_store")
    server_event = payload["data"][0]
    assert server_event["action_source"] == "physical_store"
    assert "event_source_url" not in server_event and "client_user_agent" not in server_event["user_data"]


def test_the_connection_test_is_a_purchase_meta_does_not_count() -> None:
    request = meta.build_test({"config": {**CONFIG, "test_event_code": "TEST123"}}, NOW)
    assert isinstance(request, Outgoing)
    assert request.url == f"http://127.0.0.1:9/graph/{default_version('meta')}/42/events?access_token=tok"
    payload = json.loads(request.body)
    assert payload["test_event_code"] == "TEST123"
    [server_event] = payload["data"]
    assert server_event["event_name"] == "Purchase" and server_event["event_time"] == int(NOW.timestamp())
    assert server_event["user_data"] and server_event["custom_data"]["currency"]


def test_the_connection_test_needs_a_test_event_code() -> None:
    request = meta.build_test({"config": CONFIG}, NOW)
    assert isinstance(request, Filtered) and not isinstance(request, Skipped)
    assert request.reason.startswith("the connection's config has no test_event_code")
