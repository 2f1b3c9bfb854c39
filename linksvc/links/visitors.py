"""Who clicked, without keeping who: a click's ``visitor`` is the first 16 hex digits of sha256(the day's salt +
the client's address + the user agent).

The salt is random (32 bytes, hex), one per UTC day, kept in the store (``visitor_salts``) so that every
node and every restart of a day hashes alike; salts more than two days old are deleted, after which a day's
visitors cannot be hashed again, and two days' visitors never match (a visitor cannot be followed across
days). The address is the client's as :mod:`linksvc.client_address` finds it (``LINKSVC_TRUSTED_PROXIES``),
and it is never stored.

The request path never reads the store: :meth:`Visitors.of` hashes with the salts held in memory, which the
click recorder loads before the service answers and keeps one day ahead (tomorrow's salt is stored today),
so the day turning finds its salt waiting. A click whose day has no salt in memory (the store could not be
read since the day turned) gets no visitor (NULL), as clicks from before visitors were recorded.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Sequence
from functools import partial

from linksvc.client_address import IPNetwork, client_address
from storage import conversions
from storage.db import AnyDatabase

DAY = 86400
KEPT_DAYS = conversions.SALT_DAYS_KEPT


def day_text(day: int) -> str:
    """YYYY-MM-DD of a day number (days since 1970-01-01, UTC)."""
    return time.strftime("%Y-%m-%d", time.gmtime(day * DAY))


def visitor_hash(salt: str, address: str, user_agent: str) -> str:
    return hashlib.sha256(f"{salt}{address}{user_agent}".encode("utf-8", "surrogatepass")).hexdigest()[:16]


class Visitors:
    """The salts of today and tomorrow, in memory, and the hash of a click's visitor."""

    def __init__(self, trusted_proxies: Sequence[IPNetwork] = ()) -> None:
        self.trusted_proxies = tuple(trusted_proxies)
        self._salts: dict[int, str] = {}  # day number -> salt

    def of(self, now: float, peer: str | None, forwarded_for: str, user_agent: str) -> str | None:
        """The visitor of a click at ``now`` (``time.time()``) from ``peer`` (the TCP peer) with these headers;
        None when the day's salt is not held."""
        salt = self._salts.get(int(now // DAY))
        if salt is None:
            return None
        address = (client_address(peer, forwarded_for, self.trusted_proxies) if forwarded_for and self.trusted_proxies
                   else peer or "")
        return visitor_hash(salt, address, user_agent)

    def missing(self, now: float) -> bool:
        """Whether today's or tomorrow's salt is not held yet."""
        today = int(now // DAY)
        return today not in self._salts or today + 1 not in self._salts

    async def load(self, db: AnyDatabase, now: float) -> None:
        """Reads (or stores, when the day has none yet) the salts of today and tomorrow; forgets older ones."""
        today = int(now // DAY)
        oldest = day_text(today - KEPT_DAYS)
        for day in (today, today + 1):
            if day not in self._salts:
                self._salts[day] = await db.write(partial(
                    conversions.salt_of_day, day=day_text(day), new_salt=secrets.token_hex(32), oldest_kept=oldest))
        for day in [d for d in self._salts if d < today - 1]:
            del self._salts[day]
