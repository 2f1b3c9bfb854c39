"""Meta's Conversions API request for an accepted event (product decisions, section 10; the specification's
Behavior events, rules 4 and 8).

POST ``{endpoint_url or https://graph.facebook.com/v19.0}/{pixel_id}/events?access_token=...`` with one
server event: ``Purchase`` (or a custom event's type), its ``event_id`` derived from the order id so that
the browser pixel's event of the same order is deduplicated, the customer's email, phone and id hashed, and
``fbc``/``fbp`` only as the client sent them: never made from ``fbclid``, UTM or the time. Reversals are
never sent (Meta would count one more purchase). Custom events' properties are not forwarded: Meta refuses
unhashed personal data in ``custom_data``, and properties are free-form.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import quote, urlencode

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

DEFAULT_BASE = "https://graph.facebook.com/v19.0"


def user_data(event: dict[str, Any], customer: dict[str, Any] | None) -> dict[str, Any]:
    email, phone = contact(event, customer)
    hashed = {"em": hashed_email(email), "ph": hashed_phone(phone),
              "external_id": sha256_hex(event["customer_id"]) if event.get("customer_id") else None}
    return {
        **{key: [value] for key, value in hashed.items() if value},
        **compact({"fbc": click_id(event, "fbc"), "fbp": click_id(event, "fbp")}),
    }


def custom_data(body: dict[str, Any]) -> dict[str, Any]:
    contents = [compact({"id": p.get("sku"), "quantity": p.get("quantity"), "item_price": p.get("price")})
                for p in body.get("products") or []]
    return compact({
        "currency": body.get("currency"), "value": body.get("value"), "order_id": body.get("order_id"),
        "contents": contents, "content_type": "product" if contents else None,
    })


def server_event(event: dict[str, Any], customer: dict[str, Any] | None, action_source: str) -> dict[str, Any]:
    body = event.get("body") or {}
    is_purchase = event["type"] == PURCHASE
    return compact({
        "event_name": "Purchase" if is_purchase else event["type"],
        "event_time": unix_seconds(event.get("issued_at") or body["issued_at"]),
        "event_id": ads_event_id(event),
        "action_source": action_source,
        "user_data": user_data(event, customer),
        "custom_data": custom_data(body) if is_purchase else None,
    })


def build(kind: str, event: dict[str, Any], customer: dict[str, Any] | None, connection: dict[str, Any],
          delivery_id: str, now: datetime) -> Outgoing | Filtered:
    if kind == REVERSAL:
        return Filtered(REVERSAL_REFUSED["meta"])
    if kind != EVENT:
        raise ValueError(f"meta has no delivery kind {kind!r}")
    found = required(connection, "pixel_id", "access_token")
    if isinstance(found, Filtered):
        return found
    pixel_id, token = found
    url = f"{base_url(connection, DEFAULT_BASE)}/{quote(pixel_id, safe='')}/events?" + urlencode(
        {"access_token": token})
    payload: dict[str, Any] = {
        "data": [server_event(event, customer, setting(connection, "action_source") or "website")]}
    test_code = setting(connection, "test_event_code")
    if test_code:
        payload["test_event_code"] = test_code
    return post_json(url, payload)
