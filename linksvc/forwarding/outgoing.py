"""What a destination builder returns, which deliveries an event makes, and the small helpers every builder
shares (product decisions, section 10).

A builder maps one stored event to one :class:`Outgoing` HTTP request, or to :class:`Filtered` with the
reason nothing is sent. :func:`kinds_for` says which deliveries a trigger makes for a destination: an
accepted event (``"event"``) or a reversed purchase (``"reversal"``); webhooks have their own kinds, and
those about rewards and tiers exist only when the event or reversal really issued, took back or moved
something (the specification's Behavior events, rule 9). Everything here is pure: no I/O, no clock.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from linksvc.clock import parse_iso
from linksvc.jsoncodec import dumpb
from linksvc.loyalty.models import PURCHASE
from linksvc.resources.types import phone_digits

EVENT = "event"
REVERSAL = "reversal"
EVENT_ACCEPTED = "event.accepted"
PURCHASE_REVERSED = "purchase.reversed"
REWARD_ISSUED = "reward.issued"
REWARD_REVERSED = "reward.reversed"
TIER_CHANGED = "tier.changed"
WEBHOOK_KINDS = (EVENT_ACCEPTED, PURCHASE_REVERSED, REWARD_ISSUED, REWARD_REVERSED, TIER_CHANGED)
ADS_DESTINATIONS = frozenset({"meta", "tiktok", "google_ads"})
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Outgoing:
    method: str
    url: str
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True)
class Filtered:
    reason: str


@dataclass(frozen=True)
class Skipped(Filtered):
    """Not sent because the vendor would drop it without a word (too old, a name it refuses): the delivery
    is ``skipped`` with the reason, apart from what the connection's rules filter."""


def kinds_for(destination: str, trigger: str, effects: dict[str, Any]) -> list[str]:
    """The deliveries one trigger (``"event"`` or ``"reversal"``) makes for a destination. ``effects`` is
    the event's ``effects`` for an event and its ``reversal`` for a reversal."""
    if trigger not in (EVENT, REVERSAL):
        raise ValueError(f"unknown trigger {trigger!r}")
    if destination == "s3_export":  # written by the export job, not sent by HTTP
        return []
    if destination != "webhook":
        return [trigger]
    if trigger == EVENT:
        kinds = [EVENT_ACCEPTED]
        if effects.get("issued"):
            kinds.append(REWARD_ISSUED)
    else:
        kinds = [PURCHASE_REVERSED]
        if effects.get("taken_back") or effects.get("shortfall"):
            kinds.append(REWARD_REVERSED)
    if effects.get("tier") is not None:
        kinds.append(TIER_CHANGED)
    return kinds


# -- helpers the builders share ---------------------------------------------------------------------------


def post_json(url: str, payload: Any, headers: dict[str, str] | None = None) -> Outgoing:
    """A POST of ``payload`` as deterministic JSON (Decimals become JSON numbers)."""
    return Outgoing("POST", url, {"Content-Type": "application/json", **(headers or {})}, dumpb(payload))


def setting(connection: dict[str, Any], name: str) -> str | None:
    """A member of the connection's ``config`` as text; missing, null and blank are None."""
    value = (connection.get("config") or {}).get(name)
    if value is None or isinstance(value, (dict, list)):
        return None
    text = str(value).strip()
    return text or None


def required(connection: dict[str, Any], *names: str) -> list[str] | Filtered:
    """The named config members, or Filtered naming the first one missing: a request without its
    credentials or ids could only be refused, and the reason tells the admin what to fix."""
    values = []
    for name in names:
        value = setting(connection, name)
        if value is None:
            return Filtered(f"the connection's config has no {name}")
        values.append(value)
    return values


def base_url(connection: dict[str, Any], default: str) -> str:
    """``config.endpoint_url`` (tests point it at a local server), else the public API's own base."""
    return (setting(connection, "endpoint_url") or default).rstrip("/")


def unix_seconds(moment: str | datetime) -> int:
    return unix_micros(moment) // 1_000_000


def unix_micros(moment: str | datetime) -> int:
    """Exact integer microseconds since the epoch (no float rounding)."""
    when = parse_iso(moment) if isinstance(moment, str) else moment
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    delta = when - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def hashed_email(email: Any) -> str | None:
    """sha256 of the trimmed, lower-cased address, as the ads platforms match it."""
    if not isinstance(email, str) or not email.strip():
        return None
    return sha256_hex(email.strip().lower())


def hashed_phone(phone: Any) -> str | None:
    """sha256 of the phone's digits only."""
    digits = phone_digits(phone) if isinstance(phone, str) else None
    return sha256_hex(digits) if digits else None


def contact(event: dict[str, Any], customer: dict[str, Any] | None) -> tuple[Any, Any]:
    """(email, phone): the customer's stored ones, else those the event itself carried."""
    body = event.get("body") or {}
    stored = customer or {}
    return stored.get("email") or body.get("email"), stored.get("phone") or body.get("phone")


def ads_event_id(event: dict[str, Any]) -> str:
    """A purchase's id comes from its order id, so that a browser pixel sending the same id is deduplicated
    against it; any other event keeps the service's event id."""
    order_id = event.get("order_id") or (event.get("body") or {}).get("order_id")
    if event.get("type") == PURCHASE and order_id:
        return f"order-{order_id}"
    return str(event["id"])


def click_id(event: dict[str, Any], name: str) -> str | None:
    """A click identifier exactly as the client sent it; never built from anything else."""
    value = ((event.get("body") or {}).get("click_ids") or {}).get(name)
    return value if isinstance(value, str) and value.strip() else None


def compact(mapping: dict[str, Any]) -> dict[str, Any]:
    """The members that say something: None, empty text, empty lists and objects are left out."""
    return {key: value for key, value in mapping.items() if value is not None and value != "" and value != []
            and value != {}}
