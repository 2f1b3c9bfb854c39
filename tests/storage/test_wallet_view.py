"""The wallet a customer lookup answers, read from a real store: the held lines (not expired, not used up) in
wallet order with their exact amounts, one total per reward (exact decimal sum, earliest expiration, the
account's own reward document) - checked against a plain model for random wallets (section 5)."""

from __future__ import annotations

import asyncio
import json
from decimal import Decimal
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linksvc.customers.wallet import build_wallet, load_wallet, wallet_id
from linksvc.jsoncodec import dumpb
from linksvc.seed import load_seed
from storage import customers as customers_repo
from storage import wallet as wallet_repo
from storage.db import fetch_all
from tests import pgstore
from tests.factories import A, B, ids, two_accounts

CUSTOMER = ids(A)["customers"]
R1 = ids(A)["rewards"]
R2 = "aaaaaaaa-0009-4000-8000-000000000009"
FOREIGN = ids(B)["rewards"]  # a reward of the other account: never shown in A's wallet
UNKNOWN = "aaaaaaaa-0010-4000-8000-000000000010"
NOW = "2027-06-01T00:00:00.000000Z"

amounts = st.one_of(
    st.decimals(min_value=Decimal("0"), max_value=Decimal("100000"), places=2),
    # Spellings decimal arithmetic produces: 1E+2, 0.000, 5E-7.
    st.decimals(min_value=Decimal("0"), max_value=Decimal("1E+6"), places=7).map(lambda d: d.normalize()),
)
expirations = st.none() | st.sampled_from([
    "2027-01-01T00:00:00.000000Z", "2027-05-31T23:59:59.999999Z", NOW, "2027-06-01T00:00:00.000001Z",
    "2028-01-01T00:00:00.000000Z", "2030-01-01T00:00:00.000000Z",
])
issued = st.sampled_from(["2026-01-01T00:00:00.000000Z", "2026-06-01T00:00:00.000000Z"])
lines_strategy = st.lists(
    st.tuples(amounts, st.sampled_from([R1, R2, FOREIGN, UNKNOWN]), expirations, issued), max_size=25
)


def _exact(raw: bytes) -> Any:
    return json.loads(raw, parse_float=Decimal, parse_int=Decimal)


def _model(lines: list[dict[str, Any]], rewards: dict[str, dict[str, Any]]) -> dict[str, Any]:
    held = [line for line in lines if line["amount"] > 0
            and (line["expiration_date"] is None or line["expiration_date"] > NOW)]
    held.sort(key=lambda line: (line["expiration_date"] is None, line["expiration_date"] or "", line["issued_at"],
                                line["id"]))
    totals: dict[str, dict[str, Any]] = {}
    for line in held:
        total = totals.setdefault(line["reward_id"], {"total": Decimal(0), "reward_id": line["reward_id"],
                                                      "expiration_date": None,
                                                      "reward": rewards.get(line["reward_id"])})
        total["total"] += line["amount"]
        expires = line["expiration_date"]
        if expires is not None and (total["expiration_date"] is None or expires < total["expiration_date"]):
            total["expiration_date"] = expires
    ordered = sorted(totals.values(), key=lambda t: (t["expiration_date"] is None, t["expiration_date"] or "",
                                                     t["reward_id"]))
    shown = ("amount", "reward_id", "campaign_id", "brand_id", "issued_at", "expiration_date",
             "reservation_expires_at")
    return {"id": wallet_id(CUSTOMER), "owner_id": CUSTOMER,
            "lines": [{key: line[key] for key in shown} for line in held], "totals": ordered}




async def _scenario(generated: list[tuple[Decimal, str, str | None, str]], pg: pgstore.TestDatabase | None) -> None:
    seed = two_accounts()
    seed["accounts"][0]["rewards"].append({"id": R2, "name": "Stars", "attributes": {"conversion_factor": 1}})
    seed["accounts"][0]["customers"][0]["wallet"] = {"lines": []}
    db = await pgstore.open_empty_store(pg)
    try:
        await load_seed(db, seed, allow_private=True)
        lines = []
        async with db.transaction() as tx:
            for n, (amount, reward_id, expires, issued_at) in enumerate(generated):
                line = {"id": f"line-{n:04d}", "account_id": A, "customer_id": CUSTOMER, "reward_id": reward_id,
                        "campaign_id": None, "brand_id": ids(A)["brands"] if n % 2 else None, "amount": str(amount),
                        "issued_at": issued_at, "expiration_date": expires,
                        "reservation_expires_at": None, "source": "opening"}
                await wallet_repo.insert_line(tx, wallet_repo.WalletLine(**{**line, "amount": Decimal(str(amount))}),
                                              "opening", issued_at)
                lines.append({**line, "amount": Decimal(str(amount))})
        stored = await fetch_all(db.reader, "SELECT id, body FROM rewards WHERE account_id = ?", (A,))
        rewards = {row["id"]: {**json.loads(row["body"]), "account_id": A} for row in stored}
        assert set(rewards) == {R1, R2}
        answered = _exact(dumpb(await load_wallet(db.reader, A, CUSTOMER, NOW)))
        assert answered == _exact(dumpb(_model(lines, rewards)))
        # The customer lookup reads the same wallet (when it is small enough to read on the event loop).
        for max_lines in (len(generated), len(generated) - 1):
            found = await customers_repo.lookup(db.reader, A, "CC100", None, NOW, max_lines)
            assert found is not None and found.matches == 1 and found.id == CUSTOMER
            if max_lines >= len(generated) or not generated:  # no line at all: nothing to read apart
                assert found.lines is not None
                assert dumpb(build_wallet(CUSTOMER, found.lines, found.rewards)) == dumpb(
                    await load_wallet(db.reader, A, CUSTOMER, NOW))
            else:
                assert (found.lines, found.rewards) == (None, [])
    finally:
        await db.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines_strategy)
def test_the_wallet_matches_the_model(pg_database: pgstore.TestDatabase | None,
                                      generated: list[tuple[Decimal, str, str | None, str]]) -> None:
    asyncio.run(_scenario(generated, pg_database))


def test_an_empty_wallet_and_a_stable_id(pg_database: pgstore.TestDatabase | None) -> None:
    async def scenario() -> None:
        db = await pgstore.open_empty_store(pg_database)
        try:
            seed = two_accounts()
            seed["accounts"][0]["customers"][0]["wallet"] = {"lines": []}
            await load_seed(db, seed, allow_private=True)
            wallet = await load_wallet(db.reader, A, CUSTOMER)
            assert json.loads(dumpb(wallet)) == {"id": wallet_id(CUSTOMER), "owner_id": CUSTOMER, "lines": [],
                                                 "totals": []}
        finally:
            await db.close()

    asyncio.run(scenario())
    assert wallet_id("cust-1") == wallet_id("cust-1") != wallet_id("cust-2")
