"""Work a process does in the background every few seconds, from the store's opening to its closing: the
clicks' rollup pass (:class:`linksvc.reports.rollups.ClickRollups`), the compaction of click counts
(:class:`linksvc.links.limits.CountCompaction`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from linksvc.store import StoreError


class Periodic:
    """Runs :meth:`turn` every ``interval`` seconds between :meth:`start` and :meth:`stop`. A turn the store
    refuses (busy, full) is logged as a warning, anything else with its traceback, and the next turn tries
    again; :meth:`stop` lets a turn under way finish (its transaction commits or is rolled back whole)."""

    what = "background work"  # what a turn does, for the log: "counting ...", "compacting ..."

    def __init__(self, interval: float, log: logging.Logger) -> None:
        self.interval = interval
        self._log = log
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def turn(self) -> None:
        raise NotImplementedError

    async def _run(self) -> None:
        while not self._stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self.interval)
            if self._stopping.is_set():
                return
            try:
                await self.turn()
            except StoreError as exc:  # busy or full: what was not done waits for the next turn
                self._log.warning("%s failed; will retry: %s", self.what, exc)
            except Exception:
                self._log.exception("%s failed; will retry", self.what)

    def start(self) -> None:
        self._stopping.clear()
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is None:
            return
        self._stopping.set()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None
