"""build_wallet: the spec's wallet object from unexpired lines; one total per reward (section 5)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from linksvc.loyalty.wallet import build_wallet, wallet_id

R1, R2, R3 = "r-1", "r-2", "r-3"
REWARDS = {R1: {"id": R1, "name": "Points"}, R2: {"id": R2, "name": "Stars"}}


def line(amount: str, reward_id: str, expires: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"amount": amount, "reward_id": reward_id, "campaign_id": extra.get("campaign_id"),
            "brand_id": extra.get("brand_id"), "issued_at": extra.get("issued_at", "2025-01-01T00:00:00.000000Z"),
            "expiration_date": expires, "reservation_expires_at": None}


def test_empty_wallet() -> None:
    wallet = build_wallet("cust-1", [], REWARDS)
    assert wallet == {"id": wallet_id("cust-1"), "owner_id": "cust-1", "lines": [], "totals": []}


def test_wallet_id_is_stable_per_customer() -> None:
    assert wallet_id("cust-1") == wallet_id("cust-1") != wallet_id("cust-2")


def test_lines_are_passed_through_with_decimal_amounts() -> None:
    given_line = line("12.50", R1, "2030-01-01T00:00:00.000000Z", campaign_id="c-1", brand_id="b-1")
    wallet = build_wallet("cust-1", [given_line], REWARDS)
    assert wallet["lines"] == [{**given_line, "amount": Decimal("12.50")}]


def test_totals_per_reward() -> None:
    lines = [
        line("100", R1, "2031-01-01T00:00:00.000000Z"),
        line("0.1", R2),
        line("50", R1, "2030-06-01T00:00:00.000000Z"),
        line("0.2", R2),
        line("25", R1),
        line("7", R3, "2029-01-01T00:00:00.000000Z"),
    ]
    totals = build_wallet("cust-1", lines, REWARDS)["totals"]
    assert totals == [
        # R1: earliest of the lines that expire; a line without expiry does not make it null.
        {"total": Decimal("175"), "reward_id": R1, "expiration_date": "2030-06-01T00:00:00.000000Z",
         "reward": REWARDS[R1]},
        # R2: nothing expires -> null; decimal sum, exactly 0.3.
        {"total": Decimal("0.3"), "reward_id": R2, "expiration_date": None, "reward": REWARDS[R2]},
        # R3: an unknown reward is shown as null, its total is still there.
        {"total": Decimal("7"), "reward_id": R3, "expiration_date": "2029-01-01T00:00:00.000000Z", "reward": None},
    ]


def test_the_earliest_expiration_wins_whatever_the_order() -> None:
    dates = ["2030-03-01T00:00:00.000000Z", "2030-01-01T00:00:00.000000Z", None, "2030-02-01T00:00:00.000000Z"]
    for rotation in range(len(dates)):
        rotated = dates[rotation:] + dates[:rotation]
        totals = build_wallet("c", [line("1", R1, d) for d in rotated], REWARDS)["totals"]
        assert totals[0]["expiration_date"] == "2030-01-01T00:00:00.000000Z", rotated
        assert totals[0]["total"] == 4


amounts = st.decimals(min_value=Decimal("0.01"), max_value=Decimal("100000"), places=2)
dates = st.none() | st.dates().map(lambda d: d.strftime("%Y-%m-%dT00:00:00.000000Z"))
lines_strategy = st.lists(st.tuples(amounts, st.sampled_from([R1, R2, R3]), dates), max_size=30)


@given(lines_strategy)
def test_totals_add_up(generated: list[tuple[Decimal, str, str | None]]) -> None:
    wallet = build_wallet("c", [line(str(a), r, d) for a, r, d in generated], REWARDS)
    assert len(wallet["lines"]) == len(generated)
    totals = {t["reward_id"]: t for t in wallet["totals"]}
    assert set(totals) == {r for _, r, _ in generated}
    for reward_id, total in totals.items():
        mine = [(a, d) for a, r, d in generated if r == reward_id]
        assert total["total"] == sum(a for a, _ in mine)
        expiring = [d for _, d in mine if d is not None]
        assert total["expiration_date"] == (min(expiring) if expiring else None)
        assert total["reward"] == REWARDS.get(reward_id)
    assert sum(t["total"] for t in wallet["totals"]) == sum(a for a, _, _ in generated)
