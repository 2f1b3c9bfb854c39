"""The customer lookup's held answers (linksvc/customers/held.py): a worker gives an answer again while nothing
it shows changed, and never one that a change made wrong. Each change below is made the way users make it (the
storefront API, the admin's resources, another worker's write straight to the tables), then the lane's answer
over a raw socket must be the handler's answer, byte for byte, and the lane must have answered it itself.
The bucket a change stamps is the one the readers check: the triggers' expression and
``storage.generations.wallet_bucket`` agree for any id."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiohttp.test_utils import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.appkeys import DB
from linksvc.customers.held import HeldAnswer, HeldLookups, held_lookups
from linksvc.resources.service import Resources
from linksvc.store import in_one_unit
from storage import customers as customers_repo
from storage.db import Database, Tx
from storage.generations import MODELS, wallet_bucket
from storage.postgres import PostgresDatabase
from tests.conftest import migrated_copy
from tests.factories import A
from tests.http.test_fast_lane import converse
from tests.http.test_lookup_lane import LOOKUP, at_once, both_ways, request, shape
from tests.http.test_lookup_lane import store as store  # noqa: F401 (the fixture)
from tests.http.test_storefront_customers import REWARD

ANA = f"{LOOKUP}?document_number=CC100"
ANA_BY_PHONE = f"{LOOKUP}?phone=573001234567"


async def _twice_the_same(client: TestClient, token: str, monkeypatch: pytest.MonkeyPatch,
                          targets: tuple[str, ...] = (ANA, ANA_BY_PHONE)) -> list[Any]:
    """Each target asked twice with the lane on, then with the handler alone: the same answers; the bodies."""
    sends = [request(target, token) for target in targets for _ in range(2)]
    on, off, answered = await both_ways(client, sends, monkeypatch)
    assert answered == at_once(client, len(sends))
    assert [shape(reply) for reply in on] == [shape(reply) for reply in off]
    return [json.loads(reply.body) for reply in on]


async def test_an_answer_is_given_again_while_nothing_changed(client: TestClient, store: dict[str, str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    if isinstance(client.app[DB], PostgresDatabase):
        pytest.skip("nothing is held on PostgreSQL: the lookup awaits the store and takes the handler")
    held = held_lookups(client.app[DB])
    await converse(client, [request(ANA, store["A"]), request(ANA_BY_PHONE, store["A"])])
    hits = held.hits
    bodies = await _twice_the_same(client, store["A"], monkeypatch)
    assert held.hits - hits == 4  # both identifiers, twice each, lane on; the handler alone reads the store
    assert len({json.dumps(body) for body in bodies}) == 1


async def _other_worker(client: TestClient) -> Database:
    """A second store on the same file: another worker process's writes."""
    db = client.app[DB]
    assert isinstance(db, Database)
    other = Database(db.path)
    await other.open()
    return other


def _sql(statement: str, *params: Any) -> Callable[[Tx], Awaitable[None]]:
    async def unit(tx: Tx) -> None:
        await tx.execute(statement, params)
    return unit


async def test_every_change_to_what_an_answer_shows_is_seen_at_once(
        client: TestClient, store: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    db = client.app[DB]
    token = store["A"]
    headers = {"Authorization": f"Bearer {token}"}
    first = await _twice_the_same(client, token, monkeypatch)
    assert first[0]["data"]["customer"]["name"] == "Ana"

    # The customer's document, through the storefront API.
    moved = await client.post(f"{LOOKUP}/migrate", headers=headers,
                              json={"customers": [{"document_number": "CC100", "name": "Ana María"}]})
    assert moved.status == 200, await moved.text()
    assert (await _twice_the_same(client, token, monkeypatch))[0]["data"]["customer"]["name"] == "Ana María"

    # A reward document its wallet shows, through the resources.
    await Resources(db, True).update(A, "rewards", REWARD, {"name": "Stars"}, partial=True)
    body = (await _twice_the_same(client, token, monkeypatch))[0]
    assert {total["reward"]["name"] for total in body["data"]["wallet"]["totals"]} == {"Stars"}

    if isinstance(db, PostgresDatabase):
        return  # the rest writes as another SQLite worker
    other = await _other_worker(client)
    try:
        # A wallet line spent on another worker, by a statement no service code wrote.
        await in_one_unit(other, _sql("UPDATE wallet_lines SET amount = '1' WHERE customer_id = 'ana' "
                                      "AND CAST(amount AS REAL) = 100"))
        body = (await _twice_the_same(client, token, monkeypatch))[0]
        assert sorted(line["amount"] for line in body["data"]["wallet"]["lines"]) == [1, 50.5]
        # A line added, then one deleted.
        await in_one_unit(other, _sql(
            "INSERT INTO wallet_lines (id, account_id, customer_id, reward_id, amount, issued_at, expiration_date) "
            "VALUES ('new-line', ?, 'ana', ?, '3', '2026-01-01T00:00:00Z', '2097-01-01T00:00:00Z')", A, REWARD))
        body = (await _twice_the_same(client, token, monkeypatch))[0]
        assert sorted(line["amount"] for line in body["data"]["wallet"]["lines"]) == [1, 3, 50.5]
        await in_one_unit(other, _sql("DELETE FROM wallet_lines WHERE id = 'new-line'"))
        body = (await _twice_the_same(client, token, monkeypatch))[0]
        assert sorted(line["amount"] for line in body["data"]["wallet"]["lines"]) == [1, 50.5]
        # Another customer given the same phone: the phone finds two (409, the handler's answer).
        await in_one_unit(other, _sql("UPDATE customers SET phone_digits = '573001234567' WHERE id = 'fifteen'"))
        on, off, _ = await both_ways(client, [request(ANA_BY_PHONE, token)] * 2, monkeypatch)
        assert [reply.status for reply in on] == [409, 409] and [shape(r) for r in on] == [shape(r) for r in off]
        await in_one_unit(other, _sql("DELETE FROM customers WHERE id = 'fifteen'"))
        await _twice_the_same(client, token, monkeypatch)
        # The customer deleted: 404 by both identifiers.
        await in_one_unit(other, _sql("DELETE FROM customers WHERE id = 'ana'"))
        on, off, _ = await both_ways(client, [request(ANA, token), request(ANA_BY_PHONE, token)], monkeypatch)
        assert [reply.status for reply in on] == [404, 404] and [shape(r) for r in on] == [shape(r) for r in off]
    finally:
        await other.close()


async def _rename_on_another_worker(path: str) -> None:
    other = Database(path)
    await other.open()
    try:
        await in_one_unit(other, _sql("UPDATE customers SET body = json_set(body, '$.name', 'Ana Raced') "
                                      "WHERE id = 'ana'"))
    finally:
        await other.close()


async def test_an_answer_read_just_before_its_customer_changed_is_not_kept(
        client: TestClient, store: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    db = client.app[DB]
    if isinstance(db, PostgresDatabase):
        pytest.skip("nothing is held on PostgreSQL")
    assert isinstance(db, Database)
    real = customers_repo.lookup_now

    def read_then_another_worker_writes(*args: Any) -> Any:
        found = real(*args)  # the store as it was
        worker = threading.Thread(target=asyncio.run, args=(_rename_on_another_worker(db.path),))
        worker.start()
        worker.join()  # committed and published before this answer is held, or not
        return found

    monkeypatch.setattr(customers_repo, "lookup_now", read_then_another_worker_writes)
    [raced] = await converse(client, [request(ANA, store["A"])])
    assert json.loads(raced.body)["data"]["customer"]["name"] == "Ana"  # read before the change
    monkeypatch.setattr(customers_repo, "lookup_now", real)
    body = (await _twice_the_same(client, store["A"], monkeypatch, (ANA,)))[0]
    assert body["data"]["customer"]["name"] == "Ana Raced"


async def test_an_answer_is_not_given_once_a_line_it_shows_expires(
        client: TestClient, store: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    db = client.app[DB]
    if isinstance(db, PostgresDatabase):
        pytest.skip("nothing is held on PostgreSQL")
    soon = _in_a_moment(1.3)
    await in_one_unit(db, _sql(
        "INSERT INTO wallet_lines (id, account_id, customer_id, reward_id, amount, issued_at, expiration_date) "
        "VALUES ('brief', ?, 'ana', ?, '7', '2026-01-01T00:00:00Z', ?)", A, REWARD, soon))
    body = (await _twice_the_same(client, store["A"], monkeypatch, (ANA,)))[0]
    assert 7 in [line["amount"] for line in body["data"]["wallet"]["lines"]]
    await asyncio.sleep(1.4)
    body = (await _twice_the_same(client, store["A"], monkeypatch, (ANA,)))[0]
    assert 7 not in [line["amount"] for line in body["data"]["wallet"]["lines"]]


def _in_a_moment(seconds: float) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@pytest.fixture(scope="module")
def buckets_db(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> sqlite3.Connection:
    path = tmp_path_factory.mktemp("buckets") / "linksvc.db"
    migrated_copy(request, path)
    return sqlite3.connect(path, isolation_level=None)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(customer_id=st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=12))
def test_the_triggers_stamp_the_bucket_the_readers_check(buckets_db: sqlite3.Connection, customer_id: str) -> None:
    conn = buckets_db
    conn.execute("INSERT INTO wallet_lines (id, account_id, customer_id, reward_id, amount, issued_at) "
                 "VALUES ('probe', 'acct', ?, 'r', '1', '2026-01-01T00:00:00Z')", (customer_id,))
    try:
        [(wallets,)] = conn.execute("SELECT value FROM generations WHERE name = 'wallets'").fetchall()
        stamped = [row[0] for row in conn.execute("SELECT bucket FROM wallet_buckets WHERE value = ?", (wallets,))]
        assert [f"wallets/{bucket}" for bucket in stamped] == [wallet_bucket(customer_id)]
    finally:
        conn.execute("DELETE FROM wallet_lines WHERE id = 'probe'")
    assert "wallets" in MODELS and "lookups" in MODELS


def test_the_held_answers_are_bounded_the_oldest_dropped_first(tmp_path: Path) -> None:
    held = HeldLookups(Database(str(tmp_path / "unopened.db")), max_entries=3, max_bytes=10)  # counters all 0

    def answer(n: int, size: int) -> HeldAnswer:
        return HeldAnswer(0, "wallets/0", 0, float("inf"), orjson.Fragment(b"%d" % n), size)

    for n in range(5):
        held.keep((A, str(n), None), answer(n, 1))
    assert len(held) == 3 and held.bytes == 3
    assert [held.get((A, str(n), None), 0.0) is not None for n in range(5)] == [False, False, True, True, True]
    held.keep((A, "big", None), answer(9, 9))  # 3 + 9 bytes > 10: the two oldest go
    assert [held.get((A, str(n), None), 0.0) is not None for n in range(2, 5)] == [False, False, True]
    assert held.bytes == 10
    held.keep((A, "huge", None), answer(9, 11))  # larger than the bound: not held, nothing dropped
    assert held.get((A, "huge", None), 0.0) is None and held.bytes == 10
    held.keep((A, "big", None), answer(9, 2))  # the same key again: its size replaced
    assert held.bytes == 3
