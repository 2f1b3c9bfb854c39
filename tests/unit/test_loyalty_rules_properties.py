"""Properties of the loyalty rules (product decisions, section 9): conditions and their OR of ANDs, what an
event earns, and which tier a customer holds."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linksvc.loyalty.rules import EventFacts, Facts, condition_holds, earnings, groups_hold, next_tier, tiers_of

FAST = settings(max_examples=80, deadline=None)
NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
TYPES = ("Order Value", "Total Order Value", "Purchase Count", "Points Balance")
OPERATORS = ("greater than", "grater than", "greater than or equal", "less than", "less than or equal", "equal")
# Whether each operator holds when the fact is below, equal to, above the condition's value.
TRUTH = {
    "greater than": (False, False, True), "grater than": (False, False, True),
    "greater than or equal": (False, True, True), "less than": (True, False, False),
    "less than or equal": (True, True, False), "equal": (False, True, False),
}

AMOUNTS = st.decimals(min_value=-1000, max_value=10_000, places=2)
FACTS = st.builds(Facts, AMOUNTS, AMOUNTS, st.integers(0, 50), AMOUNTS)
SMALL = st.integers(-3, 3).map(Decimal)  # few distinct values, so equalities happen
CONDITIONS = st.builds(lambda kind, op, value: {"type": kind, "operator": op, "primitive": "number", "value": value},
                       st.sampled_from(TYPES), st.sampled_from(OPERATORS), st.integers(-3, 3))
SMALL_FACTS = st.builds(Facts, SMALL, SMALL, st.integers(0, 3), SMALL)
GROUPS = st.lists(st.lists(CONDITIONS, max_size=3), max_size=3)


def with_fact(facts: Facts, kind: str, value: Decimal) -> Facts:
    field = {"Order Value": "order_value", "Total Order Value": "total_order_value",
             "Purchase Count": "purchase_count", "Points Balance": "points_balance"}[kind]
    return Facts(**{**facts.__dict__, field: int(value) if kind == "Purchase Count" else value})


@FAST
@given(st.sampled_from(TYPES), st.sampled_from(OPERATORS), st.decimals(0, 500, places=2), st.integers(1, 100),
       FACTS, st.sampled_from([str, lambda v: format(v, ".4f"), float]))
def test_each_operator_compares_the_named_fact_with_the_value(kind: str, operator: str, value: Decimal, step: int,
                                                              others: Facts, spelled: Any) -> None:
    if kind == "Purchase Count":
        value = value.to_integral_value()  # a count is whole
    # The value may arrive as a decimal text or a JSON float: the same number either way.
    condition = {"type": kind, "operator": operator, "primitive": "number", "value": spelled(value)}
    below, equal, above = (condition_holds(condition, with_fact(others, kind, value + delta))
                           for delta in (-step, 0, step))
    assert (below, equal, above) == TRUTH[operator]


@FAST
@given(GROUPS, GROUPS, SMALL_FACTS)
def test_groups_are_an_or_of_ands(one: list[list[dict[str, Any]]], other: list[list[dict[str, Any]]],
                                  facts: Facts) -> None:
    holds = {True: groups_hold(one, facts, empty=True), False: groups_hold(one, facts, empty=False)}
    if one:
        assert holds[True] == holds[False]  # "empty" only answers for no groups at all
        assert holds[True] == any(groups_hold([group], facts, empty=False) for group in one)
    else:
        assert holds == {True: True, False: False}
    # OR across groups: joining two lists of groups holds when either does.
    if one and other:
        assert groups_hold(one + other, facts, empty=False) == (holds[True] or groups_hold(other, facts, empty=False))
    # AND within a group: a group holds when each of its conditions holds alone.
    for group in one:
        assert groups_hold([group], facts, empty=False) == all(groups_hold([[c]], facts, False) for c in group)
    # Order never matters.
    shuffled = [list(reversed(group)) for group in reversed(one)]
    assert groups_hold(shuffled, facts, empty=True) == holds[True]


# -- earnings ------------------------------------------------------------------------------------------------

def iso(moment: datetime | None) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment else None


def mostly(usual: Any, *others: Any) -> st.SearchStrategy[Any]:
    """``usual`` nine times in ten: each rule of a campaign passes often enough that many campaigns earn."""
    return st.sampled_from([usual] * 9 + list(others))


DAY = timedelta(days=1)
HOLDS = {"type": "Purchase Count", "operator": "greater than or equal", "primitive": "number", "value": 1}
FAILS = {"type": "Purchase Count", "operator": "greater than", "primitive": "number", "value": 1}
FACTS_OF_EVENT = Facts(purchase_count=1)
CUSTOMER: dict[str, Any] = {"tier_id": "gold", "consent": {"purposes": {"behavioral_campaigns": True}}}


def event_of(value: Decimal, **changes: Any) -> EventFacts:
    return EventFacts(**{"type": "PURCHASE", "store_id": "S1", "channel_id": "web",
                         "product_ids": frozenset({"SKU-1", "s-1"}), "value": value, **changes})


# A campaign that earns on ``event_of(...)`` by CUSTOMER, whatever is drawn here.
PASSING = st.fixed_dictionaries({
    "starts_at": mostly(None, NOW - DAY, NOW).map(iso), "ends_at": mostly(None, NOW + DAY).map(iso),
    "tier_ids": st.sampled_from([None, ["gold"]]), "stores": st.sampled_from([None, ["S1", "S2"]]),
    "channels": st.sampled_from([None, ["web"]]), "products": st.sampled_from([None, ["SKU-1"]]),
    "conditions": st.sampled_from([[], [[HOLDS]], [[FAILS], [HOLDS, HOLDS]]]),
})


def campaign_of(campaign_id: str, passing: dict[str, Any], amount: Any, per_unit: Any, days: int | None = None,
                **changes: Any) -> dict[str, Any]:
    attributes = {"event_type": "PURCHASE", "reward_id": "r-1", "amount": amount, "per_currency_unit": per_unit,
                  "conditions": passing["conditions"], "expires_in_days": days}
    campaign = {"id": campaign_id, "type": "BEHAVIOR", "brand_id": None, "paused": False, "finished_at": None,
                **{k: v for k, v in passing.items() if k != "conditions"}, "attributes": attributes}
    attribute_changes = changes.pop("attributes", {})
    return {**campaign, **changes, "attributes": {**attributes, **attribute_changes}}


# Each rule a BEHAVIOR campaign must pass (section 9), broken alone: (what to change in the campaign and in its
# attributes, in the event, in the customer).
BREAKS: dict[str, tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = {
    "customer refused behavioral campaigns": ({}, {}, {"consent": {"purposes": {"behavioral_campaigns": False}}}),
    "not a BEHAVIOR campaign": ({"type": "DIRECT"}, {}, {}),
    "another event type": ({"attributes": {"event_type": "ADD_TO_CART"}}, {}, {}),
    "no reward": ({"attributes": {"reward_id": None}}, {}, {}),
    "paused": ({"paused": True}, {}, {}),
    "finished by hand": ({"finished_at": iso(NOW - DAY)}, {}, {}),
    "ended now": ({"ends_at": iso(NOW)}, {}, {}),
    "not started": ({"starts_at": iso(NOW + timedelta(seconds=1))}, {}, {}),
    "tier not listed": ({"tier_ids": ["silver"]}, {}, {}),
    "no tier listed": ({"tier_ids": []}, {}, {}),
    "customer without tier": ({"tier_ids": ["gold"]}, {}, {"tier_id": None}),
    "store not listed": ({"stores": ["S2"]}, {}, {}),
    "no store listed": ({"stores": []}, {}, {}),
    "event without store": ({"stores": ["S1"]}, {"store_id": None}, {}),
    "channel not listed": ({"channels": ["app"]}, {}, {}),
    "product not listed": ({"products": ["SKU-9"]}, {}, {}),
    "conditions fail": ({"attributes": {"conditions": [[HOLDS, FAILS], [FAILS]]}}, {}, {}),
    "zero amount": ({"attributes": {"amount": 0, "per_currency_unit": 0}}, {}, {}),
    "negative amount": ({"attributes": {"amount": "-0.01", "per_currency_unit": 0}}, {}, {}),
}
CAMPAIGN_BREAKS = [name for name, (_, event, customer) in BREAKS.items() if not event and not customer]


@pytest.mark.parametrize("broken", [None, *BREAKS])
@settings(max_examples=8, deadline=None)
@given(PASSING, st.integers(1, 20), st.sampled_from([0, "0.5"]), st.decimals(0, 500, places=2))
def test_a_campaign_earns_unless_one_of_its_rules_fails(broken: str | None, passing: dict[str, Any], amount: int,
                                                        per_unit: Any, value: Decimal) -> None:
    changes, event_changes, customer_changes = BREAKS[broken] if broken else ({}, {}, {})
    campaign = campaign_of("c-1", passing, amount, per_unit, **changes)
    issued = earnings([campaign], event_of(value, **event_changes), {**CUSTOMER, **customer_changes},
                      FACTS_OF_EVENT, NOW)
    assert len(issued) == (0 if broken else 1), broken


# Campaigns of which about two in three earn: some broken, any amounts (zero and negative ones included).
CAMPAIGNS = st.builds(
    lambda i, passing, amount, per_unit, days, broken: campaign_of(
        f"c-{i}", passing, amount, per_unit, days, **(BREAKS[broken][0] if broken else {})),
    st.integers(0, 10**6), PASSING, st.one_of(st.integers(-5, 20), st.decimals(-5, 20, places=2).map(str)),
    st.one_of(st.just(0), st.decimals(-1, 1, places=3).map(str)), st.sampled_from([None, 30]),
    st.one_of(st.none(), st.none(), st.sampled_from(CAMPAIGN_BREAKS)),
)
EARN = settings(max_examples=60, deadline=None)


@EARN
@given(st.lists(CAMPAIGNS, max_size=5, unique_by=lambda c: c["id"]), st.decimals(0, 500, places=2))
def test_an_issue_is_never_zero_or_negative_and_follows_the_amount_rule(campaigns: list[dict[str, Any]],
                                                                         value: Decimal) -> None:
    by_id = {c["id"]: c for c in campaigns}
    for issue in earnings(campaigns, event_of(value), CUSTOMER, FACTS_OF_EVENT, NOW):
        attributes = by_id[issue.campaign_id]["attributes"]
        assert issue.amount > 0
        # amount + per_currency_unit × the order value, exactly (no float on the way)
        assert issue.amount == Decimal(str(attributes["amount"])) + Decimal(str(attributes["per_currency_unit"])) \
            * value
        assert issue.reward_id == attributes["reward_id"]
        days = attributes["expires_in_days"]
        assert issue.expiration_date == (NOW + timedelta(days=days) if days else None)


@EARN
@given(st.lists(CAMPAIGNS, min_size=2, max_size=5, unique_by=lambda c: c["id"]), st.decimals(0, 500, places=2))
def test_each_campaign_earns_on_its_own_and_at_most_once(campaigns: list[dict[str, Any]], value: Decimal) -> None:
    event = event_of(value)
    together = earnings(campaigns, event, CUSTOMER, FACTS_OF_EVENT, NOW)
    assert together == [issue for c in campaigns for issue in earnings([c], event, CUSTOMER, FACTS_OF_EVENT, NOW)]
    assert len({issue.campaign_id for issue in together}) == len(together)


# -- tiers ---------------------------------------------------------------------------------------------------

TIER_GROUPS = st.lists(st.lists(CONDITIONS, min_size=1, max_size=2), max_size=2)


@st.composite
def tier_lists(draw: st.DrawFn) -> list[dict[str, Any]]:
    levels = draw(st.lists(st.integers(0, 20), min_size=1, max_size=5, unique=True))
    return [{"id": f"t{level}", "level": level, "status": draw(st.sampled_from(["ACTIVE", "ACTIVE", "INACTIVE"])),
             "entry_conditions": draw(TIER_GROUPS), "exit_conditions": draw(TIER_GROUPS)} for level in levels]


TIERS = settings(max_examples=100, deadline=None)


@TIERS
@given(tier_lists(), st.data(), SMALL_FACTS)
def test_the_tier_held_is_the_highest_one_entered_and_not_left(tiers: list[dict[str, Any]], data: st.DataObject,
                                                               facts: Facts) -> None:
    current_id = data.draw(st.sampled_from([None, "deleted", *(t["id"] for t in tiers)]))
    result = next_tier(current_id, tiers, facts)
    by_id = {t["id"]: t for t in tiers}
    current = by_id.get(current_id) if current_id else None
    active = [t for t in tiers if t["status"] == "ACTIVE"]

    def entered(tier: dict[str, Any]) -> bool:
        return groups_hold(tier["entry_conditions"], facts, empty=True)

    def left(tier: dict[str, Any]) -> bool:
        return groups_hold(tier["exit_conditions"], facts, empty=False)

    assert result is None or by_id[result]["status"] == "ACTIVE"  # an inactive tier is never held
    if result is not None and result != current_id:
        assert entered(by_id[result])  # a tier is reached only through its entry conditions
    if current is not None and current["status"] == "ACTIVE":
        if left(current):
            assert result != current_id
        else:
            assert result is not None and by_id[result]["level"] >= current["level"]  # kept until a higher one
    # Nobody is held below a tier they entered (unless it is the tier they are leaving).
    level = by_id[result]["level"] if result is not None else -1
    for tier in active:
        if entered(tier) and not (tier is current and left(tier)):
            assert tier["level"] <= level
    # The order the tiers are listed in does not matter.
    assert next_tier(current_id, list(reversed(tiers)), facts) == result


@TIERS
@given(tier_lists(), st.data(), SMALL_FACTS)
def test_a_tier_not_left_is_kept_until_a_higher_one_is_entered(tiers: list[dict[str, Any]], data: st.DataObject,
                                                               facts: Facts) -> None:
    current = data.draw(st.sampled_from(tiers))
    current.update(status="ACTIVE", exit_conditions=[])  # empty exit conditions never hold
    result = next_tier(current["id"], tiers, facts)
    higher = [t for t in tiers if t["status"] == "ACTIVE" and t["level"] > current["level"]
              and groups_hold(t["entry_conditions"], facts, empty=True)]
    # Whether or not the current tier's own entry conditions still hold.
    assert result == (max(higher, key=lambda t: t["level"])["id"] if higher else current["id"])


@TIERS
@given(st.lists(st.tuples(st.integers(0, 3), TIER_GROUPS, TIER_GROUPS), min_size=1, max_size=5), st.data(),
       SMALL_FACTS)
def test_the_tier_from_the_highest_down_is_the_tier_of_every_tier_weighed(
        drawn: list[tuple[int, Any, Any]], data: st.DataObject, facts: Facts) -> None:
    # Levels may repeat: of equal tiers the one listed first wins, both ways.
    tiers = [{"id": f"t{i}", "level": level, "entry_conditions": entry, "exit_conditions": exit_}
             for i, (level, entry, exit_) in enumerate(drawn)]
    current_id = data.draw(st.sampled_from([None, "deleted", *(t["id"] for t in tiers)]))
    read = tiers_of(tiers)
    assert read.by_level is not None
    assert next_tier(current_id, read, facts) == next_tier(current_id, replace(read, by_level=None), facts)


def test_a_tier_that_cannot_be_read_is_weighed_where_it_was() -> None:
    # A level or a value that is no finite number: every tier is weighed as before, and it fails where it did.
    broken = [{"id": "a", "level": 1, "entry_conditions": []},
              {"id": "b", "level": 2, "entry_conditions": [[{"type": "Purchase Count", "operator": "greater than",
                                                              "value": "NaN"}]]}]
    read = tiers_of(broken)
    assert read.by_level is None
    with pytest.raises(InvalidOperation):
        next_tier(None, read, Facts())
