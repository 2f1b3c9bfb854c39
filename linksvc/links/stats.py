"""Clicks of a link as the admin API shows them, human and bot apart: by day, platform, country (null: unknown),
referrer host (null: no Referer), the rule that matched (null: none), the variant of the link's A/B split
(null: none), utm_source, and by the user agent's full
parse: browser family and major version, OS family and major version, browser family and OS family alone
("Instagram" whatever its version: a dashboard's rows, the versions on demand from the former two), device brand
and model (null where the parse knew nothing, and for clicks recorded before it existed), and the bots' clicks
alone by the bot's name (the parse's browser family: "Applebot", "FacebookBot"; null when the parse knew none).
The breakdowns by values a click's sender
chooses (country, referrer host, rule, variant, utm_source, and the user agent's) hold their ``limit`` most clicked
groups, the rest summed in ``other`` (docs/decisions.md, "Reports and bounded answers")."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from linksvc.clock import iso, utcnow
from storage import clicks as repo
from storage.clicks import ClickGroups
from storage.db import Conn

DEFAULT_GROUPS, MAX_GROUPS = 100, 1000
"""The groups of a capped breakdown shown at most (the answer's ``limit``)."""
CAPPED = {"country": ("by_country", "country", None), "referrer_host": ("by_referrer_host", "host", None),
          "rule": ("by_rule", "rule", None), "variant": ("by_variant", "variant", None),
          "utm_source": ("by_utm_source", "utm_source", None),
          "browser": ("by_browser", "browser", "major"), "os": ("by_os", "os", "major"),
          "device": ("by_device", "brand", "model"),
          "browser_family": ("by_browser_family", "browser", None), "os_family": ("by_os_family", "os", None),
          "bot_name": ("by_bot", "name", None)}


def _rows(found: ClickGroups, name: str, second: str | None) -> list[dict[str, Any]]:
    """A breakdown as [{name: key, (second: value,) human, bot}] in the store's order."""
    return [{name: row.key, **({second: row.value} if second else {}), "human": row.human, "bot": row.bot}
            for row in found.rows]


async def link_clicks(conn: Conn, link_id: str, days: int, limit: int = DEFAULT_GROUPS) -> dict[str, Any]:
    since = iso(utcnow() - timedelta(days=days))
    counts = await repo.click_counts(conn, link_id, since, limit)
    by_day = _rows(counts["day"], "date", None)
    human, bot = sum(d["human"] for d in by_day), sum(d["bot"] for d in by_day)
    answer: dict[str, Any] = {
        "link_id": link_id, "since": since, "limit": limit, "human": human, "bot": bot, "by_day": by_day,
        "by_platform": _rows(counts["platform"], "platform", None),
    }
    other: dict[str, Any] = {}
    for breakdown, (field, name, second) in CAPPED.items():
        found = counts[breakdown]
        answer[field] = rows = _rows(found, name, second)
        if found.groups > len(rows):
            # by_bot counts bot clicks only: its rest is of those
            other[field] = {"groups": found.groups - len(rows),
                            "human": 0 if breakdown == "bot_name" else human - sum(r["human"] for r in rows),
                            "bot": bot - sum(r["bot"] for r in rows)}
    answer["other"] = other
    return answer
