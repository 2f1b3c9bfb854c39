"""A campaign's status, computed at read time (product decisions, section 4); first match wins."""

from __future__ import annotations

from datetime import datetime

STATUSES = ("RUNNING", "PAUSED", "SCHEDULED", "FINISHED")


def campaign_status(
    now: datetime,
    starts_at: datetime | None,
    ends_at: datetime | None,
    paused: bool,
    finished_at: datetime | None,
) -> str:
    if finished_at is not None or (ends_at is not None and ends_at <= now):
        return "FINISHED"
    if paused:
        return "PAUSED"
    if starts_at is not None and starts_at > now:
        return "SCHEDULED"
    return "RUNNING"
