"""Clicks of a link as the admin API shows them, human and bot apart: by day, platform, utm_source, and by
the user agent's full parse: browser family and major version, OS family and major version, device brand
and model (null where the parse knew nothing, and for clicks recorded before it existed)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from linksvc.clock import iso, utcnow
from storage import clicks as repo
from storage.clicks import ClickCount
from storage.db import Conn


def _split(rows: Sequence[ClickCount], name: str) -> list[dict[str, Any]]:
    """Counts by one key as [{name: key, human, bot}] in first-seen order."""
    merged: dict[Any, dict[str, Any]] = {}
    for row in rows:
        entry = merged.setdefault(row.key, {name: row.key, "human": 0, "bot": 0})
        entry["bot" if row.bot else "human"] += row.n
    return list(merged.values())


def _split_two(rows: Sequence[ClickCount], name: str, second: str) -> list[dict[str, Any]]:
    """Counts by two keys as [{name: key, second: value, human, bot}] in first-seen order."""
    merged: dict[tuple[Any, Any], dict[str, Any]] = {}
    for row in rows:
        entry = merged.setdefault((row.key, row.value), {name: row.key, second: row.value, "human": 0, "bot": 0})
        entry["bot" if row.bot else "human"] += row.n
    return list(merged.values())


async def link_clicks(conn: Conn, link_id: str, days: int) -> dict[str, Any]:
    since = iso(utcnow() - timedelta(days=days))
    counts = await repo.click_counts(conn, link_id, since)
    by_day = _split(counts["day"], "date")
    return {
        "link_id": link_id,
        "since": since,
        "human": sum(d["human"] for d in by_day),
        "bot": sum(d["bot"] for d in by_day),
        "by_day": by_day,
        "by_platform": _split(counts["platform"], "platform"),
        "by_utm_source": _split(counts["utm_source"], "utm_source"),
        "by_browser": _split_two(counts["browser"], "browser", "major"),
        "by_os": _split_two(counts["os"], "os", "major"),
        "by_device": _split_two(counts["device"], "brand", "model"),
    }
