"""Destination payloads (product decisions, section 10): the exact request each destination's builder makes
for a purchase, a custom event and a reversal, the deliveries it refuses to make, and webhook signing."""

from __future__ import annotations

import copy
import hashlib
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from standardwebhooks.webhooks import Webhook

from linksvc.forwarding.destinations import build
from linksvc.forwarding.outgoing import Filtered, Outgoing
from linksvc.forwarding.versions import default_version

EVENT_ID = "0b6f3c1e-3f0a-4a52-9c51-1d3c1f7a0001"
ISSUED = "2024-05-01T12:30:45.123456Z"  # 1714566645.123456
ISSUED_S, ISSUED_US = 1714566645, 1714566645123456
REVERSED = "2024-05-03T09:15:00.000000Z"  # 1714727700
NOW = datetime(2024, 5, 2, 8, 0, 0, tzinfo=UTC)  # 1714636800
LOCAL = "http://127.0.0.1:8765"
META_VERSION = default_version("meta")
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
JSON = {"Content-Type": "application/json"}

ATTRIBUTION = {"tracking_id": "trk-9", "utm_source": "newsletter", "utm_medium": "email", "utm_campaign": "spring",
               "utm_term": "shoes", "utm_content": "hero", "revenue": 10}
ORIGINAL = {"utm_source": "newsletter", "utm_medium": "", "utm_campaign": "spring", "revenue": 10}
PRODUCTS = [{"sku": "SKU-1", "name": "Shoe", "quantity": 2, "price": 50000},
            {"sku": "SKU-2", "quantity": 1, "price": 25000.5}]
EMAIL_HASH = hashlib.sha256(b"ana@example.com").hexdigest()
PHONE_HASH = hashlib.sha256(b"573001234567").hexdigest()
CUSTOMER_HASH = hashlib.sha256(b"cust-1").hexdigest()
CUSTOMER = {"id": "cust-1", "email": " Ana@Example.COM ", "phone": "+57 300 123 4567", "external_id": "ext-1",
            "document_number": "1020", "tier_id": None,
            "consent": {"purposes": {"audience_marketing": True}, "vendors": {"meta": True}}}
ISSUED_REWARD = {"line_id": "l-1", "reward_id": "r-1", "campaign_id": "c-1", "amount": "10.5",
                 "expiration_date": "2024-12-31T00:00:00.000000Z"}
REVERSAL = {"reason": "returned by the customer", "reversed_at": REVERSED,
            "taken_back": [{"line_id": "l-1", "reward_id": "r-1", "amount": "8"}],
            "shortfall": [{"line_id": "l-1", "reward_id": "r-1", "amount": "2.5"}], "returned": [],
            "tier": {"from": "silver", "to": "bronze"}}


def purchase(reversed_: bool = False, **body: Any) -> dict[str, Any]:
    """A stored PURCHASE event as the dispatcher hands it over (row fields, JSON columns parsed)."""
    stored = {
        "id": EVENT_ID, "type": "PURCHASE", "customer_id": "cust-1", "issued_at": ISSUED,
        "received_at": "2024-05-01T12:30:46.000000Z", "properties": {"coupon": "SPRING"},
        "attribution": ATTRIBUTION, "attribution_original": ORIGINAL,
        "analytics": {"client_id": "555.777", "session_id": "1714560000", "session_number": 3},
        "click_ids": {"fbc": "fb.1.1714560000.AbC", "fbp": "fb.1.1714559000.99", "ttclid": "E.C.P.tt",
                      "gclid": "Cj0KCQ-gclid"},
        "order_id": "A-100", "currency": "COP", "value": 125000.5, "products": PRODUCTS, "store_id": "S1",
    }
    stored.update(body)
    return {
        "id": EVENT_ID, "account_id": "acc-1", "type": "PURCHASE", "customer_id": stored["customer_id"],
        "order_id": "A-100", "issued_at": ISSUED, "received_at": stored["received_at"], "key_kind": "SERVER",
        "body": {k: v for k, v in stored.items() if v is not None},
        "effects": {"issued": [ISSUED_REWARD], "spent": [], "expired": [], "tier": {"from": "bronze", "to": "silver"}},
        "reversed_at": REVERSED if reversed_ else None, "reversal": copy.deepcopy(REVERSAL) if reversed_ else None,
    }


def custom_event(**body: Any) -> dict[str, Any]:
    stored = {"id": EVENT_ID, "type": "ADD_TO_CART", "customer_id": "cust-1", "issued_at": ISSUED,
              "received_at": ISSUED, "properties": {"sku": "SKU-1", "email": "leak@example.com"},
              "attribution": {"tracking_id": "trk-9"}, "attribution_original": None, "analytics": None,
              "click_ids": None}
    stored.update(body)
    return {"id": EVENT_ID, "account_id": "acc-1", "type": "ADD_TO_CART", "customer_id": stored["customer_id"],
            "order_id": None, "issued_at": ISSUED, "received_at": ISSUED, "key_kind": "CLIENT", "body": stored,
            "effects": {"issued": [], "spent": [], "expired": [], "tier": None}, "reversed_at": None, "reversal": None}


def connection(destination: str, **config: Any) -> dict[str, Any]:
    return {"id": "conn-1", "name": destination, "destination": destination, "enabled": True, "forward_events": True,
            "forward_purchases": True, "event_types": ["PURCHASE", "ADD_TO_CART"], "config": config}


def sent(destination: str, kind: str, event: dict[str, Any], customer: dict[str, Any] | None,
         config: dict[str, Any], trigger: str | None = None) -> tuple[str, str, dict[str, str], Any]:
    request = build(destination, kind, event, customer, connection(destination, **config), "msg_1", NOW,
                    trigger=trigger)
    assert isinstance(request, Outgoing), request
    return request.method, request.url, request.headers, json.loads(request.body)


MESSAGING = {"endpoint_url": f"{LOCAL}/messaging/events", "api_key": "mk-1"}
META = {"endpoint_url": f"{LOCAL}/graph", "pixel_id": "1234567890", "access_token": "EAAB tok", "test_event_code": "T1"}
TIKTOK = {"endpoint_url": f"{LOCAL}/tt/", "pixel_code": "C0PIXEL", "access_token": "tt-token"}
GA4 = {"endpoint_url": LOCAL, "measurement_id": "G-ABC123", "firebase_app_id": "1:99:android:aa", "api_secret": "s3"}
ADS = {"endpoint_url": f"{LOCAL}/ads", "customer_id": "123-456-7890", "conversion_action_id": "555",
       "access_token": "ya29.tok", "developer_token": "dev-1", "login_customer_id": "999-000-1111"}
ITEMS = [{"item_id": "SKU-1", "item_name": "Shoe", "quantity": 2, "price": 50000},
         {"item_id": "SKU-2", "quantity": 1, "price": 25000.5}]
CAMPAIGN = {"campaign_source": "newsletter", "campaign_medium": "email", "campaign_name": "spring",
            "campaign_term": "shoes", "campaign_content": "hero"}

CASES: list[tuple[str, str, str, dict[str, Any], dict[str, Any] | None, dict[str, Any], tuple[Any, ...]]] = [
    ("messaging purchase", "messaging", "event", purchase(), CUSTOMER, MESSAGING, (
        "POST", f"{LOCAL}/messaging/events", {**JSON, "Authorization": "Bearer mk-1"},
        {"event": "purchase", "event_id": EVENT_ID, "customer_id": "cust-1", "external_id": "ext-1",
         "timestamp": ISSUED, "properties": {"coupon": "SPRING", "order_id": "A-100", "value": 125000.5,
                                             "currency": "COP", "products": PRODUCTS, "store_id": "S1"},
         "attribution": ATTRIBUTION})),
    ("messaging custom event, no key, no customer", "messaging", "event", custom_event(customer_id=None), None,
     {"endpoint_url": f"{LOCAL}/m"}, (
         "POST", f"{LOCAL}/m", JSON,
         {"event": "ADD_TO_CART", "event_id": EVENT_ID, "customer_id": None, "timestamp": ISSUED,
          "properties": {"sku": "SKU-1", "email": "leak@example.com"}, "attribution": {"tracking_id": "trk-9"}})),
    ("messaging reversal", "messaging", "reversal", purchase(reversed_=True), CUSTOMER, MESSAGING, (
        "POST", f"{LOCAL}/messaging/events", {**JSON, "Authorization": "Bearer mk-1"},
        {"event": "order_refunded", "event_id": f"{EVENT_ID}:reversal", "customer_id": "cust-1",
         "timestamp": REVERSED,
         "properties": {"order_id": "A-100", "value": 125000.5, "currency": "COP", "products": PRODUCTS,
                        "reason": "returned by the customer", "reversed_at": REVERSED, "original_event_id": EVENT_ID},
         "attribution": ATTRIBUTION})),
    ("meta purchase", "meta", "event", purchase(), CUSTOMER, META, (
        "POST", f"{LOCAL}/graph/{META_VERSION}/1234567890/events?access_token=EAAB+tok", JSON,
        {"data": [{"event_name": "Purchase", "event_time": ISSUED_S, "event_id": "order-A-100",
                   "action_source": "physical_store",  # no click behind it, a store_id: not a website event
                   "user_data": {"em": [EMAIL_HASH], "ph": [PHONE_HASH], "external_id": [CUSTOMER_HASH],
                                 "fbc": "fb.1.1714560000.AbC", "fbp": "fb.1.1714559000.99"},
                   "custom_data": {"currency": "COP", "value": 125000.5, "order_id": "A-100",
                                   "contents": [{"id": "SKU-1", "quantity": 2, "item_price": 50000},
                                                {"id": "SKU-2", "quantity": 1, "item_price": 25000.5}],
                                   "content_type": "product"}}]})),  # test_event_code: only for the test
    ("meta purchase, no click ids: no fbc made from fbclid or UTM; public endpoint by default", "meta", "event",
     purchase(click_ids={"fbclid": "IwAR-fbclid"}, email="Bob@Example.com", phone=None), None,
     {"pixel_id": "42", "access_token": "t"}, (
         "POST", f"https://graph.facebook.com/{META_VERSION}/42/events?access_token=t", JSON,
         {"data": [{"event_name": "Purchase", "event_time": ISSUED_S, "event_id": "order-A-100",
                    "action_source": "physical_store",
                    "user_data": {"em": [hashlib.sha256(b"bob@example.com").hexdigest()],
                                  "external_id": [CUSTOMER_HASH]},
                    "custom_data": {"currency": "COP", "value": 125000.5, "order_id": "A-100",
                                    "contents": [{"id": "SKU-1", "quantity": 2, "item_price": 50000},
                                                 {"id": "SKU-2", "quantity": 1, "item_price": 25000.5}],
                                    "content_type": "product"}}]})),
    ("meta custom event: its type, its event id, no properties", "meta", "event", custom_event(), CUSTOMER,
     {**META, "test_event_code": None}, (
         "POST", f"{LOCAL}/graph/{META_VERSION}/1234567890/events?access_token=EAAB+tok", JSON,
         {"data": [{"event_name": "ADD_TO_CART", "event_time": ISSUED_S, "event_id": EVENT_ID,
                    "action_source": "other",  # no click behind it, no store
                    "user_data": {"em": [EMAIL_HASH], "ph": [PHONE_HASH], "external_id": [CUSTOMER_HASH]}}]})),
    ("tiktok purchase", "tiktok", "event", purchase(), CUSTOMER, TIKTOK, (
        "POST", f"{LOCAL}/tt/open_api/v1.3/event/track/", {**JSON, "Access-Token": "tt-token"},
        {"event_source": "web", "event_source_id": "C0PIXEL",
         "data": [{"event": "CompletePayment", "event_time": ISSUED_S, "event_id": "order-A-100",
                   "user": {"email": EMAIL_HASH, "phone": PHONE_HASH, "external_id": CUSTOMER_HASH,
                            "ttclid": "E.C.P.tt"},
                   "properties": {"currency": "COP", "value": 125000.5, "order_id": "A-100",
                                  "contents": [{"content_id": "SKU-1", "content_name": "Shoe", "quantity": 2,
                                                "price": 50000},
                                               {"content_id": "SKU-2", "quantity": 1, "price": 25000.5}],
                                  "content_type": "product"}}]})),
    ("tiktok custom event without ttclid, public endpoint", "tiktok", "event", custom_event(), None,
     {"pixel_code": "P", "access_token": "a", "test_event_code": "TEST1"}, (
         "POST", "https://business-api.tiktok.com/open_api/v1.3/event/track/", {**JSON, "Access-Token": "a"},
         {"event_source": "web", "event_source_id": "P",  # test_event_code: only for the connection test
          "data": [{"event": "ADD_TO_CART", "event_time": ISSUED_S, "event_id": EVENT_ID,
                    "user": {"external_id": CUSTOMER_HASH}}]})),
    ("ga4 web purchase", "ga4", "event", purchase(), CUSTOMER, GA4, (
        "POST", f"{LOCAL}/mp/collect?measurement_id=G-ABC123&api_secret=s3", JSON,
        {"client_id": "555.777", "timestamp_micros": ISSUED_US,
         "events": [{"name": "purchase", "params": {"transaction_id": "A-100", "currency": "COP", "value": 125000.5,
                                                    "items": ITEMS, "session_id": "1714560000", "session_number": 3,
                                                    **CAMPAIGN}}]})),
    ("ga4 app custom event, no session sent", "ga4", "event",
     custom_event(analytics={"app_instance_id": "inst-1"}, attribution={"utm_source": "push"}), None, GA4, (
         "POST", f"{LOCAL}/mp/collect?firebase_app_id=1%3A99%3Aandroid%3Aaa&api_secret=s3", JSON,
         {"app_instance_id": "inst-1", "timestamp_micros": ISSUED_US,
          "events": [{"name": "ADD_TO_CART", "params": {"campaign_source": "push"}}]})),
    ("ga4 refund: reversal time, original UTM, no session", "ga4", "reversal", purchase(reversed_=True), CUSTOMER,
     {k: v for k, v in GA4.items() if k != "endpoint_url"}, (
         "POST", "https://www.google-analytics.com/mp/collect?measurement_id=G-ABC123&api_secret=s3", JSON,
         {"client_id": "555.777", "timestamp_micros": 1714727700000000,
          "events": [{"name": "refund", "params": {"transaction_id": "A-100", "currency": "COP", "value": 125000.5,
                                                  "items": ITEMS, **CAMPAIGN}}]})),
    ("google_ads purchase with gclid", "google_ads", "event", purchase(), CUSTOMER, ADS, (
        "POST", f"{LOCAL}/ads/v26/customers/1234567890:uploadClickConversions",
        {**JSON, "Authorization": "Bearer ya29.tok", "developer-token": "dev-1", "login-customer-id": "9990001111"},
        {"conversions": [{"gclid": "Cj0KCQ-gclid", "conversionAction": "customers/1234567890/conversionActions/555",
                          "conversionDateTime": "2024-05-01 12:30:45+00:00", "conversionValue": 125000.5,
                          "currencyCode": "COP", "orderId": "A-100"}],
         "partialFailure": True})),
    ("google_ads public endpoint, no login customer", "google_ads", "event",
     purchase(click_ids={"gclid": "G1", "gbraid": "B1"}, value=None), None,
     {"customer_id": "1", "conversion_action_id": "2", "access_token": "a", "developer_token": "d"}, (
         "POST", "https://googleads.googleapis.com/v26/customers/1:uploadClickConversions",
         {**JSON, "Authorization": "Bearer a", "developer-token": "d"},
         {"conversions": [{"gclid": "G1", "conversionAction": "customers/1/conversionActions/2",
                           "conversionDateTime": "2024-05-01 12:30:45+00:00", "currencyCode": "COP",
                           "orderId": "A-100"}],
          "partialFailure": True})),
]


@pytest.mark.parametrize(("destination", "kind", "event", "customer", "config", "expected"),
                         [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_request(destination: str, kind: str, event: dict[str, Any], customer: dict[str, Any] | None,
                 config: dict[str, Any], expected: tuple[Any, ...]) -> None:
    assert sent(destination, kind, event, customer, config) == expected


WEBHOOK = {"endpoint_url": f"{LOCAL}/hook", "secret": SECRET}
ACCEPTED_DATA = {
    "id": EVENT_ID, "type": "PURCHASE", "customer_id": "cust-1", "issued_at": ISSUED, "order_id": "A-100",
    "value": 125000.5, "currency": "COP", "products": PRODUCTS, "properties": {"coupon": "SPRING"},
    "attribution": ATTRIBUTION, "attribution_original": ORIGINAL,
    "analytics": {"client_id": "555.777", "session_id": "1714560000", "session_number": 3},
    "click_ids": {"fbc": "fb.1.1714560000.AbC", "fbp": "fb.1.1714559000.99", "ttclid": "E.C.P.tt",
                  "gclid": "Cj0KCQ-gclid"},
}
SUBJECT = {"event_id": EVENT_ID, "customer_id": "cust-1"}
WEBHOOK_CASES = [
    ("event.accepted", None, purchase(), ACCEPTED_DATA),
    ("event.accepted", None, custom_event(), {
        "id": EVENT_ID, "type": "ADD_TO_CART", "customer_id": "cust-1", "issued_at": ISSUED, "order_id": None,
        "value": None, "currency": None, "products": None, "properties": {"sku": "SKU-1", "email": "leak@example.com"},
        "attribution": {"tracking_id": "trk-9"}, "attribution_original": None, "analytics": None, "click_ids": None}),
    ("reward.issued", "event", purchase(), {**SUBJECT, "rewards": [{**ISSUED_REWARD, "amount": 10.5}]}),
    ("tier.changed", "event", purchase(reversed_=True),
     {**SUBJECT, "from": "bronze", "to": "silver", "cause": "purchase"}),
    ("purchase.reversed", "reversal", purchase(reversed_=True), {
        **SUBJECT, "order_id": "A-100", "reason": "returned by the customer", "reversed_at": REVERSED,
        "value": 125000.5, "currency": "COP", "attribution": ATTRIBUTION, "attribution_original": ORIGINAL}),
    ("reward.reversed", "reversal", purchase(reversed_=True), {
        **SUBJECT, "taken_back": [{"line_id": "l-1", "reward_id": "r-1", "amount": 8}],
        "shortfall": [{"line_id": "l-1", "reward_id": "r-1", "amount": 2.5}]}),
    ("tier.changed", "reversal", purchase(reversed_=True),
     {**SUBJECT, "from": "silver", "to": "bronze", "cause": "reversal"}),
]


@pytest.mark.parametrize(("kind", "trigger", "event", "data"), WEBHOOK_CASES,
                         ids=[f"{c[0]} ({c[1]})" for c in WEBHOOK_CASES])
def test_webhook_request(kind: str, trigger: str | None, event: dict[str, Any], data: dict[str, Any]) -> None:
    request = build("webhook", kind, event, CUSTOMER, connection("webhook", **WEBHOOK), "msg_1", NOW, trigger=trigger)
    assert isinstance(request, Outgoing)
    assert (request.method, request.url) == ("POST", f"{LOCAL}/hook")
    # The official library's signer over the same id, time and bytes: an independent check of ours.
    signature = Webhook(SECRET).sign("msg_1", NOW, request.body.decode())
    assert request.headers == {"content-type": "application/json", "webhook-id": "msg_1",
                               "webhook-timestamp": "1714636800", "webhook-signature": signature}
    assert json.loads(request.body) == {"type": kind, "timestamp": "2024-05-02T08:00:00.000000Z", "data": data}


@pytest.mark.parametrize("secret", [SECRET, "whsec_" + "c2VjcmV0LWtleS0xNg==", "whsec_c2VjcmV0LWtleS0xNg"])
def test_webhook_signature_verifies_with_the_standard_webhooks_library(secret: str) -> None:
    now = datetime.now(UTC)  # the library refuses timestamps more than five minutes from its clock
    request = build("webhook", "event.accepted", purchase(), CUSTOMER,
                    connection("webhook", endpoint_url=f"{LOCAL}/hook", secret=secret), "msg_2xyz", now)
    assert isinstance(request, Outgoing)
    assert Webhook(secret).verify(request.body, request.headers)["data"] == ACCEPTED_DATA
    tampered = request.body.replace(b"A-100", b"A-101")
    with pytest.raises(Exception, match="signature"):
        Webhook(secret).verify(tampered, request.headers)


def test_tier_change_without_trigger_is_inferred_only_when_unambiguous() -> None:
    only_reversal = purchase(reversed_=True)
    only_reversal["effects"]["tier"] = None
    request = build("webhook", "tier.changed", only_reversal, CUSTOMER, connection("webhook", **WEBHOOK), "m", NOW)
    assert isinstance(request, Outgoing)
    assert json.loads(request.body)["data"]["cause"] == "reversal"
    with pytest.raises(ValueError, match="trigger"):
        build("webhook", "tier.changed", purchase(reversed_=True), CUSTOMER, connection("webhook", **WEBHOOK), "m",
              NOW)


NOT_SENT = [
    ("ga4 without analytics identity", "ga4", "event", custom_event(analytics=None), GA4,
     "no analytics identity (client_id or app_instance_id) was sent"),
    ("ga4 with only a tracking id", "ga4", "event", purchase(analytics={"session_id": "1"}), GA4,
     "no analytics identity (client_id or app_instance_id) was sent"),
    ("ga4 web identity, app stream configured only", "ga4", "event", purchase(),
     {"firebase_app_id": "1:2:a", "api_secret": "s"}, "the connection's config has no measurement_id"),
    ("google_ads without click ids", "google_ads", "event", purchase(click_ids=None), ADS,
     "no native gclid: Google Ads click conversions need one"),
    ("google_ads with gbraid only", "google_ads", "event", purchase(click_ids={"gbraid": "B"}), ADS,
     "no native gclid: Google Ads click conversions need one"),
    ("google_ads with wbraid only", "google_ads", "event", purchase(click_ids={"wbraid": "W", "gclid": ""}), ADS,
     "no native gclid: Google Ads click conversions need one"),
    ("meta without pixel", "meta", "event", purchase(), {"access_token": "t"},
     "the connection's config has no pixel_id"),
    ("tiktok without token", "tiktok", "event", purchase(), {"pixel_code": "P"},
     "the connection's config has no access_token"),
    ("messaging without endpoint", "messaging", "event", purchase(), {}, "the connection's config has no endpoint_url"),
    ("messaging reversal of an event not reversed", "messaging", "reversal", purchase(), MESSAGING,
     "the event has not been reversed"),
    ("ga4 refund of an event not reversed", "ga4", "reversal", purchase(), GA4, "the event has not been reversed"),
    ("webhook with a secret that is not base64", "webhook", "event.accepted", purchase(),
     {**WEBHOOK, "secret": "whsec_not base64!"},
     "the connection's config secret is unusable: the webhook secret is not a whsec_ followed by base64"),
    ("webhook without secret", "webhook", "event.accepted", purchase(), {"endpoint_url": f"{LOCAL}/h"},
     "the connection's config has no secret"),
    ("webhook reward.issued when nothing was issued", "webhook", "reward.issued", custom_event(), WEBHOOK,
     "the event issued no reward"),
    ("webhook purchase.reversed before any reversal", "webhook", "purchase.reversed", purchase(), WEBHOOK,
     "the event has not been reversed"),
    ("s3_export is not sent by HTTP", "s3_export", "event", purchase(), {},
     "s3_export connections are written by the export job, not sent by HTTP"),
]


@pytest.mark.parametrize(("destination", "kind", "event", "config", "reason"), [c[1:] for c in NOT_SENT],
                         ids=[c[0] for c in NOT_SENT])
def test_not_sent(destination: str, kind: str, event: dict[str, Any], config: dict[str, Any], reason: str) -> None:
    assert build(destination, kind, event, CUSTOMER, connection(destination, **config), "m", NOW) == Filtered(reason)


def test_the_same_delivery_builds_the_same_bytes() -> None:
    one = build("meta", "event", purchase(), CUSTOMER, connection("meta", **META), "m", NOW)
    two = build("meta", "event", copy.deepcopy(purchase()), copy.deepcopy(CUSTOMER), connection("meta", **META), "m",
                NOW)
    assert isinstance(one, Outgoing) and one == two


def test_unknown_destination_and_kind_are_errors() -> None:
    with pytest.raises(ValueError, match="unknown destination"):
        build("fax", "event", purchase(), CUSTOMER, connection("fax"), "m", NOW)
    with pytest.raises(ValueError, match="no delivery kind"):
        build("meta", "event.accepted", purchase(), CUSTOMER, connection("meta", **META), "m", NOW)
