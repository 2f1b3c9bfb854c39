"""The one entry point from a delivery to its HTTP request: the connection's rules first, then the
destination's pure builder (product decisions, section 10).

Each builder takes ``(kind, event, customer, connection, delivery_id, now)`` and returns an
:class:`~linksvc.forwarding.outgoing.Outgoing` request or a :class:`~linksvc.forwarding.outgoing.Filtered`
reason. ``s3_export`` has no builder: the export job writes its files, nothing is sent by HTTP.

A destination module may also define ``judge(status, body, sent) -> Verdict`` (what the vendor's answer
means: :mod:`linksvc.forwarding.verdicts`; the status alone decides otherwise) and ``build_test(connection,
now) -> Outgoing | Filtered`` (one synthetic event sent the vendor's own way of testing, for the admin API's
connection test).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from linksvc.forwarding import ga4, google_ads, messaging, meta, tiktok, webhook
from linksvc.forwarding.outgoing import Filtered, Outgoing
from linksvc.forwarding.rules import filter_reason
from linksvc.forwarding.verdicts import Verdict, by_status

Builder = Callable[[str, dict[str, Any], dict[str, Any] | None, dict[str, Any], str, datetime], Outgoing | Filtered]

MODULES = {"messaging": messaging, "meta": meta, "tiktok": tiktok, "ga4": ga4, "google_ads": google_ads,
           "webhook": webhook}
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


def judge(destination: str, status: int, body: bytes, sent: Outgoing) -> Verdict:
    """What the destination's answer means (its own judge, else the status alone)."""
    module = MODULES.get(destination)
    vendor_judge = getattr(module, "judge", None)
    if vendor_judge is None:
        return by_status(status)
    verdict: Verdict = vendor_judge(status, body, sent)
    return verdict


def build_test(destination: str, connection: dict[str, Any], now: datetime) -> Outgoing | Filtered:
    """The vendor's own test of a connection: one synthetic event sent so that it is checked, not counted."""
    module = MODULES.get(destination)
    builder = getattr(module, "build_test", None)
    if builder is None:
        return Filtered(f"{destination} connections have no test mode")
    request: Outgoing | Filtered = builder(connection, now)
    return request
