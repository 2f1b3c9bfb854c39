"""A unit of work cancelled while its BEGIN runs (a stop during a click batch) leaves no transaction open:
the next one begins and commits (before the fix: "cannot start a transaction within a transaction")."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from storage.db import Database, execute, fetch_one


async def test_a_cancelled_begin_leaves_no_transaction_open(tmp_path: Path) -> None:
    db = Database(str(tmp_path / "t.db"), "NORMAL")
    await db.open()
    try:
        started = asyncio.Event()

        async def unit() -> None:
            started.set()
            async with db.transaction() as tx:
                await execute(tx, "CREATE TABLE never (x)")

        task = asyncio.create_task(unit())
        await started.wait()  # the task now waits on BEGIN IMMEDIATE, running on the writer's thread
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        async with db.transaction() as tx:
            await execute(tx, "CREATE TABLE later (x)")
        row = await fetch_one(db.reader, "SELECT count(*) AS n FROM sqlite_master WHERE name IN ('never', 'later')")
        assert row is not None and row["n"] == 1
    finally:
        await db.close()
