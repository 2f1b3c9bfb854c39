"""Events applied as a batch (``linksvc.loyalty.service.ingest`` / ``apply_batch``) leave exactly the state that
the same events sent one request at a time leave: the same events, wallet lines, ledger, running totals, tiers
and deliveries (ids aside, which are random); and a batch runs a number of statements that does not grow with
its number of events."""

from __future__ import annotations

import asyncio
import itertools
import re
import sqlite3
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from linksvc.campaigns import catalog
from linksvc.errors import ServiceError
from linksvc.forwarding import outbox
from linksvc.jsoncodec import dumps
from linksvc.loyalty import service as events
from linksvc.seed import load_seed
from storage import events as event_repo
from storage import wallet as wallet_repo
from storage.db import Database, Tx, fetch_all
from tests.factories import A, B, ids, two_accounts

NOW = datetime.now(UTC).replace(microsecond=0)
REWARD = ids(A)["rewards"]
BRAND = ids(A)["brands"]
ANA = "cust-aaaa"
BEA = "cust-bea"
SILVER, GOLD = "00000000-0000-4000-8000-0000000051a1", "00000000-0000-4000-8000-0000000051a2"
VIEWS = "00000000-0000-4000-8000-00000000c0a1"
PER_UNIT = "00000000-0000-4000-8000-00000000c0a2"
GOLD_ONLY = "00000000-0000-4000-8000-00000000c0a3"


def _seed() -> dict[str, Any]:
    seed = two_accounts()
    account = seed["accounts"][0]
    account["connections"][0]["enabled"] = True  # every event gets its deliveries
    account["customers"][0]["wallet"]["lines"][0]["issued_at"] = "2020-01-01T00:00:00.000000Z"
    account["tiers"] = [
        {"id": SILVER, "name": "Silver", "level": 1},
        {"id": GOLD, "name": "Gold", "level": 2,
         "entry_conditions": [[{"type": "Total Order Value", "operator": "greater than or equal", "value": 100}]],
         "exit_conditions": [[{"type": "Total Order Value", "operator": "less than", "value": 80}]]},
    ]
    account["campaigns"] += [
        {"id": VIEWS, "name": "Views", "type": "BEHAVIOR", "brand_id": BRAND,
         "attributes": {"event_type": "page_view", "reward_id": REWARD, "amount": 5, "max_per_day": 2}},
        {"id": PER_UNIT, "name": "Per unit", "type": "BEHAVIOR", "brand_id": BRAND,
         "attributes": {"event_type": "PURCHASE", "reward_id": REWARD, "per_currency_unit": "0.1",
                        "expires_in_days": 30}},
        # Only for Gold customers, from their second purchase on, for a product it names: the rules' tier,
        # restriction and condition checks see the tier and totals the batch's earlier events left.
        {"id": GOLD_ONLY, "name": "Gold bonus", "type": "BEHAVIOR", "brand_id": BRAND, "tier_ids": [GOLD],
         "products": ["LATTE-12"], "stores": None,
         "attributes": {"event_type": "PURCHASE", "reward_id": REWARD, "amount": 3,
                        "conditions": [[{"type": "Purchase Count", "operator": "greater than or equal",
                                         "value": 2}]]}},
    ]
    # Bea holds a line that has lapsed (expired at her first event) and one that has not.
    account["customers"].append({
        "id": BEA, "name": "Bea", "email": "Bea@Example.com", "external_id": "ext-bea",
        "wallet": {"lines": [
            {"amount": 7, "reward_id": REWARD, "issued_at": "2020-01-01T00:00:00.000000Z",
             "expiration_date": "2020-06-01T00:00:00.000000Z"},
            {"amount": 20, "reward_id": REWARD, "issued_at": "2020-01-01T00:00:00.000000Z",
             "expiration_date": iso_in(days=3)},
        ]},
    })
    return seed


def iso_in(days: int) -> str:
    return (NOW + timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def purchase(order: str, value: int, who: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    return {"type": "PURCHASE", **(who or {"customer_id": ANA}), "order_id": order, "currency": "COP",
            "value": value, "products": [{"sku": "LATTE-12"}], **fields}


def view(**who: Any) -> dict[str, Any]:
    return {"type": "page_view", **(who or {"customer_id": ANA})}


# Several events of the same customers, each depending on those before it.
SCENARIO: list[dict[str, Any]] = [
    view(),                                                     # 5 points
    purchase("o-1", 60),                                        # 10 + 6 points, Silver
    view(),                                                     # 5 points: the second of the day
    view(),                                                     # nothing: max_per_day reached
    purchase("o-2", 45, redeem=[{"id": REWARD, "amount": 30}]), # spends 30 (the expiring lines first), Gold
    purchase("o-1", 60),                                        # the same order again: its id, nothing new
    purchase("o-1", 61),                                        # the same order, another payload: 409
    purchase("o-3", 10, {"email": "bea@example.com"}, redeem=[{"id": REWARD, "amount": 1000}]),  # 400, nothing
    purchase("o-3", 10, {"external_id": "ext-bea"}),            # now accepted; Bea's lapsed line expires
    view(customer_id="nobody"),                                 # stored, earns nothing
    {"type": "no_such_type", "customer_id": ANA},               # 400: not a custom type of the account
    view(customer_id=ANA, document_number="CC999"),             # identifiers disagree: no customer
    purchase("o-4", 5, {"phone": "+57 300 123 4567"}, redeem=[{"id": REWARD, "amount": 5}]),
    purchase("o-2", 45, redeem=[{"id": REWARD, "amount": 30}]), # replay of o-2
    purchase("o-5", 1, {"customer_id": BEA}, redeem=[{"id": REWARD, "amount": 21}]),  # spends all Bea holds
    view(customer_id=BEA),
]
EXPECTED = [202, 202, 202, 202, 202, 202, 409, 400, 202, 202, 400, 202, 202, 202, 202, 202]


Run = Callable[[Callable[[Tx], Coroutine[Any, Any, Any]]], Coroutine[Any, Any, Any]]


class _Ids:
    """Event and line ids in the order they are made: lines issued at the same moment then sort the same
    way in both runs (random ids would order them at random, in either way of applying)."""

    def __init__(self) -> None:
        self.made = itertools.count(1)

    def __call__(self) -> str:
        return str(uuid.UUID(int=next(self.made)))


@pytest.fixture
async def store(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Database]:
    monkeypatch.setattr(events, "new_id", _Ids())
    db = Database(":memory:")
    await db.open()
    await load_seed(db, _seed(), allow_private=True)
    yield db
    await db.close()


async def _second() -> Database:
    db = Database(":memory:")
    await db.open()
    await load_seed(db, _seed(), allow_private=True)
    return db


def _statuses(results: list[events.Result]) -> list[int]:
    return [r.status if isinstance(r, ServiceError) else 202 for r in results]


async def _state(db: Database) -> str:
    """Every table the events write, ordered as written, with random ids replaced by their rank; the events
    waiting to be fanned out (in their order), then the deliveries the dispatcher's fan-out makes of them."""
    waiting = [dict(row) for row in await fetch_all(db.reader, "SELECT account_id, event_id, trigger, created_at "
                                                               "FROM fanout ORDER BY seq")]
    while await db.write(outbox.fan_out):
        pass
    tables = {
        "events": "SELECT * FROM events ORDER BY rowid",
        # The seed's own lines are issued and opened when the store is made: only what events did is compared.
        "wallet_lines": "SELECT * FROM wallet_lines WHERE account_id = ? ORDER BY rowid",
        "ledger_entries": "SELECT * FROM ledger_entries WHERE account_id = ? AND kind != 'opening' ORDER BY id",
        "customer_stats": "SELECT * FROM customer_stats ORDER BY customer_id",
        "customers": "SELECT id, tier_id, body FROM customers WHERE account_id = ? ORDER BY id",
        "deliveries": "SELECT * FROM deliveries ORDER BY seq",
    }
    now = NOW.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    dump = {name: [dict(row) for row in await fetch_all(db.reader, sql, (A, now)[:sql.count("?")])]
            for name, sql in tables.items()}
    updated = await fetch_all(db.reader, "SELECT id FROM customers WHERE updated_at = ? ORDER BY id", (now,))
    dump["customers_updated_now"] = [row["id"] for row in updated]
    dump["fanout"] = waiting
    text = dumps(dump)
    names = {}
    for table, prefix in (("events", "event"), ("wallet_lines", "line"), ("deliveries", "delivery")):
        for n, row in enumerate(dump[table]):
            names[row["id"]] = f"{prefix}-{n}"
            if row.get("message_id"):  # derived from the event's (random) id
                names[row["message_id"]] = f"message-{n}"
    return re.sub("|".join(re.escape(i) for i in names), lambda m: names[m.group(0)], text) if names else text


async def test_a_batch_leaves_the_state_of_one_request_at_a_time(store: Database) -> None:
    one_db = store
    singles = [(await events.ingest(one_db, A, [raw], "SERVER", NOW))[0] for raw in SCENARIO]
    events.new_id = _Ids()  # the same ids again (the fixture puts new_id back)
    batch_db = await _second()
    try:
        together = await events.ingest(batch_db, A, SCENARIO, "SERVER", NOW, bulk=True)
        assert _statuses(singles) == _statuses(together) == EXPECTED
        # A replay answers the id of the event it repeats, in the same batch too.
        assert together[5] == (together[1][0], False) and together[13] == (together[4][0], False)  # type: ignore[index]
        assert singles[5] == (singles[1][0], False)  # type: ignore[index]
        one_state, batch_state = await _state(one_db), await _state(batch_db)
        assert one_state == batch_state
        # The scenario did what it says (so that the comparison covers it).
        for marker in ('"kind":"expire"', '"kind":"spend"', '"kind":"issue"', SILVER, GOLD, '"trigger":"event"',
                       GOLD_ONLY):
            assert marker in batch_state
        assert await wallet_repo.ledger_mismatches(batch_db.reader, A) == []
    finally:
        await batch_db.close()


async def test_a_write_that_meets_a_constraint_falls_back_to_one_event_at_a_time(
        store: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    db = store
    original = event_repo.insert_many
    calls: list[int] = []

    async def once_refused(tx: Tx, stored: Any) -> None:
        calls.append(len(stored))
        if len(calls) == 1:
            await original(tx, stored)  # written, then refused: the savepoint must undo it
            raise sqlite3.IntegrityError("UNIQUE constraint failed")
        await original(tx, stored)

    monkeypatch.setattr(event_repo, "insert_many", once_refused)
    results = await events.ingest(db, A, SCENARIO, "SERVER", NOW, bulk=True)
    assert _statuses(results) == EXPECTED
    assert calls[0] == 11 and all(n <= 1 for n in calls[1:])
    monkeypatch.setattr(event_repo, "insert_many", original)
    events.new_id = _Ids()
    other_db = await _second()
    try:
        await events.ingest(other_db, A, SCENARIO, "SERVER", NOW, bulk=True)
        assert await _state(db) == await _state(other_db)
    finally:
        await other_db.close()


def _many(n: int) -> list[dict[str, Any]]:
    """``n`` events over a handful of customers: purchases that earn and redeem, views, replays."""
    who = [{"customer_id": ANA}, {"customer_id": BEA}, {"email": "bea@example.com"}, {"customer_id": "nobody"}]
    made: list[dict[str, Any]] = []
    for i in range(n):
        if i % 5 == 4:
            made.append(made[i - 3])  # a replay
        elif i % 2:
            made.append(view(**who[i % len(who)]))
        else:
            made.append(purchase(f"n-{i}", 10 + i, who[i % len(who)], redeem=[{"id": REWARD, "amount": 1}]))
    return made


def _traced(callback: Callable[[str], object] | None) -> Callable[[Tx], Coroutine[Any, Any, None]]:
    """A unit of work that sets the writer connection's trace callback (units run on its thread)."""
    async def unit(tx: Tx) -> None:
        assert isinstance(tx, sqlite3.Connection)
        tx.set_trace_callback(callback)
    return unit


async def _statements(db: Database, raws: list[dict[str, Any]]) -> list[str]:
    traced: list[str] = []
    await catalog.catalog_of(db, A)  # held from now on: the batch reads its customers, not the catalog
    await db.write(_traced(traced.append))
    try:
        results = await events.ingest(db, A, raws, "SERVER", NOW, bulk=True)
    finally:
        await db.write(_traced(None))
    assert all(not isinstance(r, ServiceError) for r in results)
    return traced


async def test_a_batch_runs_a_number_of_statements_that_does_not_grow_with_its_events(
        store: Database) -> None:
    db = store
    ten = _sent(await _statements(db, _many(10)))
    other_db = await _second()
    try:
        hundred = _sent(await _statements(other_db, _many(100)))
    finally:
        await other_db.close()
    # A table's rows go in statements of a few fixed sizes (storage.db.statement_chunks: 100 rows are 64 + 32 +
    # 4), each size compiled once: one write per table, in at most one statement per power of two of its rows.
    writes = _writes(hundred)
    assert len(writes) < 34, writes  # the rollups and their coarse level add a fixed few
    assert len(writes) <= len(_writes(ten)) + 2, (ten, hundred)
    assert len(hundred) <= len(writes) + 2 * sum(1 for sql in writes if sql.startswith("INSERT")), hundred


def _sent(traced: list[str]) -> list[str]:
    """The statements sent, without the trace of each trigger program a statement ran (SQLite traces those as
    the statement again, once per row a trigger fired for: migration 0042's wallet and customer triggers)."""
    return [sql for number, sql in enumerate(traced) if number == 0 or traced[number - 1] != sql]


def _writes(statements: list[str]) -> list[str]:
    """The statements, the chunks of one multi-row insert (one after the other into one table) as one."""
    found: list[str] = []
    for sql in statements:
        head = sql.split(" VALUES")[0] if sql.startswith("INSERT") else sql
        if not (found and head.startswith("INSERT") and found[-1] == head):
            found.append(head)
    return found


async def test_the_other_account_is_untouched(store: Database) -> None:
    db = store
    await events.ingest(db, A, SCENARIO, "SERVER", NOW, bulk=True)
    assert await fetch_all(db.reader, "SELECT id FROM events WHERE account_id = ?", (B,)) == []


async def test_concurrent_requests_are_one_batch_with_the_state_of_one_request_at_a_time(store: Database) -> None:
    one_db = store
    # Each request at its own time: what each event stores and its deliveries carry that time.
    times = [NOW + timedelta(milliseconds=i) for i in range(len(SCENARIO))]
    singles = [(await events.ingest(one_db, A, [raw], "SERVER", at))[0]
               for raw, at in zip(SCENARIO, times, strict=True)]
    events.new_id = _Ids()
    together_db = await _second()
    try:
        units = together_db.writer.units
        # Requests that arrive while the write queue is busy wait together, then go as one batch.
        together = await asyncio.gather(*(events.ingest(together_db, A, [raw], "SERVER", at)
                                          for raw, at in zip(SCENARIO, times, strict=True)))
        assert together_db.writer.units - units == 1
        assert _statuses(singles) == _statuses([r[0] for r in together]) == EXPECTED
        assert together[5][0] == (together[1][0][0], False)  # type: ignore[index]
        assert await _state(one_db) == await _state(together_db)
        assert await wallet_repo.ledger_mismatches(together_db.reader, A) == []
    finally:
        await together_db.close()


async def test_a_fault_in_one_request_fails_that_request_alone(
        store: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    db = store
    original = events.rules.earnings

    def earnings(campaigns: Any, facts_of_event: Any, customer: Any, facts: Any, now: Any) -> Any:
        if facts_of_event.store_id == "broken":
            raise RuntimeError("a fault")
        return original(campaigns, facts_of_event, customer, facts, now)

    monkeypatch.setattr(events.rules, "earnings", earnings)
    requests = [[purchase("f-1", 10)], [purchase("f-2", 10, store_id="broken")], [purchase("f-3", 10), view()]]
    outcomes = await asyncio.gather(*(events.ingest(db, A, raws, "SERVER", NOW, bulk=True) for raws in requests),
                                    return_exceptions=True)
    assert isinstance(outcomes[1], RuntimeError)
    assert [_statuses(o) for o in (outcomes[0], outcomes[2])] == [[202], [202, 202]]  # type: ignore[arg-type]
    stored = await fetch_all(db.reader, "SELECT order_id FROM events WHERE account_id = ? ORDER BY rowid", (A,))
    assert [row["order_id"] for row in stored] == ["f-1", "f-3", None]
