"""The pure loyalty rules: conditions (OR of ANDs), restrictions, and which tier a customer holds."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from linksvc.loyalty.rules import Facts, condition_holds, groups_hold, next_tier, restriction_passes

FACTS = Facts(order_value=Decimal("50"), total_order_value=Decimal("120"), purchase_count=3,
              points_balance=Decimal("10.5"))


def cond(kind: str, operator: str, value: Any) -> dict[str, Any]:
    return {"type": kind, "operator": operator, "primitive": "number", "value": value}


@pytest.mark.parametrize(("condition", "holds"), [
    (cond("Order Value", "greater than", 49.99), True),
    (cond("Order Value", "greater than", 50), False),
    (cond("Order Value", "grater than", 49), True),
    (cond("Order Value", "greater than or equal", 50), True),
    (cond("Total Order Value", "less than", 120), False),
    (cond("Total Order Value", "less than or equal", 120), True),
    (cond("Purchase Count", "equal", 3), True),
    (cond("Points Balance", "equal", "10.50"), True),
    (cond("Points Balance", "greater than", 10.49), True),
])
def test_conditions(condition: dict[str, Any], holds: bool) -> None:
    assert condition_holds(condition, FACTS) is holds


def test_groups_are_or_of_ands() -> None:
    yes, no = cond("Purchase Count", "equal", 3), cond("Purchase Count", "equal", 4)
    assert groups_hold([[yes, yes], [no]], FACTS, empty=False)
    assert not groups_hold([[yes, no], [no]], FACTS, empty=True)
    assert groups_hold([], FACTS, empty=True) and not groups_hold([], FACTS, empty=False)
    assert groups_hold([[]], FACTS, empty=False)  # an empty AND holds


@pytest.mark.parametrize(("allowed", "given", "passes"), [
    (None, ["S1"], True), (None, [None], True), (["S1"], ["S1"], True), (["S1"], ["S2"], False),
    (["S1"], [None], False), ([], ["S1"], False), (["A", "B"], ["X", "B"], True),
])
def test_restrictions(allowed: list[str] | None, given: list[str | None], passes: bool) -> None:
    assert restriction_passes(allowed, given) is passes


BRONZE = {"id": "bronze", "level": 1}
SILVER = {"id": "silver", "level": 2, "entry_conditions": [[cond("Total Order Value", "greater than or equal", 100)]],
          "exit_conditions": [[cond("Total Order Value", "less than", 50)]]}
GOLD = {"id": "gold", "level": 3, "entry_conditions": [[cond("Total Order Value", "greater than or equal", 500)]]}
RETIRED = {"id": "retired", "level": 9, "status": "INACTIVE"}
TIERS = [BRONZE, SILVER, GOLD, RETIRED]


@pytest.mark.parametrize(("current", "total", "expected"), [
    (None, 0, "bronze"),  # no entry conditions: everyone
    (None, 120, "silver"),
    ("bronze", 600, "gold"),  # a higher tier always wins
    ("silver", 80, "silver"),  # below the entry, not below the exit: kept
    ("silver", 40, "bronze"),  # exit conditions hold: back to the best that qualifies
    ("gold", 10, "gold"),  # no exit conditions: kept
    ("retired", 10, "bronze"),  # an inactive tier is not held
    ("deleted", 10, "bronze"),
])
def test_next_tier(current: str | None, total: int, expected: str) -> None:
    assert next_tier(current, TIERS, Facts(total_order_value=Decimal(total))) == expected


def test_no_tier_qualifies() -> None:
    assert next_tier(None, [SILVER], Facts()) is None
    assert next_tier("silver", [SILVER], Facts(total_order_value=Decimal(10))) is None
