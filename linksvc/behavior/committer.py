"""Group commit: many concurrent requests' writes in one transaction, each durable before its answer.

An accepted event must be on disk before the 202, and a commit with ``synchronous=FULL`` waits for the
disk. One commit per event would cap ingest at the disk's sync rate, so requests queue their unit of work
here; one task takes everything waiting, runs each unit inside its own savepoint of one transaction (a unit
that raises is rolled back alone and gets its exception), commits once, and only then answers every
request. A failed commit fails every unit of the group: nothing is answered as accepted that is not stored.

The group runs on the writer connection's own thread (``Database.run_in_writer``): the units are the usual
async service code, whose repository calls on a plain sqlite3 connection never suspend, so each unit runs
to its end there (``run_sync``) and a whole group costs one thread hop instead of one per statement.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from storage.db import Database, Tx, run_sync

log = logging.getLogger("linksvc.events")
T = TypeVar("T")
Unit = Callable[[Tx], Coroutine[Any, Any, Any]]


class GroupCommitter:
    def __init__(self, db: Database, max_units: int = 2000) -> None:
        self.db = db
        self.max_units = max_units
        self._queue: list[tuple[Unit, asyncio.Future[Any]]] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self.groups = 0
        self.units = 0

    async def run(self, unit: Callable[[Tx], Coroutine[Any, Any, T]]) -> T:
        """Runs ``unit`` inside the next group's transaction; returns its result once committed."""
        if self._task is None or self._stopping:
            raise RuntimeError("the group committer is not running")
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._queue.append((unit, future))
        self._wake.set()
        return await future

    @staticmethod
    def _run_group(conn: sqlite3.Connection, units: list[Unit]) -> list[tuple[bool, Any]]:
        """On the writer's thread: one transaction, a savepoint per unit, one commit."""
        outcomes: list[tuple[bool, Any]] = []
        conn.execute("BEGIN IMMEDIATE")
        try:
            for index, unit in enumerate(units):
                conn.execute(f"SAVEPOINT unit_{index}")
                try:
                    result: Any = run_sync(unit(conn))
                except sqlite3.Error:  # the store itself failed (a full disk...): the whole group fails
                    raise
                except Exception as exc:  # this unit alone is rolled back
                    try:
                        conn.execute(f"ROLLBACK TO unit_{index}")
                        conn.execute(f"RELEASE unit_{index}")
                    except sqlite3.OperationalError:  # SQLite already rolled everything back
                        raise exc from None
                    outcomes.append((False, exc))
                    continue
                conn.execute(f"RELEASE unit_{index}")
                outcomes.append((True, result))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return outcomes

    async def _commit_group(self, group: list[tuple[Unit, asyncio.Future[Any]]]) -> None:
        units = [unit for unit, _ in group]
        try:
            outcomes = await self.db.run_in_writer(lambda conn: self._run_group(conn, units))
        except Exception as exc:  # the commit failed: nothing of the group is stored
            log.exception("a group of %d writes failed to commit", len(group))
            for _, future in group:
                if not future.done():
                    future.set_exception(exc)
            return
        self.groups += 1
        self.units += len(group)
        for (ok, value), (_, future) in zip(outcomes, group, strict=True):
            if future.done():  # the request went away meanwhile; its write is stored all the same
                continue
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)

    async def _loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._queue:
                group, self._queue = self._queue[:self.max_units], self._queue[self.max_units:]
                await self._commit_group(group)
            if self._stopping:
                return

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        """Commits what waits, then stops."""
        if self._task is None:
            return
        self._stopping = True
        self._wake.set()
        await self._task
        self._task = None
