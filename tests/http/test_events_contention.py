"""Many events for one customer at once: each is accepted and applied once, the ledger adds up, and no answer
is a 500, on either store. On PostgreSQL, where every unit is serializable and units begin at once, this is
the case that had most units refused as not serializable; and a unit refused every time it runs again is a
503 with Retry-After (nothing stored), never a 500."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import DB
from storage import wallet as wallet_repo
from storage.db import dialect, execute, fetch_one
from tests.conftest import bearer, token_for
from tests.factories import A
from tests.http.test_events import EVENTS, balance, purchase

AT_ONCE = 64


async def test_many_purchases_of_one_customer_at_once_each_count_once(seeded: TestClient) -> None:
    headers = bearer(await token_for(seeded, A))
    before = await balance(seeded)

    async def one(index: int) -> int:
        response = await seeded.post(EVENTS, json=purchase(f"o-at-once-{index}"), headers=headers)
        return response.status

    statuses = await asyncio.gather(*(one(i) for i in range(AT_ONCE)))
    assert statuses == [202] * AT_ONCE
    stored = await fetch_one(seeded.app[DB].reader, "SELECT count(*) FROM events WHERE account_id = ? AND "
                             "order_id LIKE 'o-at-once-%'", (A,))
    assert stored is not None and stored[0] == AT_ONCE
    assert await wallet_repo.ledger_mismatches(seeded.app[DB].reader, A) == []
    # Each purchase earned what one purchase alone earns: none was applied twice or lost.
    earned = await balance(seeded) - before
    alone = await balance(seeded)
    assert (await seeded.post(EVENTS, json=purchase("o-alone"), headers=headers)).status == 202
    one_purchase = await balance(seeded) - alone
    assert one_purchase > 0 and earned == AT_ONCE * one_purchase


_ALWAYS_REFUSED = """
CREATE FUNCTION linksvc_test_refused() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'could not serialize access due to read/write dependencies among transactions'
        USING ERRCODE = 'serialization_failure';
END;
$$;
CREATE TRIGGER linksvc_test_refused BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION linksvc_test_refused();
"""


async def test_a_unit_refused_every_time_is_a_503_and_stores_nothing(seeded: TestClient) -> None:
    if dialect(seeded.app[DB].reader) != "postgresql":
        pytest.skip("SQLite's one writer never refuses a unit as not serializable")
    headers = bearer(await token_for(seeded, A))
    async with seeded.app[DB].transaction() as tx:
        await execute(tx, _ALWAYS_REFUSED)
    try:
        response = await seeded.post(EVENTS, json=purchase("o-refused"), headers=headers)
        assert response.status == 503
        assert response.headers["Retry-After"] == "1"
        body = await response.json()
        assert body["error"] == "Storage busy" and "nothing was stored" in body["details"]
    finally:
        async with seeded.app[DB].transaction() as tx:
            await execute(tx, "DROP FUNCTION linksvc_test_refused() CASCADE")
    stored = await fetch_one(seeded.app[DB].reader, "SELECT count(*) FROM events WHERE order_id = 'o-refused'")
    assert stored is not None and stored[0] == 0
    assert (await seeded.post(EVENTS, json=purchase("o-refused"), headers=headers)).status == 202
