"""TikTok's Events API 2.0 request for an accepted event (product decisions, section 10; the
specification's Behavior events, rules 4 and 8).

POST ``{endpoint_url or https://business-api.tiktok.com}/open_api/v1.3/event/track/`` with header
``Access-Token``: one web event of the pixel ``config.pixel_code``, ``CompletePayment`` for a purchase (a
custom event: its type), the same ``event_id`` rule as Meta's (deduplication with the pixel), email, phone
and customer id hashed, and ``ttclid`` only when the client sent it. Reversals are never sent (TikTok would
count one more payment). Custom events' free-form properties are not forwarded (no unhashed personal data).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from linksvc.behavior.models import PURCHASE
from linksvc.forwarding.outgoing import (
    EVENT,
    REVERSAL,
    Filtered,
    Outgoing,
    ads_event_id,
    base_url,
    click_id,
    compact,
    contact,
    hashed_email,
    hashed_phone,
    post_json,
    required,
    setting,
    sha256_hex,
    unix_seconds,
)
from linksvc.forwarding.rules import REVERSAL_REFUSED

DEFAULT_BASE = "https://business-api.tiktok.com"
PATH = "/open_api/v1.3/event/track/"


def user(event: dict[str, Any], customer: dict[str, Any] | None) -> dict[str, Any]:
    email, phone = contact(event, customer)
    return compact({
        "email": hashed_email(email),
        "phone": hashed_phone(phone),
        "external_id": sha256_hex(event["customer_id"]) if event.get("customer_id") else None,
        "ttclid": click_id(event, "ttclid"),
    })


def properties(body: dict[str, Any]) -> dict[str, Any]:
    contents = [compact({"content_id": p.get("sku"), "content_name": p.get("name"), "quantity": p.get("quantity"),
                         "price": p.get("price")})
                for p in body.get("products") or []]
    return compact({
        "currency": body.get("currency"), "value": body.get("value"), "order_id": body.get("order_id"),
        "contents": contents, "content_type": "product" if contents else None,
    })


def track_event(event: dict[str, Any], customer: dict[str, Any] | None) -> dict[str, Any]:
    body = event.get("body") or {}
    is_purchase = event["type"] == PURCHASE
    return compact({
        "event": "CompletePayment" if is_purchase else event["type"],
        "event_time": unix_seconds(event.get("issued_at") or body["issued_at"]),
        "event_id": ads_event_id(event),
        "user": user(event, customer),
        "properties": properties(body) if is_purchase else None,
    })


def build(kind: str, event: dict[str, Any], customer: dict[str, Any] | None, connection: dict[str, Any],
          delivery_id: str, now: datetime) -> Outgoing | Filtered:
    if kind == REVERSAL:
        return Filtered(REVERSAL_REFUSED["tiktok"])
    if kind != EVENT:
        raise ValueError(f"tiktok has no delivery kind {kind!r}")
    found = required(connection, "pixel_code", "access_token")
    if isinstance(found, Filtered):
        return found
    pixel_code, token = found
    payload: dict[str, Any] = {"event_source": "web", "event_source_id": pixel_code,
                               "data": [track_event(event, customer)]}
    test_code = setting(connection, "test_event_code")
    if test_code:
        payload["test_event_code"] = test_code
    return post_json(base_url(connection, DEFAULT_BASE) + PATH, payload, {"Access-Token": token})
