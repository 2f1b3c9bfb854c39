"""Fresh tracking ids (and request ids): 128 (64) random bits from the operating system, as 32 hexadecimal digits.

Each click that arrives without one gets one, so the redirect asks for randomness on every click. Read 16
bytes at a time, ``os.urandom`` is one system call each (under load, a measurable share of a redirect); here
the bytes come from a buffer of ``CHUNK`` bytes that one call refills. They are the same kernel bytes, so the
ids are exactly as unpredictable. A forked process starts with an empty buffer, so two workers never hand
out the same bytes.
"""

from __future__ import annotations

import os

CHUNK = 4096


class _Buffer:
    def __init__(self) -> None:
        self.data = b""
        self.at = 0

    def clear(self) -> None:
        self.data = b""
        self.at = 0


_buffer = _Buffer()
os.register_at_fork(after_in_child=_buffer.clear)


def _random_hex(size: int) -> str:
    buffer = _buffer
    at = buffer.at
    if at + size > len(buffer.data):
        buffer.data = os.urandom(CHUNK)
        at = 0
    buffer.at = at + size
    return buffer.data[at:at + size].hex()


def new_tracking_id() -> str:
    return _random_hex(16)


def new_request_id() -> str:
    """16 hexadecimal digits from the same buffer, for a request that arrives without an ``X-Request-Id``."""
    return _random_hex(8)
