"""Time in one place: UTC now, and the ISO 8601 text used in storage and responses."""

from __future__ import annotations

import time
from datetime import UTC, datetime


def utcnow() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    """ISO 8601 in UTC with a ``Z``; sortable as text, which the store relies on."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    # isoformat is several times faster than strftime("%Y-%m-%dT%H:%M:%S.%fZ"), with the same text
    # for years 1000 to 9999.
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def parse_iso(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


_second: tuple[int, str] = (-1, "")


def iso_from_timestamp(timestamp: float) -> str:
    """``iso`` of a Unix timestamp (``time.time()``), cheaply: the date and time of the last second asked
    for are kept, so a batch of clicks from the same second formats each in well under a microsecond."""
    global _second
    seconds, micros = divmod(round(timestamp * 1_000_000), 1_000_000)
    if _second[0] != seconds:
        _second = (seconds, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)))
    return f"{_second[1]}.{micros:06d}Z"
