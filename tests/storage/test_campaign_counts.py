"""Remembered campaign counts are always the counts a fresh query gives."""

from __future__ import annotations

from dataclasses import replace

import pytest

from linksvc.accounts.service import upsert_account
from linksvc.campaigns.service import CampaignCounts
from linksvc.resources.kinds import KINDS
from linksvc.resources.models import Account
from linksvc.resources.service import save
from storage.campaigns import CampaignQuery, count_campaigns
from storage.db import Database

ACCOUNT = "aaaaaaaa-0000-4000-8000-000000000001"
ENDS = "2030-01-01T00:00:00.000000Z"
BEFORE, AFTER = "2029-12-31T23:59:59.000000Z", "2030-01-01T00:00:00.000000Z"


def campaign(n: int, **fields: object) -> dict:
    return {"id": f"aaaaaaaa-0004-4000-8000-{n:012d}", "name": f"c{n}", "type": "REFERRALS", **fields}


@pytest.fixture
async def db(tmp_path):
    database = Database(str(tmp_path / "counts.db"), "NORMAL")
    await database.open()
    async with database.transaction() as tx:
        await upsert_account(tx, Account(id=ACCOUNT, name="A"))
        await save(tx, KINDS["campaigns"], ACCOUNT, campaign(1, ends_at=ENDS))
        await save(tx, KINDS["campaigns"], ACCOUNT, campaign(2, stores=["s1"]))
    yield database
    await database.close()


async def test_status_counts_change_at_the_next_transition(db: Database) -> None:
    counts = CampaignCounts()
    running = CampaignQuery(ACCOUNT, BEFORE, status="RUNNING")
    assert await counts.count(db.reader, running) == 2
    assert await counts.count(db.reader, replace(running, now="2029-12-31T23:59:59.999999Z")) == 2
    # The campaign ends at ENDS: the remembered count is not used past it.
    assert await counts.count(db.reader, replace(running, now=AFTER)) == 1
    assert await counts.count(db.reader, replace(running, now=AFTER, status="FINISHED")) == 1


async def test_any_write_to_the_account_campaigns_invalidates(db: Database) -> None:
    counts = CampaignCounts()
    everything = CampaignQuery(ACCOUNT, BEFORE)
    in_store = CampaignQuery(ACCOUNT, BEFORE, store_id="s2")
    assert await counts.count(db.reader, everything) == 2
    assert await counts.count(db.reader, in_store) == 1  # c1 (no restriction) only
    async with db.transaction() as tx:
        await save(tx, KINDS["campaigns"], ACCOUNT, campaign(3))
    assert await counts.count(db.reader, everything) == 3
    # Changing only a restriction list changes the count for that store.
    async with db.transaction() as tx:
        await save(tx, KINDS["campaigns"], ACCOUNT, campaign(2, stores=["s1", "s2"]))
    assert await counts.count(db.reader, in_store) == 3
    # Even a write that bypasses the service (triggers keep the version).
    async with db.transaction() as tx:
        await tx.execute("DELETE FROM campaigns WHERE id = ?", (campaign(3)["id"],))
    assert await counts.count(db.reader, everything) == 2
    assert await counts.count(db.reader, everything) == await count_campaigns(db.reader, everything)


async def test_old_entries_are_dropped(db: Database) -> None:
    counts = CampaignCounts(size=2)
    for store in ("a", "b", "c"):
        await counts.count(db.reader, CampaignQuery(ACCOUNT, BEFORE, store_id=store))
    assert len(counts) == 2
