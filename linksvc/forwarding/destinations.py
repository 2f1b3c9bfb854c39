"""The one entry point from a delivery to its HTTP request: the connection's rules first, then the
destination's pure builder (product decisions, section 10).

Each builder takes ``(kind, event, customer, connection, delivery_id, now)`` and returns an
:class:`~linksvc.forwarding.outgoing.Outgoing` request or a :class:`~linksvc.forwarding.outgoing.Filtered`
reason. ``s3_export`` has no builder: the export job writes its files, nothing is sent by HTTP.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from linksvc.forwarding import ga4, google_ads, messaging, meta, tiktok, webhook
from linksvc.forwarding.outgoing import Filtered, Outgoing
from linksvc.forwarding.rules import filter_reason

Builder = Callable[[str, dict[str, Any], dict[str, Any] | None, dict[str, Any], str, datetime], Outgoing | Filtered]

BUILDERS: dict[str, Builder] = {
    "messaging": messaging.build,
    "meta": meta.build,
    "tiktok": tiktok.build,
    "ga4": ga4.build,
    "google_ads": google_ads.build,
    "webhook": webhook.build,
}


def build(destination: str, kind: str, event: dict[str, Any], customer: dict[str, Any] | None,
          connection: dict[str, Any], delivery_id: str, now: datetime, *,
          trigger: str | None = None) -> Outgoing | Filtered:
    """The request for one delivery, or why nothing is sent. ``trigger`` is the delivery's ``"event"`` or
    ``"reversal"``: a webhook's ``tier.changed`` needs it to say which of the two moved the tier."""
    if destination == "s3_export":
        return Filtered("s3_export connections are written by the export job, not sent by HTTP")
    builder = BUILDERS.get(destination)
    if builder is None:
        raise ValueError(f"unknown destination {destination!r}")
    reason = filter_reason(connection, kind, event, customer)
    if reason is not None:
        return Filtered(reason)
    if destination == "webhook":
        return webhook.build(kind, event, customer, connection, delivery_id, now, trigger=trigger)
    return builder(kind, event, customer, connection, delivery_id, now)
