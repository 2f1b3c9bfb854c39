"""The compaction of ``link_human_clicks`` (the counts ``max_clicks`` is held against): each link's rows are summed
into one, every link's count is the same before and after, and a worker's held counts (its stored count as read
plus the clicks it has not written yet) stay what they were. On PostgreSQL, a click batch held open on another
node while the compaction runs is neither waited for nor lost, and two nodes compacting at once count nothing
twice."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from linksvc.links.limits import ClickLimits, compact_counts
from linksvc.settings import Settings
from linksvc.store import store_of
from storage import clicks as click_repo
from storage.db import AnyDatabase, fetch_all
from storage.postgres import PostgresDatabase
from tests import pgstore
from tests.storage.test_click_rollups_per_batch import _clicks

LINKS = tuple(f"link-{n}" for n in range(6))


def _people(rows: list[list[Any]]) -> Counter[str]:
    return Counter(row[1] for row in rows if not row[5])


async def _rows_per_link(db: AnyDatabase) -> dict[str, int]:
    found = await fetch_all(db.reader, "SELECT link_id, count(*) FROM link_human_clicks GROUP BY link_id")
    return {str(row[0]): int(row[1]) for row in found}


async def _write_in_batches(db: AnyDatabase, rows: list[list[Any]], seed: int) -> None:
    draw = random.Random(seed)
    start = 0
    while start < len(rows):  # batches of uneven sizes, as the click writer's are
        size = draw.choice((1, 3, 17, 40))
        batch = rows[start:start + size]
        await db.write(lambda tx, batch=batch: click_repo.insert_clicks(tx, batch))
        start += size


async def test_compaction_keeps_every_count_and_leaves_one_row_per_link(settings: Settings) -> None:
    db = store_of(settings)
    await db.open()
    try:
        rows = _clicks(600, seed=5, links=LINKS)
        await _write_in_batches(db, rows, seed=5)
        people = _people(rows)
        before = await _rows_per_link(db)
        assert all(before[link] > 1 for link in people)  # a row per batch that had a person's click on the link
        limits = ClickLimits(db)  # a worker's held counts: some clicks it took are not written yet
        await limits.load(LINKS)
        for _ in range(3):
            limits.took("link-0")
        held = {link: limits.count_of(link) for link in LINKS}
        assert held["link-0"] == people["link-0"] + 3

        done = await compact_counts(db, links=2)  # three transactions of two links, then one that finds none

        assert (done.links, done.rows_removed) == (len(people), sum(before.values()) - len(people))
        assert await _rows_per_link(db) == dict.fromkeys(people, 1)
        assert await click_repo.human_clicks_of_links(db.reader, list(LINKS)) == {link: people[link] for link in LINKS}
        await limits.refresh()
        assert {link: limits.count_of(link) for link in LINKS} == held
        # Clicks written after a compaction add rows again; a second compaction sums them with the first's row.
        more = _clicks(100, seed=6, links=LINKS)
        await _write_in_batches(db, more, seed=6)
        await compact_counts(db)
        assert await _rows_per_link(db) == dict.fromkeys(people + _people(more), 1)
        assert await click_repo.human_clicks_of_links(db.reader, list(LINKS)) == {
            link: (people + _people(more))[link] for link in LINKS}
        assert (await compact_counts(db)).links == 0  # nothing left to do
    finally:
        await db.close()


@pytest.fixture
def url(pg_database: pgstore.TestDatabase | None) -> str:
    assert pg_database is not None
    pg_database.reset()
    return pg_database.url


@pytest.mark.skipif(pgstore.admin_url() is None, reason="needs LINKSVC_TEST_DATABASE_URL")
async def test_two_nodes_compact_while_a_click_batch_is_held_open(url: str, tmp_path: Path) -> None:
    first = PostgresDatabase(url, str(tmp_path / "a"))
    second = PostgresDatabase(url, str(tmp_path / "b"))
    third = PostgresDatabase(url, str(tmp_path / "c"))
    for node in (first, second, third):
        await node.open()
    try:
        stored = _clicks(400, seed=7, links=LINKS)
        await _write_in_batches(second, stored, seed=7)
        held_open = _clicks(50, seed=8, links=LINKS)
        async with first.transaction() as tx:  # a click batch of node one, not committed yet
            await click_repo.insert_clicks(tx, held_open)
            # Two other nodes compact at once (in turns) meanwhile; neither waits for the open batch, nor counts it.
            await asyncio.wait_for(asyncio.gather(compact_counts(second), compact_counts(third)), 30)
            assert await click_repo.human_clicks_of_links(second.reader, list(LINKS)) == {
                link: _people(stored)[link] for link in LINKS}
        everything = _people(stored + held_open)
        assert await click_repo.human_clicks_of_links(second.reader, list(LINKS)) == {
            link: everything[link] for link in LINKS}
        await compact_counts(second)
        assert await _rows_per_link(second) == dict.fromkeys(everything, 1)
        assert await click_repo.human_clicks_of_links(first.reader, list(LINKS)) == {
            link: everything[link] for link in LINKS}
    finally:
        for node in (first, second, third):
            await node.close()
