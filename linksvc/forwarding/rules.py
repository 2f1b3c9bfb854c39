"""Why a delivery is not sent: the connection's switches and filters, the customer's consent, and the
reversals the ads platforms must never receive (product decisions, section 10; the specification's Behavior
events, rules 7 and 8).

:func:`filter_reason` answers with the reason, or None when the delivery goes out. Webhook kinds about
rewards, tiers and reversals follow the rules of the event they come from (its type, hence
``forward_purchases`` for a purchase).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from linksvc.forwarding.outgoing import ADS_DESTINATIONS, REVERSAL
from linksvc.loyalty.models import PURCHASE
from linksvc.resources.models import ALL_EVENT_TYPES

TYPE_PREFIX, TYPE_SUFFIX = "event type ", " is not allowed by the connection"

# Meta and TikTok would count a reversal sent to them as one more Purchase conversion; Google Ads click
# conversions have no negative upload through this API (adjustments are a separate service).
REVERSAL_REFUSED = {
    "meta": "reversals are not sent to meta (it would count another purchase)",
    "tiktok": "reversals are not sent to tiktok (it would count another purchase)",
    "google_ads": "reversals are not sent to google_ads",
}


def filter_reason(connection: dict[str, Any], kind: str, event: dict[str, Any],
                  customer: dict[str, Any] | None) -> str | None:
    """Why nothing is sent for this delivery, or None to send it. Checked in this order: the connection is
    off, the destination never takes this kind, forwarding of this type is off, the type is not allowed
    (``event_types``: the names listed, or ``["*"]`` for every type), the customer's consent refuses it."""
    destination = connection.get("destination", "")
    if not connection.get("enabled", True):
        return "connection disabled"
    if kind == REVERSAL and destination in REVERSAL_REFUSED:
        return REVERSAL_REFUSED[destination]
    event_type = event.get("type") or (event.get("body") or {}).get("type")
    if event_type == PURCHASE:
        if not connection.get("forward_purchases", True):
            return "purchase forwarding is off"
    elif not connection.get("forward_events", True):
        return "event forwarding is off"
    if not type_allowed(connection, event_type):
        return type_reason(event_type)
    return consent_reason(destination, customer)


def type_allowed(connection: dict[str, Any], event_type: Any) -> bool:
    """Whether the connection's ``event_types`` let the type through: ``["*"]`` every type, else those listed.
    A connection stored before the field was required (none, or ``[]``) lets none through, as it always did."""
    types = connection.get("event_types") or []
    return ALL_EVENT_TYPES in types or event_type in types


def type_reason(event_type: Any) -> str:
    return f"{TYPE_PREFIX}{event_type}{TYPE_SUFFIX}"


def lifted_reasons(connection: dict[str, Any], reasons: Sequence[str | None]) -> list[str]:
    """Of the reasons a delivery to the connection was filtered with, those its rules no longer give: what a
    change of the connection (enabled, forward_*, event_types) now lets through. A customer's consent and
    the refused reversals are never lifted here (the dispatcher checks consent again before sending)."""
    lifted = []
    for reason in reasons:
        if reason == "connection disabled":
            allowed = bool(connection.get("enabled", True))
        elif reason == "purchase forwarding is off":
            allowed = bool(connection.get("forward_purchases", True))
        elif reason == "event forwarding is off":
            allowed = bool(connection.get("forward_events", True))
        elif reason is not None and reason.startswith(TYPE_PREFIX) and reason.endswith(TYPE_SUFFIX):
            allowed = type_allowed(connection, reason[len(TYPE_PREFIX):-len(TYPE_SUFFIX)])
        else:
            allowed = False
        if allowed and reason is not None:
            lifted.append(reason)
    return lifted


def consent_reason(destination: str, customer: dict[str, Any] | None) -> str | None:
    """Only an explicit refusal filters: a vendor or purpose the customer never answered does not."""
    if customer is None:
        return None
    consent = customer.get("consent") or {}
    if (consent.get("vendors") or {}).get(destination) is False:
        return f"the customer refused {destination} in consent"
    if destination in ADS_DESTINATIONS and (consent.get("purposes") or {}).get("audience_marketing") is False:
        return "the customer refused audience marketing"
    return None
