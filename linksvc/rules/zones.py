"""IANA time zones, read with :mod:`zoneinfo` (the system's database, or the ``tzdata`` package)."""

from __future__ import annotations

from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


@lru_cache(maxsize=1024)
def zone(name: str) -> ZoneInfo | None:
    """The zone called ``name``, or None when there is none by that name."""
    if not name or name.startswith("/") or ".." in name:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


def known_time_zone(name: str) -> bool:
    return zone(name) is not None
