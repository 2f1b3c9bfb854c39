"""Why a delivery is not sent: the connection's switches and filters, the customer's consent, and the
reversals the ads platforms must never receive (product decisions, section 10; the specification's Behavior
events, rules 7 and 8).

:func:`filter_reason` answers with the reason, or None when the delivery goes out. Webhook kinds about
rewards, tiers and reversals follow the rules of the event they come from (its type, hence
``forward_purchases`` for a purchase).
"""

from __future__ import annotations

from typing import Any

from linksvc.forwarding.outgoing import ADS_DESTINATIONS, REVERSAL
from linksvc.loyalty.models import PURCHASE

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
    off, the destination never takes this kind, forwarding of this type is off, the type is not allowed,
    the customer's consent refuses it."""
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
    if event_type not in (connection.get("event_types") or []):
        return f"event type {event_type} is not allowed by the connection"
    return consent_reason(destination, customer)


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
