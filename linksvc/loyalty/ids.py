"""Ids of the rows ingest makes itself (events, wallet lines): UUIDv7 (RFC 9562).

The first 48 bits are the Unix time in milliseconds and the next 12 a counter within that millisecond, so ids
made one after another sort in the order they were made: a new row's id goes at the end of its table's
primary-key index instead of on a random page of it (a random UUIDv4 dirties a different leaf of every index
on the id for each row, and every such page is written to the WAL at the commit). The other 62 bits are
random. Still a UUID as the interface specification asks; nothing reads meaning into the ids.
"""

from __future__ import annotations

import os
import threading
import time

_lock = threading.Lock()
_last_ms = 0
_counter = 0
_random = b""  # random bytes drawn 4 KiB at a time (one system call for 512 ids) ...
_taken = 0  # ... of which this many were handed out (read by offset: slicing off the rest copied the pool)
_POOL = 4096
_HEX = "%08x-%04x-%04x-%04x-%012x"


def _forget_pool() -> None:
    global _random, _taken
    _random, _taken = b"", 0  # a forked worker must not hand out the random bits its parent drew


os.register_at_fork(after_in_child=_forget_pool)


def uuid7() -> str:
    """A new UUIDv7 as text, greater than every id this process made before (unless the clock goes back
    more than the counter can absorb, which only costs order, not uniqueness)."""
    global _last_ms, _counter, _random, _taken
    with _lock:
        ms = time.time_ns() // 1_000_000
        if ms > _last_ms:
            _last_ms, _counter = ms, 0
        else:  # the same millisecond (or the clock went back): count on from the last id
            _counter += 1
            if _counter > 0xFFF:
                _last_ms, _counter = _last_ms + 1, 0
            ms = _last_ms
        counter = _counter
        if _taken >= len(_random):
            _random, _taken = os.urandom(_POOL), 0
        tail = int.from_bytes(_random[_taken:_taken + 8]) & 0x3FFF_FFFF_FFFF_FFFF
        _taken += 8
    # The 128 bits: ms (48) | version 7 (4) | counter (12) | variant 0b10 (2) | random (62), in the text's groups.
    return _HEX % (ms >> 16, ms & 0xFFFF, 0x7000 | counter, 0x8000 | (tail >> 48), tail & 0xFFFF_FFFF_FFFF)
