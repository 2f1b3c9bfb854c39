"""Click recording off the request path: the handler appends to a buffer; a background task writes the
buffer in one transaction every ``interval`` seconds or as soon as ``batch`` clicks wait, and once more
when the service stops, so a clean shutdown loses no click.

A failed write (a locked or full disk) keeps the clicks in the buffer for the next try and logs the
error; the buffer is bounded, beyond which the oldest clicks are dropped and counted.

The request path only appends a tuple of what it already has (a :class:`Click`); turning it into the
stored row (the time as ISO text, the UTM fields as JSON) happens once per batch, at flush time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections import deque
from typing import Any, NamedTuple

from linksvc.clock import iso_from_timestamp
from linksvc.jsoncodec import dumps
from storage import clicks as repo
from storage.db import Database

log = logging.getLogger("linksvc.clicks")


class Click(NamedTuple):
    account_id: str
    link_id: str
    tracking_id: str
    clicked_at: float  # time.time()
    platform: str
    bot: bool
    answer: str
    user_agent: str
    referer: str
    utm: dict[str, str]


def stored_row(click: Click) -> tuple[Any, ...]:
    """The row of ``storage.clicks.COLUMNS``; long headers are cut, an empty referer is NULL."""
    return (
        click.account_id, click.link_id, click.tracking_id, iso_from_timestamp(click.clicked_at), click.platform,
        int(click.bot), click.answer, click.user_agent[:1000], click.referer[:2000] or None, dumps(click.utm),
        click.utm.get("utm_source"),
    )


class ClickRecorder:
    def __init__(self, db: Database, batch: int = 500, interval: float = 0.5, limit: int = 1_000_000) -> None:
        self.db = db
        self.batch = batch
        self.interval = interval
        self._buffer: deque[Click] = deque(maxlen=limit)
        self._wake = asyncio.Event()
        self._writing = asyncio.Lock()  # one write at a time, or two could take the same clicks
        self._task: asyncio.Task[None] | None = None
        self.written = 0
        self.dropped = 0

    def record(self, row: Click) -> None:
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
            clicks = list(self._buffer)
            if not clicks:
                return 0
            rows = [stored_row(click) for click in clicks]
            async with self.db.transaction() as tx:
                await repo.insert_clicks(tx, rows)
            for _ in rows:
                self._buffer.popleft()
            self.written += len(rows)
            return len(rows)

    async def flush_before_counting(self) -> None:
        """Writes what waits so that a count includes it. When the store refuses writes (locked, full) the
        clicks stay buffered and the count is of what is stored: a read never fails for want of a write."""
        try:
            await self.flush()
        except sqlite3.Error as exc:
            log.warning("counting without %d buffered clicks: %s", self.pending, exc)

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
