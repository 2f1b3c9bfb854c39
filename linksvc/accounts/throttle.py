"""The throttle of credential guesses: failed attempts per kind and client address, kept in the store.

Three kinds of attempt are counted, each on its own: ``admin`` (the admin token, or a dashboard session
cookie, presented to the admin API), ``api_key`` (an API key on ``GET /auth/authorize``) and ``sign_in``
(the dashboard's session endpoints: the admin token posted to sign in, or a session cookie asked about),
and ``link_password`` (the password posted to a protected link's page; counted per link and address:
:func:`linksvc.links.passwords.attempt`).
Once a client address has ``limit`` failures of a kind within the last ``window_seconds``, every attempt of
that kind from it, even with the right credential, is refused with :class:`RateLimited` until the oldest
of those failures leaves the window.

An attempt costs one indexed read (:meth:`AuthThrottle.check`) before its credential is looked at; only a
failure writes (:meth:`AuthThrottle.failed`: one row, in one short transaction). Because the failures are
rows of the shared SQLite file, every worker process sees every other's, and a restart forgets nothing.
Check and write are not one transaction (that would put a write on every successful request), so
attempts already in flight when the limit is reached still get their answer: the excess is bounded by the
requests one address has in flight at once.

The table stays small: a write deletes every address's rows that have left the window and keeps only the
newest ``limit`` rows of its own address (more never changes an answer); :meth:`AuthThrottle.start` also
prunes every minute, so rows do not linger after the last failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable, Sequence

from linksvc.client_address import IPNetwork, client_address, throttle_key
from linksvc.errors import RateLimited
from storage import auth_failures as repo
from storage.db import AnyDatabase, Tx, dialect

KINDS = ("admin", "api_key", "sign_in", "link_password")
WHAT = {"admin": "admin token", "api_key": "API key", "sign_in": "sign-in", "link_password": "link password"}
PRUNE_SECONDS = 60.0
log = logging.getLogger("linksvc.auth")


def now_ms() -> int:
    return int(time.time() * 1000)


class AuthThrottle:
    """Counts failed attempts and refuses the attempts of an address that has too many."""

    def __init__(self, db: AnyDatabase, limit: int = 30, window_seconds: int = 600,
                 trusted_proxies: Sequence[IPNetwork] = (),
                 observe: Callable[[str, str], None] | None = None) -> None:
        self.db = db
        self.limit = limit
        self.window_ms = window_seconds * 1000
        self.trusted_proxies = tuple(trusted_proxies)
        # Told (event, kind) of each failure ("failures") and each refusal ("throttled"): the metrics.
        self.observe = observe or (lambda event, kind: None)
        self._task: asyncio.Task[None] | None = None

    def client_of(self, peer: str | None, forwarded_for: str) -> str:
        """The key an attempt is counted under (see :mod:`linksvc.client_address`)."""
        return throttle_key(client_address(peer, forwarded_for, self.trusted_proxies))

    async def check(self, kind: str, client: str, at_ms: int) -> None:
        """Raises RateLimited, with the whole seconds to wait, when ``client`` has too many failures."""
        # The limit-th newest failure in the window exists only when the limit is reached; the address may
        # try again when it leaves the window.
        pivot = await repo.nth_newest(self.db.reader, kind, client, at_ms - self.window_ms, self.limit)
        if pivot is None:
            return
        self.observe("throttled", kind)
        retry = max(1, math.ceil((pivot + self.window_ms - at_ms) / 1000))
        raise RateLimited(retry, f"too many failed {WHAT[kind]} attempts from this address: at most {self.limit} "
                                 f"in {self.window_ms // 1000} seconds; retry after {retry} seconds")

    async def failed(self, kind: str, client: str, at_ms: int) -> int:
        """Records a failed attempt; returns the failures of ``client`` now in the window."""
        self.observe("failures", kind)

        async def unit(tx: Tx) -> int:
            await repo.record(tx, kind, client, at_ms)
            await repo.keep_newest(tx, kind, client, self.limit)
            await repo.forget_before(tx, at_ms - self.window_ms)
            return await repo.count_since(tx, kind, client, at_ms - self.window_ms)

        if dialect(self.db.reader) == "postgresql":  # failures at once conflict: a unit is run again, whole
            count = await self.db.write(unit)
        else:
            async with self.db.transaction() as tx:
                count = await unit(tx)
        if count >= self.limit:
            log.warning("%s: %d failed %s attempts within %d s; further attempts are refused until they age out",
                        client, count, WHAT[kind], self.window_ms // 1000, extra={"client": client, "kind": kind})
        return count

    async def prune(self, at_ms: int) -> int:
        """Deletes the failures that have left the window; a read only when there are none."""
        cutoff = at_ms - self.window_ms
        if not await repo.any_before(self.db.reader, cutoff):
            return 0
        async with self.db.transaction() as tx:
            return await repo.forget_before(tx, cutoff)

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(PRUNE_SECONDS)
            try:
                await self.prune(now_ms())
            except Exception:  # the store is busy or full: the next round, or the next failure, prunes
                log.exception("could not prune the failed sign-in attempts")

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        if self._task is None:
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None
