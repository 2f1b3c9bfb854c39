"""The exports run together: :func:`export_all` (the events of :mod:`linksvc.forwarding.export`, then the clicks of
:mod:`linksvc.forwarding.click_export`, into one result), the service's periodic :class:`ExportJob` and ``linksvc
export`` (:func:`run_export`). Apart from the two exports, which it uses, so that the clicks export may build on the
events export's targets and sinks without the two importing each other."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Collection
from datetime import datetime

from linksvc.clock import utcnow
from linksvc.forwarding.click_export import export_clicks
from linksvc.forwarding.export import EXPORTS, ExportResult, ExportTarget, export_events
from linksvc.progress import Progress
from storage.db import AnyDatabase, open_store

log = logging.getLogger("linksvc.export")

__all__ = ["EXPORTS", "ExportJob", "export_all", "run_export"]


async def export_all(db: AnyDatabase, target: ExportTarget, now: datetime, what: Collection[str] = ("events",),
                     batch: int = 10_000, progress: Progress | None = None) -> ExportResult:
    """The exports ``what`` names (of :data:`EXPORTS`), events first, into one result."""
    result = ExportResult()
    if "events" in what:
        result = result.add(await export_events(db, target, now, batch, progress=progress))
    if "clicks" in what:
        result = result.add(await export_clicks(db, target, now, batch, progress=progress))
    return result


class ExportJob:
    """Exports every ``interval`` seconds, from the start; one export at a time. A failed run is logged and
    the next run takes the work up again. ``what``: the events, and the clicks when the settings say so."""

    def __init__(self, db: AnyDatabase, target: ExportTarget, interval: float = 300.0, batch: int = 10_000,
                 what: Collection[str] = ("events",)) -> None:
        self.db = db
        self.target = target
        self.interval = interval
        self.batch = batch
        self.what = tuple(what)
        self._lock = asyncio.Lock()
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def run_once(self) -> ExportResult:
        """One export now (also on demand), after the one in progress if any."""
        async with self._lock:
            return await export_all(self.db, self.target, utcnow(), self.what, self.batch)

    async def _loop(self) -> None:
        while not self._stopping.is_set():
            try:
                await self.run_once()
            except Exception:
                log.exception("export to %s failed; will retry in %s s", self.target.shown, self.interval)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self.interval)

    def start(self) -> None:
        self._stopping.clear()
        self._task = asyncio.create_task(self._loop())

    async def stop(self, grace: float = 10.0) -> None:
        """Lets a running export finish (up to ``grace`` seconds, then cancels it: the next run redoes it)."""
        if self._task is None:
            return
        self._stopping.set()
        try:
            await asyncio.wait_for(asyncio.shield(self._task), grace)
        except TimeoutError:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._task = None


async def run_export(db_path: str, target: ExportTarget, batch: int = 10_000,
                     synchronous: str = "FULL", progress: Progress | None = None,
                     database_url: str | None = None, what: Collection[str] = ("events",)) -> ExportResult:
    """``linksvc export``: one export of the database at ``db_path`` to ``target`` (``what``: of
    :data:`EXPORTS`); ``progress`` shows the migrations of an older database and the events and clicks written."""
    db = open_store(db_path, database_url, synchronous)
    await db.open(progress)
    try:
        return await export_all(db, target, utcnow(), what, batch, progress=progress)
    finally:
        await db.close()
