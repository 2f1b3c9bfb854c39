"""The clicks' conversion rollups, summed behind a mark (issue 33; docs/decisions.md, "Rollups behind a mark").

The click writer stores clicks only. What they add to the conversion report (fine rows, visitors, the coarse
level) is counted by a pass of its own: :func:`count_clicks` reads the stored clicks after the store's mark and
adds them up per distinct key in units of at most :data:`PASS_CLICKS`, each moving the mark in the same
transaction as the rows it adds, so a ``kill -9`` anywhere leaves every stored click counted once or waiting for
the next pass, never counted twice. Passes take turns under :data:`ROLLUP_TURN` on every worker and node.

:class:`ClickRollups` runs the pass in the background (each worker looks; whichever comes first counts what all of
them stored) once the first click waiting is ``interval`` seconds old: off the click path, and over a longer
span than a click batch, so that more clicks share each key's row. A report runs it first
(:func:`count_before_reading`), as it writes the clicks its worker still buffers first: it reads every click
stored before it.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from functools import partial

from linksvc.clock import iso, utcnow
from linksvc.periodic import Periodic
from linksvc.store import Store, StoreError
from storage import conversions as repo

log = logging.getLogger("linksvc.rollups")

ROLLUP_TURN = "linksvc:click-rollups"
"""The serial key of the passes: one at a time, on every worker and node (PostgreSQL: an advisory lock, then
the mark its predecessor committed is read; SQLite: the one writer)."""
HORIZON_TURN = "linksvc:click-horizon"
"""The serial key of :func:`storage.conversions.click_horizon` (on PostgreSQL it then reads at ``READ
COMMITTED``, after waiting for the click transactions under way)."""
PASS_CLICKS = 20_000
"""Clicks counted in one unit at most: a unit's time on the writer stays bounded after a long stop."""


async def count_clicks(db: Store) -> int:
    """Counts into the rollups every click stored before the call (the horizon is taken first), in units of at
    most :data:`PASS_CLICKS`; returns how many clicks this call counted (others may have counted some)."""
    horizon = await db.write(repo.click_horizon, HORIZON_TURN)
    counted = 0
    while True:
        done, more = await db.write(partial(repo.roll_up_clicks, upto=horizon, limit=PASS_CLICKS), ROLLUP_TURN)
        counted += done
        if not more:
            return counted


async def count_before_reading(db: Store) -> None:
    """:func:`count_clicks` before a read of the rollups. When the store refuses writes (locked, full), the read
    answers what is counted: a read never fails for want of a write."""
    try:
        await count_clicks(db)
    except StoreError as exc:
        log.warning("reading the conversion rollups without the clicks stored since the last pass: %s", exc)


class ClickRollups(Periodic):
    """The pass in the background. Every ``interval`` seconds it looks (a read) at the first click waiting after
    the mark, and counts what waits once that click is ``interval`` seconds old: each pass spans about
    ``interval`` seconds of clicks whatever the number of workers and nodes looking. A pass the store refuses
    (busy, full, a click transaction held open) is counted by the next turn."""

    what = "counting the stored clicks into the conversion rollups"

    def __init__(self, db: Store, interval: float = 1.0) -> None:
        super().__init__(interval, log)
        self.db = db
        self.counted = 0

    async def run_once(self) -> int:
        """A pass when the first click waiting is old enough; how many clicks it counted."""
        first = await repo.first_waiting_click(self.db.reader)
        if first is None or first > iso(utcnow() - timedelta(seconds=self.interval)):
            return 0
        counted = await count_clicks(self.db)
        self.counted += counted
        return counted

    async def turn(self) -> None:
        await self.run_once()
