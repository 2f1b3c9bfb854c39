"""The one write queue (``storage/writer.py``): units group committed, sessions alone, nothing answered before
it is committed, what waits committed at close."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from storage.db import Database, Tx, execute, fetch_all, fetch_one
from storage.writer import ProcessLock


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = Database(str(tmp_path / "w.db"), "NORMAL")
    await database.open()
    async with database.transaction() as tx:
        await execute(tx, "CREATE TABLE scratch (id INTEGER PRIMARY KEY AUTOINCREMENT, label TEXT UNIQUE)")
    try:
        yield database
    finally:
        await database.close()


async def labels(db: Database) -> list[str]:
    return [row["label"] for row in await fetch_all(db.reader, "SELECT label FROM scratch ORDER BY id")]


def insert(label: str) -> Any:
    async def unit(tx: Tx) -> str:
        await execute(tx, "INSERT INTO scratch (label) VALUES (?)", (label,))
        return label
    return unit


class Held:
    """A session holding the writer until ``release``: whatever is queued meanwhile waits behind it."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.holding = asyncio.Event()
        self.release = asyncio.Event()
        self.task = asyncio.create_task(self._hold())

    async def _hold(self) -> None:
        async with self.db.transaction():
            self.holding.set()
            await self.release.wait()

    async def __aenter__(self) -> Held:
        await self.holding.wait()
        return self

    async def __aexit__(self, *_: object) -> None:
        self.release.set()
        await self.task


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_units_that_wait_together_are_one_transaction(db: Database) -> None:
    groups, units = db.writer.groups, db.writer.units
    async with Held(db):
        tasks = [asyncio.create_task(db.write(insert(f"u{n}"))) for n in range(50)]
        await settle()
    assert await asyncio.gather(*tasks) == [f"u{n}" for n in range(50)]
    assert (db.writer.groups - groups, db.writer.units - units) == (1, 50)
    assert await labels(db) == [f"u{n}" for n in range(50)]


async def test_a_group_is_at_most_max_units(db: Database) -> None:
    db.writer.max_units = 4
    groups = db.writer.groups
    async with Held(db):
        tasks = [asyncio.create_task(db.write(insert(f"u{n}"))) for n in range(10)]
        await settle()
    await asyncio.gather(*tasks)
    assert db.writer.groups - groups == 3


async def test_a_unit_that_raises_is_rolled_back_alone(db: Database) -> None:
    async def fails(tx: Tx) -> None:
        await execute(tx, "INSERT INTO scratch (label) VALUES ('b')")
        raise ValueError("no")

    async def suspends(tx: Tx) -> None:
        await execute(tx, "INSERT INTO scratch (label) VALUES ('c')")
        await asyncio.sleep(0)  # a unit may wait for nothing: it is refused, alone

    async def breaks_a_constraint(tx: Tx) -> None:
        await execute(tx, "INSERT INTO scratch (label) VALUES ('d')")
        await execute(tx, "INSERT INTO scratch (label) VALUES ('a')")  # taken: its rows' fault, not the store's

    groups = db.writer.groups
    async with Held(db):
        tasks = [asyncio.create_task(db.write(unit))
                 for unit in (insert("a"), fails, suspends, breaks_a_constraint, insert("e"))]
        await settle()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert results[0] == "a" and results[4] == "e"
    assert isinstance(results[1], ValueError)
    assert isinstance(results[2], RuntimeError)
    assert isinstance(results[3], sqlite3.IntegrityError)
    assert db.writer.groups - groups == 1
    assert await labels(db) == ["a", "e"]


async def test_a_failure_of_the_store_fails_the_whole_group(db: Database) -> None:
    async def broken(tx: Tx) -> None:
        await execute(tx, "INSERT INTO nowhere (x) VALUES (1)")

    groups = db.writer.groups
    async with Held(db):
        tasks = [asyncio.create_task(db.write(unit)) for unit in (insert("a"), broken, insert("c"))]
        await settle()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert all(isinstance(r, sqlite3.OperationalError) for r in results), results
    assert db.writer.groups == groups  # nothing committed, nothing counted
    assert await labels(db) == []
    assert await db.write(insert("after")) == "after"  # the writer goes on
    assert await labels(db) == ["after"]


async def test_a_full_disk_answers_no_unit_of_the_group_as_stored(db: Database) -> None:
    async with db.transaction() as tx:
        row = await fetch_one(tx, "PRAGMA page_count")
        assert row is not None
        await execute(tx, f"PRAGMA max_page_count = {row[0]}")  # the file may not grow: a full disk
    big = "x" * 100_000
    results = await asyncio.gather(*(db.write(insert(f"{n}{big}")) for n in range(3)), return_exceptions=True)
    assert all(isinstance(r, sqlite3.OperationalError) and "full" in str(r) for r in results), results
    assert await labels(db) == []


async def test_sessions_and_units_take_turns_and_never_write_at_once(db: Database) -> None:
    inside = 0  # sessions between their BEGIN and their end
    seen: list[int] = []

    async def session(n: int) -> None:
        nonlocal inside
        async with db.transaction() as tx:
            seen.append(inside)
            inside += 1
            await execute(tx, "INSERT INTO scratch (label) VALUES (?)", (f"s{n}a",))
            await asyncio.sleep(0.001)  # the event loop serves the others meanwhile
            await execute(tx, "INSERT INTO scratch (label) VALUES (?)", (f"s{n}b",))
            inside -= 1

    def unit(n: int) -> Any:
        async def run(tx: Tx) -> None:
            seen.append(inside)  # on the writer's thread: no session may be open now
            await execute(tx, "INSERT INTO scratch (label) VALUES (?)", (f"u{n}",))
        return run

    await asyncio.gather(*(session(n) if n % 3 == 0 else db.write(unit(n)) for n in range(60)))
    assert set(seen) == {0}
    stored = await labels(db)
    assert len(stored) == 20 * 2 + 40
    for n in range(0, 60, 3):  # a session's two rows are next to each other: nothing came between
        assert stored.index(f"s{n}b") == stored.index(f"s{n}a") + 1
    assert db.writer.sessions >= 20


async def test_a_session_rolls_back_on_an_exception(db: Database) -> None:
    with pytest.raises(ValueError):
        async with db.transaction() as tx:
            await execute(tx, "INSERT INTO scratch (label) VALUES ('gone')")
            raise ValueError("no")
    assert await labels(db) == []
    with pytest.raises(RuntimeError, match="over"):
        await execute(tx, "INSERT INTO scratch (label) VALUES ('late')")  # the session's connection is spent


async def test_a_session_cancelled_while_waiting_its_turn_is_skipped(db: Database) -> None:
    entered = asyncio.Event()

    async def never_runs() -> None:
        async with db.transaction() as tx:
            entered.set()
            await execute(tx, "INSERT INTO scratch (label) VALUES ('never')")

    async with Held(db):
        waiting = asyncio.create_task(never_runs())
        unit = asyncio.create_task(db.write(insert("after")))
        await settle()
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
    assert await unit == "after"
    assert not entered.is_set()
    assert await labels(db) == ["after"]


async def test_a_session_cancelled_in_its_body_is_rolled_back(db: Database) -> None:
    inserted = asyncio.Event()

    async def body() -> None:
        async with db.transaction() as tx:
            await execute(tx, "INSERT INTO scratch (label) VALUES ('gone')")
            inserted.set()
            await asyncio.Event().wait()

    task = asyncio.create_task(body())
    await inserted.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await db.write(insert("next")) == "next"
    assert await labels(db) == ["next"]


async def test_close_commits_what_waits(tmp_path: Path) -> None:
    path = str(tmp_path / "c.db")
    db = Database(path, "NORMAL")
    await db.open()
    async with db.transaction() as tx:
        await execute(tx, "CREATE TABLE scratch (id INTEGER PRIMARY KEY AUTOINCREMENT, label TEXT UNIQUE)")
    held = Held(db)
    await held.holding.wait()
    units = [asyncio.create_task(db.write(insert(f"u{n}"))) for n in range(5)]
    await settle()
    closing = asyncio.create_task(db.close())
    await settle()
    assert not closing.done()  # the close waits for the session, then the units
    held.release.set()
    await closing
    assert await asyncio.gather(*units) == [f"u{n}" for n in range(5)]
    with pytest.raises(RuntimeError):
        await db.write(insert("closed"))
    with sqlite3.connect(path) as conn:
        assert [r[0] for r in conn.execute("SELECT label FROM scratch ORDER BY id")] == [f"u{n}" for n in range(5)]


async def test_an_in_memory_database_is_read_by_its_readers() -> None:
    db = Database(":memory:")
    await db.open()
    try:
        async with db.transaction() as tx:
            await execute(tx, "CREATE TABLE scratch (label TEXT)")
            await execute(tx, "INSERT INTO scratch VALUES ('in')")
        await db.write(insert_plain("unit"))
        assert [r[0] for r in await fetch_all(db.reader, "SELECT label FROM scratch ORDER BY rowid")] == ["in", "unit"]
        assert [r[0] for r in await fetch_all(db.background, "SELECT label FROM scratch ORDER BY rowid")] == [
            "in", "unit"]
        other = Database(":memory:")  # another in-memory database is another database
        await other.open()
        try:
            assert await fetch_one(other.reader, "SELECT name FROM sqlite_master WHERE name = 'scratch'") is None
        finally:
            await other.close()
    finally:
        await db.close()


def insert_plain(label: str) -> Any:
    async def unit(tx: Tx) -> None:
        await execute(tx, "INSERT INTO scratch VALUES (?)", (label,))
    return unit


async def test_a_session_cancelled_during_its_begin_leaves_no_transaction_open(db: Database) -> None:
    """Another connection holds the lock, so BEGIN IMMEDIATE waits on the writer's thread when the cancel comes:
    it begins later all the same, and the rollback queued after it ends that transaction."""
    holder = sqlite3.connect(db.path, isolation_level=None, timeout=0)
    holder.execute("BEGIN IMMEDIATE")
    try:
        sessions = db.writer.sessions

        async def body() -> None:
            async with db.transaction() as tx:
                await execute(tx, "INSERT INTO scratch (label) VALUES ('never')")

        task = asyncio.create_task(body())
        await asyncio.sleep(0.2)
        assert db.writer.sessions == sessions + 1  # it has its turn: BEGIN runs, waiting for the lock
        task.cancel()
        await asyncio.sleep(0.05)
    finally:
        holder.execute("ROLLBACK")  # the lock is free: the cancelled BEGIN begins now
        holder.close()
    with pytest.raises(asyncio.CancelledError):
        await task
    async with db.transaction() as tx:
        await execute(tx, "INSERT INTO scratch (label) VALUES ('later')")
    assert await db.write(insert("unit")) == "unit"
    assert await labels(db) == ["later", "unit"]


async def test_a_unit_cancelled_before_its_group_is_not_run(db: Database) -> None:
    async with Held(db):
        cancelled = asyncio.create_task(db.write(insert("cancelled")))
        kept = asyncio.create_task(db.write(insert("kept")))
        await settle()
        cancelled.cancel()
    assert await kept == "kept"
    assert cancelled.cancelled()
    assert await labels(db) == ["kept"]


def test_the_processes_take_turns_through_the_write_lock(tmp_path: Path) -> None:
    """Two holders of ``<db>-write.lock`` (two workers): one at a time; one that cannot have it in time goes on
    without it (SQLite's own lock then decides), and has it once it is free."""
    one, other = ProcessLock(str(tmp_path / "svc.db-write.lock")), ProcessLock(str(tmp_path / "svc.db-write.lock"))
    try:
        one.acquire()
        other.acquire(wait_s=0.01)
        assert (one._held, other._held) == (True, False)
        one.release()
        other.acquire()
        assert (one._held, other._held) == (False, True)
        one.acquire(wait_s=0.01)
        assert not one._held
    finally:
        one.close()
        other.close()
