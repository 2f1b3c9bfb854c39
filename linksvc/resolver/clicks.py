"""Click recording off the request path: the handler appends to a buffer; a background task writes the
buffer in one transaction every ``interval`` seconds or as soon as ``batch`` clicks wait, and once more
when the service stops, so a clean shutdown loses no click.

A failed write (a locked or full disk) keeps the clicks in the buffer for the next try and logs the
error; the buffer is bounded, beyond which the oldest clicks are dropped and counted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Sequence
from typing import Any

from storage import clicks as repo
from storage.db import Database

log = logging.getLogger("linksvc.clicks")


class ClickRecorder:
    def __init__(self, db: Database, batch: int = 500, interval: float = 0.5, limit: int = 1_000_000) -> None:
        self.db = db
        self.batch = batch
        self.interval = interval
        self._buffer: deque[Sequence[Any]] = deque(maxlen=limit)
        self._wake = asyncio.Event()
        self._writing = asyncio.Lock()  # one write at a time, or two could take the same clicks
        self._task: asyncio.Task[None] | None = None
        self.written = 0
        self.dropped = 0

    def record(self, row: Sequence[Any]) -> None:
        if len(self._buffer) == self._buffer.maxlen:
            self.dropped += 1
        self._buffer.append(row)
        if len(self._buffer) >= self.batch:
            self._wake.set()

    @property
    def pending(self) -> int:
        return len(self._buffer)

    async def flush(self) -> int:
        """Write what waits; returns how many clicks were written."""
        async with self._writing:
            rows = list(self._buffer)
            if not rows:
                return 0
            async with self.db.transaction() as tx:
                await repo.insert_clicks(tx, rows)
            for _ in rows:
                self._buffer.popleft()
            self.written += len(rows)
            return len(rows)

    async def _run(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.interval)
            self._wake.clear()
            try:
                await self.flush()
            except Exception:  # the clicks stay buffered for the next try
                log.exception("writing %d clicks failed; will retry", self.pending)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.flush()
