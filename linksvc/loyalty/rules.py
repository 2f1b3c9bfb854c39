"""The loyalty rules as pure functions (product decisions, section 9): conditions, which BEHAVIOR campaigns
an event earns from and how much, and which tier a customer holds. Nothing here reads the store or the
clock; :mod:`linksvc.events` gathers the facts and writes the outcome.

Conditions are an OR of ANDs (``[[a, b], [c]]`` = (a and b) or c) over these facts of the customer:

- ``Order Value``: the value of the order being processed (0 for other events and for a reversal);
- ``Total Order Value``: the value of every purchase of the customer, reversed ones deducted, this one included;
- ``Purchase Count``: the customer's purchases that are not reversed, this one included;
- ``Points Balance``: the customer's unexpired wallet amounts, all rewards, before this event's own issues.

Empty entry conditions (or campaign conditions) always hold; empty exit conditions never do, so a tier
without exit conditions is kept until a higher one is reached.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from linksvc.campaigns.status import campaign_status

COMPARE = {
    "greater than": lambda a, b: a > b,
    "grater than": lambda a, b: a > b,  # the specification's spelling
    "greater than or equal": lambda a, b: a >= b,
    "less than": lambda a, b: a < b,
    "less than or equal": lambda a, b: a <= b,
    "equal": lambda a, b: a == b,
}


@dataclass(frozen=True)
class Facts:
    order_value: Decimal = Decimal(0)
    total_order_value: Decimal = Decimal(0)
    purchase_count: int = 0
    points_balance: Decimal = Decimal(0)

    def value_of(self, condition_type: str) -> Decimal:
        return {
            "Order Value": self.order_value,
            "Total Order Value": self.total_order_value,
            "Purchase Count": Decimal(self.purchase_count),
            "Points Balance": self.points_balance,
        }[condition_type]


def condition_holds(condition: Mapping[str, Any], facts: Facts) -> bool:
    return bool(COMPARE[condition["operator"]](facts.value_of(condition["type"]), Decimal(str(condition["value"]))))


def groups_hold(groups: Sequence[Sequence[Mapping[str, Any]]], facts: Facts, empty: bool) -> bool:
    """OR of ANDs; ``empty`` is the answer when there are no groups at all."""
    if not groups:
        return empty
    return any(all(condition_holds(c, facts) for c in group) for group in groups)


@dataclass(frozen=True)
class EventFacts:
    """What the restrictions of a campaign are checked against."""

    type: str
    store_id: str | None
    channel_id: str | None
    product_ids: frozenset[str]  # each product's id and sku
    value: Decimal


@dataclass(frozen=True)
class Issue:
    campaign_id: str
    reward_id: str
    brand_id: str | None
    amount: Decimal
    expiration_date: datetime | None


def restriction_passes(allowed: Sequence[str] | None, given: Iterable[str | None]) -> bool:
    """The specification's rule: null lets everything in; a list only what it holds; ``[]`` nothing."""
    if allowed is None:
        return True
    wanted = set(allowed)
    return any(value is not None and value in wanted for value in given)


def _when(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None


def earnings(campaigns: Iterable[Mapping[str, Any]], event: EventFacts, customer: Mapping[str, Any], facts: Facts,
             now: datetime) -> list[Issue]:
    """The rewards an event issues: one per BEHAVIOR campaign for the event's type that is RUNNING, whose
    restrictions pass, in which the customer can take part (tier, consent) and whose conditions hold.
    Amount = ``amount`` + ``per_currency_unit`` × the order value; nothing is issued for a zero amount."""
    issues: list[Issue] = []
    tier = customer.get("tier_id")
    refused = customer.get("consent", {}).get("purposes", {}).get("behavioral_campaigns") is False
    if refused:
        return issues
    for campaign in campaigns:
        attributes = campaign.get("attributes") or {}
        if campaign.get("type") != "BEHAVIOR" or attributes.get("event_type") != event.type:
            continue
        if not attributes.get("reward_id"):
            continue
        status = campaign_status(now, _when(campaign.get("starts_at")), _when(campaign.get("ends_at")),
                                 bool(campaign.get("paused")), _when(campaign.get("finished_at")))
        if status != "RUNNING":
            continue
        tier_ids = campaign.get("tier_ids")
        if tier_ids is not None and tier not in tier_ids:
            continue
        if not (restriction_passes(campaign.get("stores"), [event.store_id])
                and restriction_passes(campaign.get("channels"), [event.channel_id])
                and restriction_passes(campaign.get("products"), event.product_ids)):
            continue
        if not groups_hold(attributes.get("conditions") or [], facts, empty=True):
            continue
        amount = (Decimal(str(attributes.get("amount", 0)))
                  + Decimal(str(attributes.get("per_currency_unit", 0))) * event.value)
        if amount <= 0:
            continue
        days = attributes.get("expires_in_days")
        issues.append(Issue(campaign["id"], attributes["reward_id"], campaign.get("brand_id"), amount,
                            now + timedelta(days=days) if days else None))
    return issues


def next_tier(current_id: str | None, tiers: Sequence[Mapping[str, Any]], facts: Facts) -> str | None:
    """The tier a customer holds after an event: the highest-level ACTIVE tier whose entry conditions hold;
    the current tier is kept over a lower one until its exit conditions hold."""
    active = [t for t in tiers if t.get("status", "ACTIVE") == "ACTIVE"]
    current = next((t for t in active if t["id"] == current_id), None)
    stays = current is not None and not groups_hold(current.get("exit_conditions") or [], facts, empty=False)
    qualifying = [t for t in active if groups_hold(t.get("entry_conditions") or [], facts, empty=True)
                  and (stays or t is not current)]
    best = max(qualifying, key=_level, default=None)
    if stays and current is not None and (best is None or _level(best) <= _level(current)):
        return str(current["id"])
    return str(best["id"]) if best is not None else None


def _level(tier: Mapping[str, Any]) -> Decimal:
    return Decimal(str(tier.get("level", 0)))


def retier(customer: dict[str, Any], tiers: Sequence[dict[str, Any]], facts: Facts) -> dict[str, Any] | None:
    """Moves ``customer`` (its document) to the tier :func:`next_tier` gives; the change as effects record it
    (``{"from", "to"}``), or None when the tier stays."""
    before = customer.get("tier_id")
    after = next_tier(before, tiers, facts)
    if after == before:
        return None
    customer["tier_id"] = after
    return {"from": before, "to": after}
