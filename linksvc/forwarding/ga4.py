"""Google Analytics 4 Measurement Protocol request: ``purchase`` (a custom event: its type) for an accepted
event, ``refund`` for a reversed purchase (product decisions, section 10; the specification's attribution
context and Behavior events, rule 8).

POST ``{endpoint_url or https://www.google-analytics.com}/mp/collect`` with ``measurement_id`` and
``api_secret`` for a web stream (identity ``analytics.client_id``), or ``firebase_app_id`` and ``api_secret``
for an app stream (``analytics.app_instance_id``). The identity is the analytics service's own, as the
client sent it: without one the delivery is filtered, never made up from a tracking id. ``session_id`` and
``session_number`` go only as sent, and only with the event of that session (a refund comes later).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from linksvc.behavior.models import PURCHASE
from linksvc.forwarding.outgoing import (
    EVENT,
    REVERSAL,
    Filtered,
    Outgoing,
    base_url,
    compact,
    post_json,
    setting,
    unix_micros,
)

DEFAULT_BASE = "https://www.google-analytics.com"
NO_IDENTITY = "no analytics identity (client_id or app_instance_id) was sent"
CAMPAIGN = (("utm_source", "campaign_source"), ("utm_medium", "campaign_medium"), ("utm_campaign", "campaign_name"),
            ("utm_term", "campaign_term"), ("utm_content", "campaign_content"))


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def stream(connection: dict[str, Any], analytics: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]] | Filtered:
    """(query, identity): the web stream when a client_id was sent and a measurement_id is configured, else
    the app stream when an app_instance_id was sent and a firebase_app_id is configured."""
    client_id, app_instance_id = _text(analytics.get("client_id")), _text(analytics.get("app_instance_id"))
    if client_id is None and app_instance_id is None:
        return Filtered(NO_IDENTITY)
    secret = setting(connection, "api_secret")
    if secret is None:
        return Filtered("the connection's config has no api_secret")
    measurement_id, firebase_app_id = setting(connection, "measurement_id"), setting(connection, "firebase_app_id")
    if client_id is not None and measurement_id is not None:
        return {"measurement_id": measurement_id, "api_secret": secret}, {"client_id": client_id}
    if app_instance_id is not None and firebase_app_id is not None:
        return {"firebase_app_id": firebase_app_id, "api_secret": secret}, {"app_instance_id": app_instance_id}
    return Filtered("the connection's config has no measurement_id" if client_id is not None
                    else "the connection's config has no firebase_app_id")


def params(body: dict[str, Any], with_session: bool) -> dict[str, Any]:
    analytics = body.get("analytics") or {}
    attribution = body.get("attribution") or {}
    items = [compact({"item_id": p.get("sku"), "item_name": p.get("name"), "quantity": p.get("quantity"),
                      "price": p.get("price")})
             for p in body.get("products") or []]
    return compact({
        "transaction_id": body.get("order_id"),
        "currency": body.get("currency"),
        "value": body.get("value"),
        "items": items,
        "session_id": analytics.get("session_id") if with_session else None,
        "session_number": analytics.get("session_number") if with_session else None,
        **{name: _text(attribution.get(utm)) for utm, name in CAMPAIGN},
    })


def build(kind: str, event: dict[str, Any], customer: dict[str, Any] | None, connection: dict[str, Any],
          delivery_id: str, now: datetime) -> Outgoing | Filtered:
    body = event.get("body") or {}
    found = stream(connection, body.get("analytics") or {})
    if isinstance(found, Filtered):
        return found
    query, identity = found
    if kind == EVENT:
        name = "purchase" if event["type"] == PURCHASE else event["type"]
        moment = event.get("issued_at") or body["issued_at"]
    elif kind == REVERSAL:
        if not event.get("reversal"):
            return Filtered("the event has not been reversed")
        name, moment = "refund", event["reversal"]["reversed_at"]
    else:
        raise ValueError(f"ga4 has no delivery kind {kind!r}")
    payload = {**identity, "timestamp_micros": unix_micros(moment),
               "events": [{"name": name, "params": params(body, with_session=kind == EVENT)}]}
    return post_json(f"{base_url(connection, DEFAULT_BASE)}/mp/collect?{urlencode(query)}", payload)
