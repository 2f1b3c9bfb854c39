"""The dashboard's list of links: one page of an account's links, newest first, with recent human clicks.

``needle`` is a lower-case substring looked for in the code and the destination URL (``instr`` rather than
``LIKE``, so ``%`` and ``_`` in a search mean themselves). SQLite's ``lower`` folds ASCII letters only,
which is what codes and URLs are made of. The clicks are counted with the ``clicks_link_time`` index.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from storage.db import Conn, dialect, fetch_all, fetch_one, json_member

OWNS: tuple[str, ...] = ()

_MATCH = ("(instr(lower(l.code), :needle) > 0 "
          "OR instr(lower(json_extract(l.body, '$.destination_url')), :needle) > 0)")
_PG_MATCH = ("(strpos(lower(l.code), :needle) > 0 "
             "OR strpos(lower(l.body ->> 'destination_url'), :needle) > 0)")


@dataclass(frozen=True, slots=True)
class LinkOverviewRecord:
    """One link of the dashboard's list: its stored body (decoded), its campaign's name and its recent clicks."""

    id: str
    link: dict[str, Any]
    created_at: str
    campaign_name: str | None
    clicks: int


def _where(account_id: str, needle: str | None, postgresql: bool = False) -> tuple[str, dict[str, Any]]:
    params: dict[str, Any] = {"account_id": account_id}
    where = "l.account_id = :account_id"
    if needle:
        where += f" AND {_PG_MATCH if postgresql else _MATCH}"
        params["needle"] = needle
    return where, params


async def page_links(conn: Conn, account_id: str, needle: str | None, clicks_since: str, limit: int,
                     offset: int) -> list[LinkOverviewRecord]:
    """The page's links, with their human clicks since ``clicks_since``."""
    postgresql = dialect(conn) == "postgresql"
    where, params = _where(account_id, needle, postgresql)
    rows = await fetch_all(
        conn,
        f"SELECT l.id, l.body, l.created_at, {json_member(conn, 'c.body', 'name')} AS campaign_name, "
        "(SELECT count(*) FROM clicks k WHERE k.link_id = l.id AND k.clicked_at >= :since AND k.bot = 0) AS clicks "
        "FROM links l LEFT JOIN campaigns c ON c.id = l.campaign_id AND c.account_id = l.account_id "
        f"WHERE {where} ORDER BY l.created_at DESC, l.id DESC LIMIT :limit OFFSET :offset",
        {**params, "since": clicks_since, "limit": limit, "offset": offset},
    )
    return [LinkOverviewRecord(r[0], orjson.loads(r[1]), r[2], r[3], int(r[4])) for r in rows]


async def count_links(conn: Conn, account_id: str, needle: str | None) -> int:
    where, params = _where(account_id, needle, dialect(conn) == "postgresql")
    row = await fetch_one(conn, f"SELECT count(*) FROM links l WHERE {where}", params)
    return int(row[0]) if row else 0
