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
from dataclasses import dataclass, field
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


class _Deferred:
    """A value of a campaign or tier that failed to read (a missing operator, an amount that is no number): raised
    where the rule would have read it, so that a campaign skipped before that point is skipped as it was."""

    __slots__ = ("error", "event_type")

    def __init__(self, error: Exception, event_type: Any = None) -> None:
        self.error = error
        self.event_type = event_type  # of a campaign that failed to read: it fails the events of its type


def _decimal(value: Any) -> Decimal | _Deferred:
    try:
        return Decimal(str(value))
    except Exception as error:  # noqa: BLE001 - raised again where it is read
        return _Deferred(error)


def _read(value: Any) -> Any:
    if isinstance(value, _Deferred):
        raise value.error
    return value


_FACT = {"Order Value": "order_value", "Total Order Value": "total_order_value",
         "Purchase Count": "purchase_count", "Points Balance": "points_balance"}
# A condition read once: (compare, the Facts attribute, the value), or what reading it raised.
_Condition = tuple[Any, Any, Any]


def _condition(condition: Mapping[str, Any]) -> _Condition:
    try:
        compare = COMPARE[condition["operator"]]
        attribute = _FACT[condition["type"]]
    except Exception as error:  # noqa: BLE001 - raised again where it is evaluated
        return (_Deferred(error), None, None)
    return (compare, attribute, _decimal(condition["value"]) if "value" in condition else _Deferred(KeyError("value")))


def _groups(groups: Sequence[Sequence[Mapping[str, Any]]]) -> tuple[tuple[_Condition, ...], ...]:
    return tuple(tuple(_condition(c) for c in group) for group in groups)


def _holds(groups: tuple[tuple[_Condition, ...], ...], facts: Facts, empty: bool) -> bool:
    """:func:`groups_hold` of conditions read once."""
    if not groups:
        return empty
    for group in groups:
        for compare, attribute, value in group:
            if isinstance(compare, _Deferred):
                raise compare.error
            fact = getattr(facts, attribute)
            if attribute == "purchase_count":
                fact = Decimal(fact)
            if not compare(fact, _read(value)):
                break
        else:
            return True
    return False


@dataclass(frozen=True)
class _Campaign:
    """A BEHAVIOR campaign with a reward, read once for a batch of events: dates parsed, lists made sets,
    numbers made decimals."""

    id: str
    event_type: Any
    reward_id: Any
    brand_id: str | None
    starts_at: datetime | None
    ends_at: datetime | None
    paused: bool
    finished_at: datetime | None
    tier_ids: frozenset[Any] | None
    stores: frozenset[str] | None
    channels: frozenset[str] | None
    products: frozenset[str] | None
    conditions: tuple[tuple[_Condition, ...], ...]
    amount: Decimal | _Deferred
    per_currency_unit: Decimal | _Deferred
    expires_in_days: Any


@dataclass(frozen=True)
class Campaigns:
    """Campaigns as :func:`earnings` reads them, read once (:func:`campaigns_of`) for every event of a batch.
    Campaigns that can never issue (another type, no reward) are left out."""

    rules: tuple[_Campaign | _Deferred, ...]
    by_type: dict[Any, tuple[_Campaign | _Deferred, ...]] = field(default_factory=dict)  # in order, per event type

    def of_type(self, event_type: str) -> tuple[_Campaign | _Deferred, ...]:
        """The campaigns an event of this type can earn from (and those that failed to read for it), in order."""
        found = self.by_type.get(event_type)
        if found is None:
            found = self.by_type[event_type] = tuple(
                c for c in self.rules if c.event_type == event_type)
        return found


def _allowed(values: Any) -> frozenset[str] | None:
    return None if values is None else frozenset(values)


def _campaign(campaign: Mapping[str, Any]) -> _Campaign | _Deferred:
    attributes = campaign.get("attributes") or {}
    try:
        return _Campaign(
            campaign["id"], attributes.get("event_type"), attributes["reward_id"], campaign.get("brand_id"),
            _when(campaign.get("starts_at")), _when(campaign.get("ends_at")), bool(campaign.get("paused")),
            _when(campaign.get("finished_at")),
            None if campaign.get("tier_ids") is None else frozenset(campaign["tier_ids"]),
            _allowed(campaign.get("stores")), _allowed(campaign.get("channels")), _allowed(campaign.get("products")),
            _groups(attributes.get("conditions") or []), _decimal(attributes.get("amount", 0)),
            _decimal(attributes.get("per_currency_unit", 0)), attributes.get("expires_in_days"))
    except Exception as error:  # noqa: BLE001 - raised for the events of its type, as before
        return _Deferred(error, attributes.get("event_type"))


def campaigns_of(campaigns: Iterable[Mapping[str, Any]]) -> Campaigns:
    made: list[_Campaign | _Deferred] = []
    for campaign in campaigns:
        attributes = campaign.get("attributes") or {}
        if campaign.get("type") != "BEHAVIOR" or not attributes.get("reward_id"):
            continue
        made.append(_campaign(campaign))
    return Campaigns(tuple(made))


def _passes(allowed: frozenset[str] | None, given: Iterable[str | None]) -> bool:
    if allowed is None:
        return True
    return any(value is not None and value in allowed for value in given)


def earnings(campaigns: Iterable[Mapping[str, Any]] | Campaigns, event: EventFacts, customer: Mapping[str, Any],
             facts: Facts, now: datetime) -> list[Issue]:
    """The rewards an event issues: one per BEHAVIOR campaign for the event's type that is RUNNING, whose
    restrictions pass, in which the customer can take part (tier, consent) and whose conditions hold.
    Amount = ``amount`` + ``per_currency_unit`` × the order value; nothing is issued for a zero amount.
    ``campaigns``: the campaigns' documents, or :func:`campaigns_of` them (the same answer)."""
    issues: list[Issue] = []
    tier = customer.get("tier_id")
    refused = customer.get("consent", {}).get("purposes", {}).get("behavioral_campaigns") is False
    if refused:
        return issues
    read = campaigns if isinstance(campaigns, Campaigns) else campaigns_of(campaigns)
    for campaign in read.of_type(event.type):
        if isinstance(campaign, _Deferred):
            raise campaign.error
        status = campaign_status(now, campaign.starts_at, campaign.ends_at, campaign.paused, campaign.finished_at)
        if status != "RUNNING":
            continue
        if campaign.tier_ids is not None and tier not in campaign.tier_ids:
            continue
        if not (_passes(campaign.stores, [event.store_id]) and _passes(campaign.channels, [event.channel_id])
                and _passes(campaign.products, event.product_ids)):
            continue
        if not _holds(campaign.conditions, facts, empty=True):
            continue
        amount = _read(campaign.amount) + _read(campaign.per_currency_unit) * event.value
        if amount <= 0:
            continue
        days = campaign.expires_in_days
        issues.append(Issue(campaign.id, campaign.reward_id, campaign.brand_id, amount,
                            now + timedelta(days=days) if days else None))
    return issues


@dataclass(frozen=True)
class _Tier:
    id: Any
    level: Decimal | _Deferred
    entry: tuple[tuple[_Condition, ...], ...]
    exit: tuple[tuple[_Condition, ...], ...]


@dataclass(frozen=True)
class Tiers:
    """The ACTIVE tiers as :func:`next_tier` reads them, read once (:func:`tiers_of`) for a batch.
    ``by_level``: the same tiers, highest level first (in their order among equal levels), when every level and
    condition value read as a finite number (else None): nothing that reading them could raise is then left
    for the evaluation, which may stop at the first tier that qualifies."""

    active: tuple[_Tier, ...]
    by_level: tuple[_Tier, ...] | None = None


def _finite(value: Any) -> bool:
    return isinstance(value, Decimal) and value.is_finite()


def _clean(groups: tuple[tuple[_Condition, ...], ...]) -> bool:
    """Whether evaluating ``groups`` cannot raise: every operator and fact known, every value a finite number."""
    return all(not isinstance(compare, _Deferred) and _finite(value) for group in groups
               for compare, _, value in group)


def tiers_of(tiers: Sequence[Mapping[str, Any]]) -> Tiers:
    active = tuple(_Tier(t["id"], _decimal(t.get("level", 0)), _groups(t.get("entry_conditions") or []),
                         _groups(t.get("exit_conditions") or []))
                   for t in tiers if t.get("status", "ACTIVE") == "ACTIVE")
    clean = all(_finite(t.level) and _clean(t.entry) and _clean(t.exit) for t in active)
    return Tiers(active, tuple(sorted(active, key=lambda t: -t.level)) if clean else None)  # type: ignore[operator]


def next_tier(current_id: str | None, tiers: Sequence[Mapping[str, Any]] | Tiers, facts: Facts) -> str | None:
    """The tier a customer holds after an event: the highest-level ACTIVE tier whose entry conditions hold;
    the current tier is kept over a lower one until its exit conditions hold."""
    read = tiers if isinstance(tiers, Tiers) else tiers_of(tiers)
    active = read.active
    current = next((t for t in active if t.id == current_id), None)
    stays = current is not None and not _holds(current.exit, facts, empty=False)
    if read.by_level is not None:  # the same answer, from the highest tier down: the first that qualifies is best
        best = next((t for t in read.by_level if (stays or t is not current) and _holds(t.entry, facts, empty=True)),
                    None)
    else:
        qualifying = [t for t in active if _holds(t.entry, facts, empty=True) and (stays or t is not current)]
        best = max(qualifying, key=_level, default=None)
    if stays and current is not None and (best is None or _level(best) <= _level(current)):
        return str(current.id)
    return str(best.id) if best is not None else None


def _level(tier: _Tier) -> Decimal:
    return _read(tier.level)  # type: ignore[no-any-return]


def retier(customer: dict[str, Any], tiers: Sequence[dict[str, Any]] | Tiers, facts: Facts) -> dict[str, Any] | None:
    """Moves ``customer`` (its document) to the tier :func:`next_tier` gives; the change as effects record it
    (``{"from", "to"}``), or None when the tier stays."""
    before = customer.get("tier_id")
    after = next_tier(before, tiers, facts)
    if after == before:
        return None
    customer["tier_id"] = after
    return {"from": before, "to": after}
