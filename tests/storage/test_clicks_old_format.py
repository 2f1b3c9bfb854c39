"""Journals and spill files written before clicks carried a visitor and UTM origins (ten-member click tuples)
still load at the next start: their clicks are stored with NULL visitor and utm_origin and counted in the
conversion rollups; new-format files load with both, on either store."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from linksvc.jsoncodec import loads
from linksvc.links import click_spill
from linksvc.links.click_journal import ClickJournal
from linksvc.links.clicks import ClickRecorder
from linksvc.reports.rollups import count_clicks
from linksvc.seed import load_seed
from linksvc.settings import Settings
from linksvc.store import store_of
from storage.db import fetch_all
from tests.factories import A, ids, two_accounts


def _old(n: int) -> list[object]:
    return [A, ids(A)["links"], f"old{n}", time.time() - n, "ios", False, "app_store", "Mozilla/5.0 (iPhone)", "",
            {"utm_source": "mail"}]


def _dead_journal(database: str, rows: list[list[object]]) -> Path:
    """A journal as a killed process leaves it: the records written, its lock gone with it."""
    journal = ClickJournal(database)
    for row in rows:
        journal.append(row)
    journal._map.close()  # the mapping holds a copy of the descriptor (and so the lock)
    os.close(journal._fd)
    return journal.path


async def test_old_journals_and_spill_files_load_with_null_visitor_and_origin(settings: Settings) -> None:
    db = store_of(settings)
    await db.open()
    try:
        await load_seed(db, two_accounts(), allow_private=True)
        new = _old(9)
        new[2] = "new9"
        new += ["00112233aabbccdd", {"utm_source": "query"}]
        click_spill.spill(db.path, [_old(1), _old(2), new])
        journal = _dead_journal(db.path, [_old(3), _old(4)])
        recorder = ClickRecorder(db, interval=3600)
        recorder.start()  # takes what earlier runs left, in the background, and writes it
        for _ in range(400):
            if recorder.written == 5:
                break
            await asyncio.sleep(0.05)
        await recorder.stop()
        assert not journal.exists()
        rows = await fetch_all(db.reader, "SELECT tracking_id, visitor, utm_origin, answer FROM clicks "
                                          "ORDER BY tracking_id")
        assert [(row[0], row[1], None if row[2] is None else loads(row[2]), row[3]) for row in rows] == [
            ("new9", "00112233aabbccdd", {"utm_source": "query"}, "app_store"),
            *[(f"old{n}", None, None, "app_store") for n in (1, 2, 3, 4)]]
        await count_clicks(db)  # the rollups' pass
        counted = await fetch_all(db.reader, "SELECT sum(human), sum(store), sum(visitors) FROM conversion_clicks "
                                             "WHERE account_id = ?", (A,))
        assert tuple(counted[0]) == (5, 5, 1)
        assert not list(Path(db.path).parent.glob(f"{Path(db.path).name}.clicks-*"))
    finally:
        await db.close()
