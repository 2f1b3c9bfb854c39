"""Click recording off the request path: the handler appends to a buffer; a background task writes the
buffer in one transaction every ``interval`` seconds or as soon as ``batch`` clicks wait, and once more
when the service stops, so a clean shutdown loses no click.

The batch is a unit of the store's write queue (``AnyDatabase.write``), group committed with whatever else
waits to be written. A failed write (a locked or full disk) keeps the clicks in the buffer for the next try
and logs the error; the buffer is bounded, beyond which the oldest clicks are dropped and counted.

Header values come from the open internet: they are made valid text before they are stored
(:func:`linksvc.untrusted.safe_text`). Should a batch still fail for any other reason than the store, it is
split in halves and each half written on its own, down to the one click that fails alone: that click goes
to the dead-letter table with the reason, and every other click of the batch is stored. One bad row can
never block the recording of the others.

A clean stop writes what waits; should the store refuse it then, the clicks go to a spill file beside the
database that the next start writes (:mod:`linksvc.links.click_spill`): nothing buffered is lost. A process
killed outright loses nothing either: every buffered click is also in a journal mapped into memory
(:mod:`linksvc.links.click_journal`), which the next start writes.

The request path only appends a tuple of what it already has (a :class:`Click`); turning it into the
stored row (the time as ISO text, the UTM fields as JSON) happens once per batch, at flush time. So does
the full parse of the user agent (browser, OS, device: :mod:`linksvc.links.click_details`), in a
worker thread and through a cache, never on the request; a spilled or dead-lettered click is the same
tuple, and its details are parsed again when it is written.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Collection
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from linksvc.clock import iso, iso_from_timestamp, utcnow
from linksvc.jsoncodec import dumps
from linksvc.links import click_journal, click_spill
from linksvc.links.click_details import NO_DETAILS, ClickDetails, DetailsCache, stored_user_agent
from linksvc.links.limits import ClickLimits
from linksvc.links.visitors import Visitors
from linksvc.rules.geo import Geo
from linksvc.untrusted import safe_text
from storage import clicks as repo
from storage import dead_letters
from storage.db import AnyDatabase, StoreError, StoreOperationalError

log = logging.getLogger("linksvc.clicks")
SLICE = 50
"""Clicks prepared for the store between two turns of the event loop: a flush of a second's clicks at full
speed is thousands of rows of Python work, done on the loop in slices of a few milliseconds at most so that no
redirect waits behind the whole batch (docs/decisions.md, "Rollups behind a mark")."""
ADOPT_SECONDS = 5.0  # how often a worker looks for clicks a dead process left



# PostgreSQL's classes of errors that a row can cause: data exceptions (a value the column cannot take) and
# integrity constraints. Any other error the server reports (a lock not granted in time, a read-only
# server after a failover, a disk full, a connection lost) is the store's, as SQLite's OperationalError is.
_ROW_ERROR_CLASSES = ("22", "23")


def refused_by_the_store(exc: Exception) -> bool:
    """Whether PostgreSQL refused the write for a reason of its own, not because of the rows."""
    state = getattr(exc, "sqlstate", None)
    return isinstance(state, str) and state[:2] not in _ROW_ERROR_CLASSES

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
    # Added with the conversion report; clicks of journals and spill files written before have neither (None).
    visitor: str | None = None  # linksvc.links.visitors: a daily salted hash of the address and user agent
    utm_origin: dict[str, str] | None = None  # UTM field -> the source it came from (linksvc.links.utm)
    # Added with smart links (issue 34): where the client is (never its address) and the rule that matched.
    country: str | None = None  # ISO 3166-1 alpha-2 (linksvc.rules.geo)
    region: str | None = None  # ISO 3166-2, with LINKSVC_GEO_MMDB
    city: str | None = None  # with LINKSVC_GEO_MMDB
    rule: str | None = None  # the name of the link's rule that picked the target; None: no rule matched
    # Issue 34: the variant of the link's A/B split the click was sent to (linksvc.links.variants), None without.
    variant: str | None = None


OLD_FIELDS = 10  # a click tuple as journals and spill files held it before visitor and utm_origin (12 after them)


def stored_row(click: Click, details: ClickDetails = NO_DETAILS) -> tuple[Any, ...]:
    """The row of ``storage.clicks.COLUMNS``; headers made valid text and cut, an empty referer is NULL,
    then the user agent's details (NULL where unknown), the visitor and the UTM origins (NULL for a click
    recorded before they were), then its country, region, city and rule (NULL where unknown or none),
    then the variant (NULL for a link without an A/B split) and the referer's host
    (:func:`storage.clicks.referrer_host`)."""
    utm = {key: safe_text(value, 1000) for key, value in click.utm.items()}
    referer = safe_text(click.referer, 2000) or None
    return (
        click.account_id, click.link_id, safe_text(click.tracking_id, 200), iso_from_timestamp(click.clicked_at),
        click.platform, int(click.bot), click.answer, stored_user_agent(click.user_agent),
        referer, dumps(utm), utm.get("utm_source"), *details,
        click.visitor if isinstance(click.visitor, str) else None,
        dumps(click.utm_origin) if isinstance(click.utm_origin, dict) else None,
        _short(click.country, 2), _short(click.region, 6), _short(click.city, 200), _short(click.rule, 64),
        _short(click.variant, 64), repo.referrer_host(referer),
    )


def _short(value: Any, limit: int) -> str | None:
    """A text field of a click as stored: None for anything but text (a click of an older journal), cut."""
    return safe_text(value, limit) or None if isinstance(value, str) else None


async def _in_slices(clicks: list[Click], make: Any) -> list[Any]:
    """``[make(click) for click in clicks]``, letting the event loop run between slices of :data:`SLICE`."""
    made: list[Any] = []
    for start in range(0, len(clicks), SLICE):
        if start:
            await asyncio.sleep(0)
        made += map(make, clicks[start:start + SLICE])
    return made


def _agent(click: Click) -> str:
    # a click from a spill file or a buggy caller may hold anything: it gets no details, not an error
    return stored_user_agent(click.user_agent) if isinstance(click.user_agent, str) else ""


def dead_letter_payload(click: Click) -> str:
    """The click as JSON whatever it holds: every text value made safe (the reason says what was wrong)."""
    fields = {name: safe_text(value, 2000) if isinstance(value, str) else value
              for name, value in click._asdict().items() if name != "utm"}
    fields["utm"] = {safe_text(str(k), 100): safe_text(str(v), 1000) for k, v in click.utm.items()}
    return dumps(fields)


class ClickRecorder:
    def __init__(self, db: AnyDatabase, batch: int = 500, interval: float = 0.5, limit: int = 1_000_000,
                 details: DetailsCache | None = None, visitors: Visitors | None = None, geo: Geo | None = None
                 ) -> None:
        self.db = db
        self.visitors = visitors if visitors is not None else Visitors()  # the request path hashes with it
        self.limits = ClickLimits(db)  # the clicks by people of links with a max_clicks (linksvc.links.limits)
        self.geo = geo if geo is not None else Geo()  # and places its clients with it (linksvc.rules.geo)
        self.details = details if details is not None else DetailsCache()
        self._spilled: list[Path] = []  # files of an earlier run whose clicks head the buffer
        self._spilled_left = 0
        self._journal: click_journal.ClickJournal | None = None  # between start and stop, for a database file
        self.batch = batch
        self.interval = interval
        self._buffer: deque[Click] = deque(maxlen=limit)
        self._wake = asyncio.Event()
        self._stopping = asyncio.Event()
        self._writing = asyncio.Lock()  # one write at a time, or two could take the same clicks
        self._task: asyncio.Task[None] | None = None
        self.written = 0
        self.dropped = 0
        self.dead = 0

    def record(self, row: Click) -> None:
        journal = self._journal
        if len(self._buffer) == self._buffer.maxlen:
            self.dropped += 1
            if self._spilled_left:
                self._spilled_left -= 1
            elif journal is not None:
                journal.forget_oldest()
        self._buffer.append(row)
        if journal is not None:
            journal.append(row)
        if len(self._buffer) >= self.batch:
            self._wake.set()

    @property
    def pending(self) -> int:
        return len(self._buffer)

    async def flush(self) -> int:
        """Write what waits; returns how many clicks were written. Raises ``StoreOperationalError`` when
        the store cannot be written (locked, full): what was not written stays buffered, in order."""
        async with self._writing:
            clicks = list(self._buffer)
            if not clicks:
                return 0
            written = 0
            details = await self.details.details_of_batch(await _in_slices(clicks, _agent))
            pieces = [clicks]
            while pieces:  # depth first, in order: the buffer's head is always the next piece's head
                piece = pieces.pop()
                journaled = len(piece) - min(len(piece), self._spilled_left)  # the rest came from spill files
                try:
                    rows = await _in_slices(piece, lambda click: stored_row(click, details.get(_agent(click),
                                                                                            NO_DETAILS)))
                    mark = None if self._journal is None else self._journal.mark_after(journaled)
                    self.limits.writing()
                    await self.db.write(partial(repo.insert_clicks, rows=rows, journal=mark))
                except StoreOperationalError:
                    self.limits.written((), stored=False)
                    raise  # the store, not the rows: everything not written waits for the next try
                except Exception as exc:
                    self.limits.written((), stored=False)
                    if refused_by_the_store(exc):
                        raise
                    if len(piece) > 1:
                        half = len(piece) // 2
                        pieces += [piece[half:], piece[:half]]
                        continue
                    await self._set_aside(piece[0], exc)
                    self.limits.written(piece, stored=False)
                else:
                    written += len(piece)
                    self.written += len(piece)
                    self.limits.written(piece)
                for _ in piece:
                    self._buffer.popleft()
                self._forget_spilled(len(piece))
                if self._journal is not None:
                    self._journal.stored(journaled)
            return written

    def _forget_spilled(self, taken: int) -> None:
        if self._spilled_left:
            self._spilled_left = max(0, self._spilled_left - taken)
            if not self._spilled_left:  # every click of the spill files is stored
                for path in self._spilled:
                    path.unlink(missing_ok=True)
                self._spilled = []

    async def _set_aside(self, click: Click, exc: Exception) -> None:
        """The one click that fails alone goes to the dead letters, with the reason."""
        reason = safe_text(f"{type(exc).__name__}: {exc}", 500)
        async with self.db.transaction() as tx:
            await dead_letters.insert(tx, "click", click.account_id, reason, dead_letter_payload(click), iso(utcnow()))
        self.dead += 1
        log.error("a click of link %s could not be stored and was set aside: %s", click.link_id, reason)

    def holds(self, account_id: str, tracking_ids: Collection[str]) -> bool:
        """Whether a click of the account behind one of ``tracking_ids`` waits in this process's buffer (not
        written yet, or being written now). A scan of the buffer, newest first: it holds what came since the
        last write (``interval`` seconds or ``batch`` clicks), and the request path pays nothing for it."""
        if not tracking_ids or not self._buffer:
            return False
        return any(click.tracking_id in tracking_ids and click.account_id == account_id
                   for click in reversed(self._buffer))

    async def flush_if_holding(self, account_id: str, tracking_ids: Collection[str]) -> None:
        """:meth:`flush_before_counting` when :meth:`holds`: an event that names a click answered a moment ago
        finds it stored; one whose click is stored already (or unknown here) costs no write."""
        if self.holds(account_id, tracking_ids):
            await self.flush_before_counting()

    async def flush_before_counting(self) -> None:
        """Writes what waits so that a count includes it. When the store refuses writes (locked, full) the
        clicks stay buffered and the count is of what is stored: a read never fails for want of a write."""
        try:
            await self.flush()
        except StoreError as exc:
            log.warning("counting without %d buffered clicks: %s", self.pending, exc)

    async def load_salts(self) -> None:
        """The visitor salts of today and tomorrow, read (or stored) when not held yet; a store that cannot
        be written now is tried again at the next turn (meanwhile clicks of a day without salt get no visitor)."""
        now = time.time()
        if not self.visitors.missing(now):
            return
        try:
            await self.visitors.load(self.db, now)
        except StoreError:
            log.warning("the visitor salts could not be read; clicks get no visitor until they are")

    async def _run(self) -> None:
        adopted = time.monotonic()
        if self.db.path != ":memory:":
            await self._adopt()
        while not self._stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.interval)
            self._wake.clear()
            if self._stopping.is_set():
                return
            await self.load_salts()
            if self.db.path != ":memory:" and time.monotonic() - adopted >= ADOPT_SECONDS:
                adopted = time.monotonic()
                await self._adopt()
            try:
                await self.flush()
            except Exception:  # the clicks stay buffered for the next try
                log.exception("writing %d clicks failed; will retry", self.pending)
            await self.limits.refresh()

    async def _adopt(self) -> None:
        """Takes the clicks other runs left: the journals of processes that died (one that was still dying
        when this one started is taken at a later turn) and the spill files. They go to the buffer's head."""
        try:
            marks = await repo.journal_marks(self.db.reader)
            click_journal.recover(self.db.path, marks)
            here = click_journal.journal_names(self.db.path)
            gone = [name for name in marks if click_journal.is_local(name, self.db.path) and name not in here]
            if gone:
                await self.db.write(partial(repo.forget_journals, names=gone))
        except (*StoreError, OSError):  # tried again at the next turn
            log.exception("could not look for the clicks of processes that died")
        async with self._writing:
            self._take_spilled()

    def _take_spilled(self) -> None:
        paths, rows = click_spill.claim(self.db.path)
        clicks = [Click(*row) for row in rows if OLD_FIELDS <= len(row) <= len(Click._fields)]
        if clicks:
            self._buffer.extendleft(reversed(clicks))
            self._spilled += paths
            self._spilled_left += len(clicks)
            log.info("%d clicks a stop could not write are written now", len(clicks))
            self._wake.set()
        else:  # nothing readable in them
            for path in paths:
                path.unlink(missing_ok=True)

    def start(self) -> None:
        """Starts the writing; the clicks earlier runs left are taken at once, in the background."""
        if self.db.path != ":memory:":
            self._journal = click_journal.ClickJournal(self.db.path)
        self._stopping.clear()
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        """Writes what waits; when the store refuses it, what waits goes to a spill file for the next start.

        A write in progress is let finish rather than cancelled: cancelled while its commit runs on the
        writer's thread, it would be committed and still counted as waiting, and written a second time here."""
        if self._task is not None:
            self._stopping.set()
            self._wake.set()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._journal is not None:
            await self._adopt()  # a journal of a process that died since the last turn
        try:
            await self.flush()
        except Exception:
            if self.db.path == ":memory:" or not self._buffer:
                self._close_journal()
                raise
            path = click_spill.spill(self.db.path, list(self._buffer))
            log.exception("the store refused %d clicks at stop; kept in %s for the next start", self.pending, path)
            for claimed in self._spilled:  # their clicks are in the new file
                claimed.unlink(missing_ok=True)
        self._close_journal()

    def _close_journal(self) -> None:
        if self._journal is not None:
            self._journal.close()
            self._journal = None
