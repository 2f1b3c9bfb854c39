"""A stop that comes while the click writer is writing: each click is stored once.

The writer's commit runs on the database's thread; a stop that cancelled the writer there would leave the
commit done and the clicks still counted as waiting, so the stop's own write would store them again."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from linksvc.links.clicks import Click, ClickRecorder
from linksvc.seed import load_seed
from storage.db import Database, Tx, fetch_all
from tests.factories import A, ids, two_accounts

T = TypeVar("T")


class SlowAfterCommit(Database):
    """A store whose units of work, once committed, wait for ``release`` before returning to the caller."""

    def __init__(self, path: str) -> None:
        super().__init__(path, "NORMAL")
        self.committed = asyncio.Event()
        self.release = asyncio.Event()
        self.slow = False

    async def write(self, unit: Callable[[Tx], Coroutine[Any, Any, T]]) -> T:
        result = await super().write(unit)
        if self.slow:
            self.committed.set()
            await self.release.wait()
        return result


async def test_a_stop_during_a_write_stores_each_click_once(tmp_path: Path) -> None:
    db = SlowAfterCommit(str(tmp_path / "clicks.db"))
    await db.open()
    try:
        await load_seed(db, two_accounts(), allow_private=True)
        recorder = ClickRecorder(db, batch=5, interval=3600)
        recorder.start()
        db.slow = True
        for n in range(5):  # a full batch: the writer wakes and writes it
            recorder.record(Click(A, ids(A)["links"], f"t{n}", time.time(), "desktop", False, "destination",
                                  "UA", "", {}))
        await asyncio.wait_for(db.committed.wait(), 30)  # the batch is committed, the writer not back yet
        stopping = asyncio.create_task(recorder.stop())
        for _ in range(3):  # the stop begins while the write is still in progress
            await asyncio.sleep(0)
        db.release.set()
        await asyncio.wait_for(stopping, 30)
        rows = await fetch_all(db.reader, "SELECT tracking_id FROM clicks ORDER BY id")
        assert [row[0] for row in rows] == [f"t{n}" for n in range(5)]
        assert recorder.pending == 0
    finally:
        await db.close()
