"""Webhooks: the payload of each kind and its Standard Webhooks signature (product decisions, section 10;
the specification's Behavior events, rules 8 and 9; https://www.standardwebhooks.com).

The body is ``{"type", "timestamp", "data"}``. ``webhook-id`` is the delivery's message id (derived from the
connection, event, trigger and kind: the same across retries and replays, so a receiver drops duplicates;
:func:`linksvc.forwarding.outbox.message_id`), ``webhook-timestamp`` the sending time in Unix seconds, and
``webhook-signature`` ``v1,`` + base64 of HMAC-SHA256 over ``{id}.{timestamp}.{body}``, keyed by the
base64 part of the connection's ``whsec_`` secret. For 24 hours after a rotation the header holds two such
signatures, space-separated, the new secret's first (:mod:`linksvc.forwarding.webhook_secrets`); a delivery
is signed when it is sent, so a retry follows the secrets of its own moment. A purchase reversal carries the
purchase's original resolved attribution (UTM kept); reward and tier kinds go out only when the event or
reversal really did it. The connection's test sends a ``connection.test`` message (no event), signed the same
way, so that a receiver's signature check is tested too.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import uuid
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from linksvc.clock import iso
from linksvc.forwarding.outgoing import (
    EVENT_ACCEPTED,
    PURCHASE_REVERSED,
    REWARD_ISSUED,
    REWARD_REVERSED,
    TIER_CHANGED,
    Filtered,
    Outgoing,
    required,
    unix_seconds,
)
from linksvc.forwarding.webhook_secrets import secret_key, signing_secrets
from linksvc.jsoncodec import dumpb

TEST_KIND = "connection.test"
LINK_CLICKED = "link.clicked"
ACCEPTED_FIELDS = ("id", "type", "customer_id", "issued_at", "order_id", "value", "currency", "products",
                   "properties", "attribution", "attribution_original", "analytics", "click_ids")


def signature(key: bytes, msg_id: str, timestamp: int, body: bytes) -> str:
    signed = msg_id.encode() + b"." + str(timestamp).encode() + b"." + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def _amounts(lines: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Amounts are stored as decimal text; on the wire they are JSON numbers."""
    out = []
    for line in lines or []:
        try:
            out.append({**line, "amount": Decimal(line["amount"])} if isinstance(line.get("amount"), str) else line)
        except InvalidOperation:
            out.append(line)
    return out


def tier_cause(event: dict[str, Any], trigger: str | None) -> str:
    """Which change a ``tier.changed`` delivery is about: the dispatcher knows its trigger; without it, the
    one of the purchase and its reversal that changed the tier (both did: ambiguous, an error)."""
    if trigger is not None:
        return "reversal" if trigger == "reversal" else "purchase"
    by_purchase = (event.get("effects") or {}).get("tier") is not None
    by_reversal = (event.get("reversal") or {}).get("tier") is not None
    if by_purchase and by_reversal:
        raise ValueError("both the purchase and its reversal changed the tier: pass the delivery's trigger")
    return "reversal" if by_reversal else "purchase"


def data_of(kind: str, event: dict[str, Any], trigger: str | None = None) -> dict[str, Any] | Filtered:
    body = event.get("body") or {}
    effects = event.get("effects") or {}
    reversal = event.get("reversal")
    subject = {"event_id": event["id"], "customer_id": event.get("customer_id")}
    if kind == EVENT_ACCEPTED:
        return {name: body.get(name) for name in ACCEPTED_FIELDS} | {"id": event["id"], "type": event["type"]}
    if kind == REWARD_ISSUED:
        if not effects.get("issued"):
            return Filtered("the event issued no reward")
        return subject | {"rewards": _amounts(effects["issued"])}
    if kind == TIER_CHANGED:
        cause = tier_cause(event, trigger)
        change = (reversal or {}).get("tier") if cause == "reversal" else effects.get("tier")
        if change is None:
            return Filtered(f"the {cause} did not change the customer's tier")
        return subject | {"from": change.get("from"), "to": change.get("to"), "cause": cause}
    if kind not in (PURCHASE_REVERSED, REWARD_REVERSED):
        raise ValueError(f"webhook has no delivery kind {kind!r}")
    if not reversal:
        return Filtered("the event has not been reversed")
    if kind == PURCHASE_REVERSED:
        return subject | {
            "order_id": body.get("order_id"), "reason": reversal.get("reason"),
            "reversed_at": reversal.get("reversed_at"), "value": body.get("value"), "currency": body.get("currency"),
            "attribution": body.get("attribution") or {}, "attribution_original": body.get("attribution_original"),
        }
    if not reversal.get("taken_back") and not reversal.get("shortfall"):
        return Filtered("the reversal took back no reward")
    return subject | {"taken_back": _amounts(reversal.get("taken_back")),
                      "shortfall": _amounts(reversal.get("shortfall"))}


def build(kind: str, event: dict[str, Any], customer: dict[str, Any] | None, connection: dict[str, Any],
          delivery_id: str, now: datetime, *, trigger: str | None = None) -> Outgoing | Filtered:
    """``trigger`` (the delivery's ``"event"`` or ``"reversal"``) tells a ``tier.changed`` of the purchase
    from one of its reversal; the other kinds do not need it."""
    signing = _signing(connection, now)
    if isinstance(signing, Filtered):
        return signing
    data = data_of(kind, event, trigger)
    if isinstance(data, Filtered):
        return data
    return _signed(*signing, kind, data, delivery_id, now)


def _signing(connection: dict[str, Any], now: datetime) -> tuple[str, list[bytes]] | Filtered:
    """The connection's endpoint and signing keys: the current secret's first, the one it replaced beside it
    while the rotation's overlap lasts."""
    found = required(connection, "endpoint_url", "secret")
    if isinstance(found, Filtered):
        return found
    url, secret = found
    try:
        key = secret_key(secret)
    except ValueError as exc:
        return Filtered(f"the connection's config secret is unusable: {exc}")
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    return url, [key, *(secret_key(previous) for previous in signing_secrets(connection.get("config") or {}, now)[1:])]


def _signed(url: str, keys: list[bytes], kind: str, data: dict[str, Any], msg_id: str, now: datetime) -> Outgoing:
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    body = dumpb({"type": kind, "timestamp": iso(now), "data": data})
    timestamp = unix_seconds(now)
    return Outgoing("POST", url, {
        "content-type": "application/json",
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(signature(k, msg_id, timestamp, body) for k in keys),
    }, body)


def build_clicks(connection: dict[str, Any], clicks: list[dict[str, Any]], msg_id: str,
                 now: datetime) -> Outgoing | Filtered:
    """A ``link.clicked`` delivery: ``{"type": "link.clicked", "timestamp", "data": {"clicks": [...]}}`` (one click,
    or a batch), signed as every webhook is (:mod:`linksvc.forwarding.click_hooks`)."""
    signing = _signing(connection, now)
    if isinstance(signing, Filtered):
        return signing
    return _signed(*signing, LINK_CLICKED, {"clicks": clicks}, msg_id, now)


def build_test(connection: dict[str, Any], now: datetime) -> Outgoing | Filtered:
    """The connection's test: one ``connection.test`` message, signed as every delivery is, which a receiver
    answers with a 2xx when it accepts the signature (it carries no event: nothing is to be counted)."""
    signing = _signing(connection, now)
    if isinstance(signing, Filtered):
        return signing
    return _signed(*signing, TEST_KIND, {"connection_id": connection.get("id")}, f"test_{uuid.uuid4().hex}", now)
