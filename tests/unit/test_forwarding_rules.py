"""Forwarding rules (product decisions, section 10; Behavior events, rules 7 to 9): which deliveries an event
or a reversal makes per destination, and every reason a delivery is filtered."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from linksvc.forwarding.destinations import build
from linksvc.forwarding.outgoing import Filtered, kinds_for
from linksvc.forwarding.rules import filter_reason

PURCHASE = {"id": "e-1", "type": "PURCHASE", "customer_id": "c-1", "body": {"type": "PURCHASE"}}
CUSTOM = {"id": "e-2", "type": "ADD_TO_CART", "customer_id": "c-1", "body": {"type": "ADD_TO_CART"}}
OTHER = {"id": "e-3", "type": "WISHLIST", "customer_id": "c-1", "body": {"type": "WISHLIST"}}


def connection(destination: str = "messaging", **changes: Any) -> dict[str, Any]:
    return {"id": "conn-1", "destination": destination, "enabled": True, "forward_events": True,
            "forward_purchases": True, "event_types": ["PURCHASE", "ADD_TO_CART"], "config": {}, **changes}


def customer(vendors: dict[str, bool] | None = None, **purposes: bool | None) -> dict[str, Any]:
    return {"id": "c-1", "consent": {"purposes": purposes, "vendors": vendors or {}}}


NOBODY_REFUSED = customer({"meta": True}, audience_marketing=True)

FILTER_CASES: list[tuple[str, dict[str, Any], str, dict[str, Any], dict[str, Any] | None, str | None]] = [
    ("sent", connection(), "event", PURCHASE, NOBODY_REFUSED, None),
    ("no customer: no consent to check", connection("meta"), "event", PURCHASE, None, None),
    ("consent never answered does not filter", connection("tiktok"), "event", PURCHASE, customer(), None),
    ("consent object missing", connection("meta"), "event", PURCHASE, {"id": "c-1"}, None),
    ("disabled", connection(enabled=False), "event", PURCHASE, NOBODY_REFUSED, "connection disabled"),
    ("disabled wins over the rest", connection("meta", enabled=False, forward_purchases=False), "reversal",
     PURCHASE, customer({"meta": False}), "connection disabled"),
    ("purchases off", connection(forward_purchases=False), "event", PURCHASE, None, "purchase forwarding is off"),
    ("purchases off, custom events still go", connection(forward_purchases=False), "event", CUSTOM, None, None),
    ("events off", connection(forward_events=False), "event", CUSTOM, None, "event forwarding is off"),
    ("events off, purchases still go", connection(forward_events=False), "event", PURCHASE, None, None),
    ("type not allowed", connection(), "event", OTHER, None, "event type WISHLIST is not allowed by the connection"),
    ("empty allow-list allows none", connection(event_types=[]), "event", PURCHASE, None,
     "event type PURCHASE is not allowed by the connection"),
    ("vendor refused", connection("messaging"), "event", PURCHASE, customer({"messaging": False}),
     "the customer refused messaging in consent"),
    ("another vendor refused", connection("messaging"), "event", PURCHASE, customer({"meta": False}), None),
    ("ads vendor refused", connection("google_ads"), "event", PURCHASE, customer({"google_ads": False}),
     "the customer refused google_ads in consent"),
    ("audience marketing refused: meta", connection("meta"), "event", PURCHASE, customer(audience_marketing=False),
     "the customer refused audience marketing"),
    ("audience marketing refused: tiktok", connection("tiktok"), "event", CUSTOM, customer(audience_marketing=False),
     "the customer refused audience marketing"),
    ("audience marketing refused: google_ads", connection("google_ads"), "event", PURCHASE,
     customer(audience_marketing=False), "the customer refused audience marketing"),
    ("audience marketing is not asked of ga4", connection("ga4"), "event", PURCHASE,
     customer(audience_marketing=False), None),
    ("audience marketing is not asked of webhooks", connection("webhook"), "event.accepted", PURCHASE,
     customer(audience_marketing=False), None),
    ("reversal to meta", connection("meta"), "reversal", PURCHASE, NOBODY_REFUSED,
     "reversals are not sent to meta (it would count another purchase)"),
    ("reversal to tiktok", connection("tiktok"), "reversal", PURCHASE, None,
     "reversals are not sent to tiktok (it would count another purchase)"),
    ("reversal to google_ads", connection("google_ads"), "reversal", PURCHASE, None,
     "reversals are not sent to google_ads"),
    ("reversal to ga4 is a refund", connection("ga4"), "reversal", PURCHASE, None, None),
    ("reversal to messaging", connection("messaging"), "reversal", PURCHASE, None, None),
    ("webhook reversal follows purchase forwarding", connection("webhook", forward_purchases=False),
     "purchase.reversed", PURCHASE, None, "purchase forwarding is off"),
    ("webhook reward kind follows its event's type", connection("webhook", event_types=["PURCHASE"]),
     "reward.issued", CUSTOM, None, "event type ADD_TO_CART is not allowed by the connection"),
    ("webhook tier kind follows consent", connection("webhook"), "tier.changed", PURCHASE,
     customer({"webhook": False}), "the customer refused webhook in consent"),
    ("webhook reward reversal sent", connection("webhook"), "reward.reversed", PURCHASE, NOBODY_REFUSED, None),
]


@pytest.mark.parametrize(("conn", "kind", "event", "who", "reason"), [c[1:] for c in FILTER_CASES],
                         ids=[c[0] for c in FILTER_CASES])
def test_filter_reason(conn: dict[str, Any], kind: str, event: dict[str, Any], who: dict[str, Any] | None,
                       reason: str | None) -> None:
    assert filter_reason(conn, kind, event, who) == reason


@pytest.mark.parametrize(("conn", "kind", "event", "who", "reason"),
                         [c[1:] for c in FILTER_CASES if c[5] is not None],
                         ids=[c[0] for c in FILTER_CASES if c[5] is not None])
def test_build_applies_the_rules_first(conn: dict[str, Any], kind: str, event: dict[str, Any],
                                       who: dict[str, Any] | None, reason: str) -> None:
    # The events here are too thin for any builder: only the rules can answer.
    now = datetime(2024, 1, 1, tzinfo=UTC)
    assert build(conn["destination"], kind, event, who, conn, "m", now) == Filtered(reason)


NOTHING: dict[str, Any] = {"issued": [], "spent": [{"line_id": "l"}], "expired": [], "tier": None}
ISSUED: dict[str, Any] = {**NOTHING, "issued": [{"line_id": "l", "amount": "5"}]}
TIER: dict[str, Any] = {**NOTHING, "tier": {"from": None, "to": "bronze"}}
BOTH: dict[str, Any] = {**ISSUED, "tier": {"from": "bronze", "to": "silver"}}
REV_NOTHING: dict[str, Any] = {"reason": "r", "reversed_at": "t", "taken_back": [], "shortfall": [],
                               "returned": [{"line_id": "x"}], "tier": None}

KIND_CASES = [
    ("webhook", "event", NOTHING, ["event.accepted"]),
    ("webhook", "event", ISSUED, ["event.accepted", "reward.issued"]),
    ("webhook", "event", TIER, ["event.accepted", "tier.changed"]),
    ("webhook", "event", BOTH, ["event.accepted", "reward.issued", "tier.changed"]),
    ("webhook", "reversal", REV_NOTHING, ["purchase.reversed"]),
    ("webhook", "reversal", {**REV_NOTHING, "taken_back": [{"amount": "1"}]}, ["purchase.reversed", "reward.reversed"]),
    ("webhook", "reversal", {**REV_NOTHING, "shortfall": [{"amount": "1"}]}, ["purchase.reversed", "reward.reversed"]),
    ("webhook", "reversal", {**REV_NOTHING, "tier": {"from": "silver", "to": "bronze"}},
     ["purchase.reversed", "tier.changed"]),
    ("messaging", "event", BOTH, ["event"]),
    ("messaging", "reversal", REV_NOTHING, ["reversal"]),
    ("meta", "event", NOTHING, ["event"]),
    ("meta", "reversal", REV_NOTHING, ["reversal"]),
    ("tiktok", "event", NOTHING, ["event"]),
    ("ga4", "reversal", REV_NOTHING, ["reversal"]),
    ("google_ads", "event", ISSUED, ["event"]),
    ("s3_export", "event", BOTH, []),
    ("s3_export", "reversal", REV_NOTHING, []),
]


@pytest.mark.parametrize(("destination", "trigger", "effects", "kinds"), KIND_CASES)
def test_kinds_for(destination: str, trigger: str, effects: dict[str, Any], kinds: list[str]) -> None:
    assert kinds_for(destination, trigger, effects) == kinds


def test_unknown_trigger_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown trigger"):
        kinds_for("webhook", "refund", NOTHING)
