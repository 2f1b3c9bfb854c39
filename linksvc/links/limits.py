"""``max_clicks`` held across workers and nodes without a store read on the click path (docs/decisions.md, "Link
lifecycle and passwords (issue 34)").

The click writer adds each batch's clicks by people to ``link_human_clicks`` in the commit of the clicks
(:func:`storage.clicks.count_human_clicks`). Each worker holds, for every link with a ``max_clicks`` it has
answered, the stored count as last read and the clicks by people it took itself and has not written yet; a
link's count is their sum. The recorder's loop reads the stored counts again every turn (each
``LINKSVC_CLICK_FLUSH_SECONDS``), after its own write. A link a worker has never counted is read once, by the
handler (the fast lane leaves it to the handler), like a link the read model does not hold.

What a worker cannot see is the other workers' clicks not yet written or not yet read back: the overshoot of a
limit is at most the clicks the link takes on the other workers (and nodes) within about two flush intervals.

The table gains a row per link and batch; :class:`CountCompaction` sums each link's rows into one in the
background (every :data:`COMPACT_SECONDS`, on every worker, taking turns under :data:`COMPACT_TURN`): one
transaction per :data:`COMPACT_LINKS` links, in which a link's sum is the same before and after, so the counts
workers read and hold stay exact.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from functools import partial
from typing import Any

from linksvc.links.decide import Unavailable, unavailable
from linksvc.periodic import Periodic
from storage import clicks as repo
from storage.db import AnyDatabase, StoreError

log = logging.getLogger("linksvc.clicks")
COMPACT_SECONDS = 60.0
"""How often each worker compacts ``link_human_clicks``: a link clicked without pause gains a row per batch and
worker (two a second at the default flush interval), so a minute keeps it to about a hundred rows per worker,
read by a sum each turn, while compaction itself stays rare (one short transaction, and an index scan when
nothing is to be done)."""
COMPACT_LINKS = 1000
"""Links compacted in one transaction at most: a unit's time on the writer stays bounded."""
COMPACT_TURN = "linksvc:human-clicks-compaction"
"""The serial key of compactions: one at a time on every worker and node (PostgreSQL: an advisory lock, then
``READ COMMITTED``; SQLite: the write lock)."""
MAX_LINKS_COUNTED = 100_000  # links with a max_clicks each worker follows (the least recently read go first)


class ClickLimits:
    def __init__(self, db: AnyDatabase) -> None:
        self.db = db
        self._stored: dict[str, int] = {}  # link id -> clicks by people stored, as last read
        self._unwritten: dict[str, int] = {}  # link id -> clicks by people this worker took, not written yet
        self._writes = 0  # batches begun and ended by this worker: a read that overlaps one is not kept
        self._in_flight = 0

    def count_of(self, link_id: str) -> int | None:
        """The link's clicks by people as this worker knows them, or None when it has never read them."""
        stored = self._stored.get(link_id)
        return None if stored is None else stored + self._unwritten.get(link_id, 0)

    def took(self, link_id: str) -> None:
        """A click by a person on a link with a ``max_clicks``, recorded by this worker."""
        self._unwritten[link_id] = self._unwritten.get(link_id, 0) + 1

    def writing(self) -> None:
        """A batch of this worker's clicks is being written: a count read meanwhile is not kept."""
        self._writes += 1
        self._in_flight += 1

    def written(self, clicks: Iterable[Any], stored: bool = True) -> None:
        """Clicks of this worker's buffer are stored (or, ``stored`` False, set aside or not written): those it
        counted move from its unwritten clicks to the stored count it holds (the next read confirms it)."""
        self._writes += 1
        self._in_flight = max(0, self._in_flight - 1)
        unwritten = self._unwritten
        if not unwritten:
            return
        for click in clicks:
            link_id = click.link_id
            left = unwritten.get(link_id)
            if left is not None and not click.bot:
                if left <= 1:
                    del unwritten[link_id]
                else:
                    unwritten[link_id] = left - 1
                if stored and link_id in self._stored:
                    self._stored[link_id] += 1

    async def load(self, link_ids: Iterable[str]) -> None:
        """Reads the stored counts of ``link_ids``; kept unless a batch of this worker was written meanwhile (its
        clicks might then be in both the count and the unwritten ones, or in neither): the next turn reads again."""
        wanted = list(link_ids)
        if not wanted:
            return
        writes, in_flight = self._writes, self._in_flight
        found = await repo.human_clicks_of_links(self.db.reader, wanted)
        if writes != self._writes or in_flight:
            for link_id, count in found.items():  # a link never read gets its first count anyway
                self._stored.setdefault(link_id, count)
            return
        if len(self._stored) + len(found) > MAX_LINKS_COUNTED:
            for link_id in list(self._stored)[:len(found)]:
                if link_id not in found:
                    del self._stored[link_id]
        self._stored.update(found)

    async def refresh(self) -> None:
        """Reads again every count this worker holds (the recorder's turn, after its write)."""
        try:
            await self.load(list(self._stored))
        except StoreError:
            log.warning("the click counts of links with max_clicks could not be read; kept as they were")


async def unavailable_now(limits: ClickLimits, link_id: str, link: Mapping[str, Any], now: float) -> Unavailable | None:
    """:func:`linksvc.links.decide.unavailable` with the link's count of clicks by people when it has a
    ``max_clicks`` (read once, the first time this worker meets the link)."""
    count = None
    if link.get("max_clicks") is not None:
        count = limits.count_of(link_id)
        if count is None:
            await limits.load([link_id])
            count = limits.count_of(link_id)
    return unavailable(link, now, count)


def held_unavailable(limits: ClickLimits, link_id: str, link: Mapping[str, Any], now: float
                     ) -> Unavailable | bool | None:
    """As :func:`unavailable_now` without reading anything: True when the link's count is not held yet."""
    count = None
    if link.get("max_clicks") is not None:
        count = limits.count_of(link_id)
        if count is None:
            return True
    return unavailable(link, now, count)


async def compact_counts(db: AnyDatabase, links: int = COMPACT_LINKS) -> repo.CompactedCounts:
    """Sums each link's rows of ``link_human_clicks`` into one, ``links`` links a transaction, until none has more
    than one row: what was done in all (other workers may have done some)."""
    done, removed = 0, 0
    while True:
        found = await db.write(partial(repo.compact_human_clicks, links=links), COMPACT_TURN)
        done, removed = done + found.links, removed + found.rows_removed
        if found.links < links:
            return repo.CompactedCounts(done, removed)


class CountCompaction(Periodic):
    """:func:`compact_counts` in the background, every ``interval`` seconds, from start to stop (a failed turn
    leaves the rows as they are, still exact, until the next)."""

    what = "compacting the click counts of links"

    def __init__(self, db: AnyDatabase, interval: float = COMPACT_SECONDS) -> None:
        super().__init__(interval, log)
        self.db = db

    async def turn(self) -> None:
        await compact_counts(self.db)
