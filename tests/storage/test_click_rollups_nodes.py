"""The clicks' rollup pass on several PostgreSQL nodes (issue 33): ids are handed out in one order and committed in
another, so a pass must not move its mark past a click still being written; and passes of several nodes at
once count each click once. Two ``PostgresDatabase`` objects, as two processes have.

Runs only with ``LINKSVC_TEST_DATABASE_URL`` (tests/pgstore.py); on SQLite the one writer commits ids in order
(tests/storage/test_click_rollups_per_batch.py)."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from linksvc.reports.rollups import count_clicks
from linksvc.seed import load_seed
from storage import clicks as click_repo
from storage.postgres import PostgresDatabase
from tests import pgstore
from tests.factories import two_accounts
from tests.storage.test_click_rollups_per_batch import _assert_counted, _clicks

pytestmark = pytest.mark.skipif(pgstore.admin_url() is None, reason="needs LINKSVC_TEST_DATABASE_URL")


@pytest.fixture
def url(pg_database: pgstore.TestDatabase | None) -> str:
    assert pg_database is not None
    pg_database.reset()
    return pg_database.url


@pytest.fixture
async def nodes(url: str, tmp_path: Path) -> AsyncIterator[tuple[PostgresDatabase, PostgresDatabase]]:
    first, second = PostgresDatabase(url, str(tmp_path / "a")), PostgresDatabase(url, str(tmp_path / "b"))
    await first.open()
    await second.open()
    await load_seed(first, two_accounts(), allow_private=True)
    yield first, second
    await first.close()
    await second.close()


async def test_a_pass_waits_for_clicks_committed_after_larger_ids(
        nodes: tuple[PostgresDatabase, PostgresDatabase]) -> None:
    first, second = nodes
    early, late = _clicks(300, seed=11), _clicks(200, seed=12)
    async with first.transaction() as tx:  # takes the smaller ids, and commits last
        await click_repo.insert_clicks(tx, early)
        await second.write(lambda tx: click_repo.insert_clicks(tx, late))  # larger ids, committed
        counting = asyncio.create_task(count_clicks(second))
        await asyncio.sleep(0.2)  # the pass starts meanwhile (and waits for this transaction)
    with contextlib.suppress(asyncpg.LockNotAvailableError):  # a machine so busy that it waited over a second
        await counting
    await count_clicks(first)
    await _assert_counted(second, early + late)


async def test_a_click_transaction_held_open_stops_neither_the_other_writers_nor_the_counts(
        nodes: tuple[PostgresDatabase, PostgresDatabase]) -> None:
    """The horizon gives up after a second (the pass is tried again later) rather than holding up every click
    writer behind a transaction that does not end; nothing it did not wait for is counted."""
    first, second = nodes
    early, late, more = _clicks(100, seed=21), _clicks(100, seed=22), _clicks(100, seed=23)
    async with first.transaction() as tx:
        await click_repo.insert_clicks(tx, early)
        await second.write(lambda tx: click_repo.insert_clicks(tx, late))
        with pytest.raises(asyncpg.LockNotAvailableError):
            await count_clicks(second)
        await second.write(lambda tx: click_repo.insert_clicks(tx, more))  # the writers go on
    assert await count_clicks(first) == len(early) + len(late) + len(more)
    await _assert_counted(second, early + late + more)


async def test_passes_of_two_nodes_while_both_write_count_each_click_once(
        nodes: tuple[PostgresDatabase, PostgresDatabase]) -> None:
    batches = [_clicks(random.Random(n).choice((1, 40, 300)), seed=100 + n) for n in range(24)]

    async def node(db: PostgresDatabase, mine: list[list[list[object]]]) -> None:
        for n, batch in enumerate(mine):
            await db.write(lambda tx, batch=batch: click_repo.insert_clicks(tx, batch))
            if n % 3 == 0:
                await count_clicks(db)

    first, second = nodes
    await asyncio.gather(node(first, batches[0::4]), node(second, batches[1::4]), node(first, batches[2::4]),
                         node(second, batches[3::4]), *(count_clicks(db) for db in (first, second, first)))
    await count_clicks(second)
    await _assert_counted(first, [row for batch in batches for row in batch])
