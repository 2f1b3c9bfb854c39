"""Random sequences of purchases (earning and redeeming) and reversals never make a balance negative and
always keep the ledger consistent: each line's amount is the sum of its entries."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linksvc.clock import utcnow
from linksvc.errors import ServiceError
from linksvc.loyalty import reversal
from linksvc.loyalty import service as events
from linksvc.seed import load_seed
from storage import wallet as wallet_repo
from storage.db import fetch_all
from tests import pgstore
from tests.factories import A, ids, two_accounts

CUSTOMER = "cust-aaaa"
REWARD = ids(A)["rewards"]

purchases = st.tuples(st.just("purchase"), st.integers(0, 300), st.integers(0, 160), st.booleans())
reversals = st.tuples(st.just("reverse"), st.integers(0, 30), st.just(0), st.just(False))
operations = st.lists(st.one_of(purchases, reversals), min_size=1, max_size=25)


def _seed() -> dict[str, Any]:
    seed = two_accounts()
    account = seed["accounts"][0]
    # Earn 1 per 10 currency units on top of the fixed 10, expiring in 30 days; spend from the opening 100 first
    # or last depending on expiry: both kinds of line exist.
    account["campaigns"][0]["attributes"].update({"per_currency_unit": "0.1", "expires_in_days": 30})
    account["tiers"][0]["entry_conditions"] = [[{"type": "Total Order Value", "operator": "greater than",
                                                 "value": 400}]]
    account["tiers"][0]["exit_conditions"] = [[{"type": "Total Order Value", "operator": "less than", "value": 300}]]
    return seed




async def _scenario(ops: list[tuple[str, int, int, bool]], pg: pgstore.TestDatabase | None) -> None:
    db = await pgstore.open_empty_store(pg)
    try:
        await load_seed(db, _seed(), allow_private=True)
        accepted: list[str] = []
        for n, (kind, value, redeem, with_redeem) in enumerate(ops):
            now = utcnow()
            try:
                async with db.transaction() as tx:
                    if kind == "purchase":
                        raw = {"type": "PURCHASE", "customer_id": CUSTOMER, "order_id": f"o-{n}", "currency": "COP",
                               "value": value, "products": [{"sku": "X"}]}
                        if with_redeem and redeem:
                            raw["redeem"] = [{"id": REWARD, "amount": redeem}]
                        event_id, _ = await events.apply(tx, A, events.prepare(raw, "SERVER", now), now)
                        accepted.append(event_id)
                    elif accepted:
                        await reversal.reverse(tx, A, accepted[value % len(accepted)], "r", now)
            except ServiceError as exc:  # more than the balance (400) or a second reversal (409): nothing changes
                assert exc.status in (400, 409), exc
            lines = await fetch_all(db.reader, "SELECT amount FROM wallet_lines WHERE customer_id = ?", (CUSTOMER,))
            assert all(Decimal(line["amount"]) >= 0 for line in lines)
            assert await wallet_repo.ledger_mismatches(db.reader, A) == []
        entries = await wallet_repo.entries_of_customer(db.reader, A, CUSTOMER)
        lines = await fetch_all(db.reader, "SELECT amount FROM wallet_lines WHERE customer_id = ?", (CUSTOMER,))
        assert sum(e.amount for e in entries) == sum(Decimal(line["amount"]) for line in lines)
    finally:
        await db.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations)
def test_random_purchases_redeems_and_reversals_keep_the_ledger(pg_database: pgstore.TestDatabase | None,
                                                                ops: list[tuple[str, int, int, bool]]) -> None:
    asyncio.run(_scenario(ops, pg_database))
