"""The customer lookup's answers held by each worker: a read model, exact, of what ``GET /customers`` answers.

A storefront app looks its customer up each time it opens and after each purchase; a point of sale looks the
same regulars up every day. Reading the customer and its wallet costs the store one statement of indexed reads
and SQLite's JSON work (about 40 µs), and decoding and encoding the answer as much again: more than the rest
of the request. So each worker keeps the answers it gave (encoded, as the bytes of the ``data`` member) by
account and identifiers, and gives a kept one again while nothing it was made of changed:

- **its customer's document and wallet lines**: a change stamps the customer's bucket (one of
  :data:`storage.generations.WALLET_BUCKETS`) in shared memory before the write is answered, on every worker
  (migration 0042's triggers, whichever code or process wrote);
- **which customer the identifiers find**, and **the reward documents**: a customer added, deleted or given
  other identifiers, or any reward changed, moves the ``lookups`` counter and drops every answer;
- **the time**: an answer is given until one second before its earliest line expires (the store's reading
  of "expired" compares the texts; the second covers any difference in how a time is written).

Only a 200 is kept (a customer found, its wallet read with it); a 404, a conflict and a large wallet read off
the event loop are read each time. On PostgreSQL nothing is kept: the lookup awaits the store there and takes
the handler. Holding an answer reads the counters before the store and checks them after: an answer read while
a change to its customer committed is not kept (see :func:`lookup_held`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple

import orjson

from linksvc.jsoncodec import dumpb
from linksvc.store import PerStore, Store
from storage.generations import wallet_bucket
from storage.wallet import HeldReward

MAX_HELD_LOOKUPS = 50_000  # answers kept per worker (about 1.5 kB each with a wallet of a few lines), oldest first out
# ...and at most this many bytes of encoded answers (a wallet of 50 lines is about 10 kB): the oldest go first.
MAX_HELD_BYTES = 64 * 1024 * 1024
MARGIN_SECONDS = 1.0  # an answer is dropped this long before its earliest line expires

Key = tuple[str, str | None, str | None]  # account, document number, phone digits


class Looked(NamedTuple):
    """A lookup's 200: its encoded ``data``, and whether it was an answer held (rather than read from the store)."""

    answer: orjson.Fragment
    held: bool


@dataclass(frozen=True, slots=True)
class HeldAnswer:
    lookups: int  # the 'lookups' counter it was read under
    bucket: str  # its customer's bucket (``wallets/N``) and that bucket's stamp
    stamp: int
    until: float  # epoch seconds: given before this only
    answer: orjson.Fragment  # the encoded ``data`` of the 200
    size: int  # its length in bytes


class HeldLookups:
    def __init__(self, store: Store, max_entries: int = MAX_HELD_LOOKUPS, max_bytes: int = MAX_HELD_BYTES) -> None:
        self._store = store
        self._max = max_entries
        self._max_bytes = max_bytes
        self.bytes = 0  # of the answers held
        self._entries: dict[Key, HeldAnswer] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: Key, now: float) -> orjson.Fragment | None:
        """The answer held for ``key`` if still exact at ``now``, else None (and it is dropped)."""
        held = self._entries.get(key)
        if held is None:
            self.misses += 1
            return None
        generation = self._store.generation
        if now < held.until and generation(held.bucket) == held.stamp and generation("lookups") == held.lookups:
            self.hits += 1
            return held.answer
        with self._lock:
            if self._entries.get(key) is held:
                del self._entries[key]
                self.bytes -= held.size
        self.misses += 1
        return None

    def keep(self, key: Key, held: HeldAnswer) -> None:
        """Holds ``held`` for ``key``, dropping the oldest answers beyond the bounds (an answer larger than the
        bytes allowed is not held)."""
        if held.size > self._max_bytes:
            return
        with self._lock:
            entries = self._entries
            replaced = entries.pop(key, None)
            if replaced is not None:
                self.bytes -= replaced.size
            while entries and (len(entries) >= self._max or self.bytes + held.size > self._max_bytes):
                self.bytes -= entries.pop(next(iter(entries))).size
            entries[key] = held
            self.bytes += held.size

    def clear(self) -> None:
        """Drops every answer held (the next lookups read the store)."""
        with self._lock:
            self._entries.clear()
            self.bytes = 0

    def __len__(self) -> int:
        return len(self._entries)


held_lookups = PerStore(HeldLookups)  # the process's held answers on a store


def lookup_held(store: Store, key: Key, read: Callable[[], tuple[str, dict[str, Any], list[HeldReward]] | None]
                ) -> Looked | None:
    """The answer for ``key``: held, or ``read()`` (the customer's id, the answer, the rewards its wallet
    holds; None when it cannot be read at once) and kept when exact. Raises what ``read`` raises.

    The counters are read before the store: a change to this customer published since then stamped its bucket
    past the 'wallets' read here, and such an answer is not kept (it may predate the change). A change that
    commits after the read moves the bucket later, and the kept answer is dropped at its next use."""
    now = time.time()
    held = held_lookups(store)
    found = held.get(key, now)
    if found is not None:
        return Looked(found, True)
    generation = store.generation
    lookups, wallets = generation("lookups"), generation("wallets")
    read_now = read()
    if read_now is None:
        return None
    customer_id, answer, rewards = read_now
    data = dumpb(answer)
    encoded = orjson.Fragment(data)
    bucket = wallet_bucket(customer_id)
    stamp = generation(bucket)
    until = _until(rewards)
    if stamp <= wallets and generation("lookups") == lookups and until > now:
        held.keep(key, HeldAnswer(lookups, bucket, stamp, until, encoded, len(data)))
    return Looked(encoded, False)


def _until(rewards: list[HeldReward]) -> float:
    """When the answer stops being exact: :data:`MARGIN_SECONDS` before the earliest expiration of a line it
    shows (each reward's ``earliest``), or never; 0 (not kept) for a time that does not read as one."""
    until = float("inf")
    for reward in rewards:
        if reward[2] is None:
            continue
        try:
            moment = datetime.fromisoformat(reward[2].replace("Z", "+00:00"))
        except (AttributeError, TypeError, ValueError):
            return 0.0
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        until = min(until, moment.timestamp() - MARGIN_SECONDS)
    return until
