"""Group commit: many concurrent requests' writes in one transaction, each durable before its answer.

An accepted event must be on disk before the 202, and a commit with ``synchronous=FULL`` waits for the
disk. One commit per event would cap ingest at the disk's sync rate, so requests queue their unit of work
here; one task takes everything waiting, runs each unit inside its own savepoint of one transaction (a unit
that raises is rolled back alone and gets its exception), commits once, and only then answers every
request. A failed commit fails every unit of the group: nothing is answered as accepted that is not stored.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from storage.db import Database, Tx, savepoint

log = logging.getLogger("linksvc.events")
T = TypeVar("T")
Unit = Callable[[Tx], Awaitable[Any]]


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

    async def run(self, unit: Callable[[Tx], Awaitable[T]]) -> T:
        """Runs ``unit`` inside the next group's transaction; returns its result once committed."""
        if self._task is None or self._stopping:
            raise RuntimeError("the group committer is not running")
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._queue.append((unit, future))
        self._wake.set()
        return await future

    async def _commit_group(self, group: list[tuple[Unit, asyncio.Future[Any]]]) -> None:
        outcomes: list[tuple[bool, Any]] = []
        try:
            async with self.db.transaction() as tx:
                for index, (unit, _) in enumerate(group):
                    try:
                        async with savepoint(tx, f"unit_{index}"):
                            outcomes.append((True, await unit(tx)))
                    except sqlite3.Error:  # the store itself failed (a full disk...): the whole group fails
                        raise
                    except Exception as exc:  # this unit alone is rolled back
                        outcomes.append((False, exc))
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
