"""The messaging platform's request: an accepted event, or an ``order_refunded`` event for a reversed
purchase carrying the purchase's properties and its original attribution (product decisions, section 10;
the specification's Behavior events, rule 8).

The platform is generic: ``config.endpoint_url`` receives a JSON POST, with ``Authorization: Bearer
{config.api_key}`` when a key is configured. There is no public default endpoint.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from linksvc.forwarding.outgoing import EVENT, REVERSAL, Filtered, Outgoing, compact, post_json, required, setting
from linksvc.loyalty.models import PURCHASE

PURCHASE_PROPERTIES = ("order_id", "value", "currency", "products", "store_id", "channel_id", "brand_id")
REVERSAL_PROPERTIES = ("order_id", "value", "currency", "products")


def event_payload(event: dict[str, Any], customer: dict[str, Any] | None) -> dict[str, Any]:
    body = event.get("body") or {}
    is_purchase = event["type"] == PURCHASE
    properties = dict(body.get("properties") or {})
    if is_purchase:
        properties.update(compact({name: body.get(name) for name in PURCHASE_PROPERTIES}))
    external_id = (customer or {}).get("external_id") or body.get("external_id")
    return {
        "event": "purchase" if is_purchase else event["type"],
        "event_id": event["id"],
        "customer_id": event.get("customer_id"),
        **({"external_id": external_id} if external_id else {}),
        "timestamp": event.get("issued_at") or body.get("issued_at"),
        "properties": properties,
        "attribution": body.get("attribution") or {},
    }


def reversal_payload(event: dict[str, Any], reversal: dict[str, Any]) -> dict[str, Any]:
    body = event.get("body") or {}
    properties = compact({name: body.get(name) for name in REVERSAL_PROPERTIES})
    properties.update({"reason": reversal.get("reason"), "reversed_at": reversal.get("reversed_at"),
                       "original_event_id": event["id"]})
    return {
        # Its own id: a platform deduplicating on event_id must not drop the refund as a repeat of the purchase.
        "event": "order_refunded",
        "event_id": f"{event['id']}:reversal",
        "customer_id": event.get("customer_id"),
        "timestamp": reversal.get("reversed_at"),
        "properties": properties,
        "attribution": body.get("attribution") or {},
    }


def build(kind: str, event: dict[str, Any], customer: dict[str, Any] | None, connection: dict[str, Any],
          delivery_id: str, now: datetime) -> Outgoing | Filtered:
    found = required(connection, "endpoint_url")
    if isinstance(found, Filtered):
        return found
    (url,) = found
    api_key = setting(connection, "api_key")
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    if kind == EVENT:
        return post_json(url, event_payload(event, customer), headers)
    if kind == REVERSAL:
        if not event.get("reversal"):
            return Filtered("the event has not been reversed")
        return post_json(url, reversal_payload(event, event["reversal"]), headers)
    raise ValueError(f"messaging has no delivery kind {kind!r}")
