"""The dashboard's list of links: one page of an account's links in the order asked (newest first unless told),
with their human clicks: of the last week, of all time, and the time of the latest.

``LinkFilter.needle`` is a lower-case substring looked for in the code, the destination URL, the folder and the
tags (``instr`` rather than ``LIKE``, so ``%`` and ``_`` in a search mean themselves). SQLite's ``lower`` folds
ASCII letters only, which is what codes and URLs are made of. The clicks are counted with the
``clicks_link_time`` index; a link's clicks of all time are its rows of ``link_human_clicks`` (by its index).

Every order ends with the link's id in the same direction, so that two links never compare equal: offset paging
under any order shows each link once (while no link is added or removed between the pages). A link never
clicked has no latest click: it comes last in either direction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from storage.db import Conn, dialect, fetch_all, fetch_one, json_member
from storage.documents import Document

OWNS: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LinkFilter:
    """What the list looks for (issue 36), every part given must hold: ``needle``, a lower-case substring of the
    code, the destination URL, the folder or a tag; ``tag``, a tag the link carries; ``folder``, the link's folder;
    ``utm``, per UTM field asked, the lower-case texts of which one must be in the destination URL
    (``?utm_source=x&`` and its other spellings: the URL is searched with ``#`` as ``&`` and a ``&`` after it)."""

    needle: str | None = None
    tag: str | None = None
    folder: str | None = None
    utm: tuple[tuple[str, ...], ...] = ()


def _find(postgresql: bool, text: str, needle: str) -> str:
    return f"strpos({text}, {needle}) > 0" if postgresql else f"instr({text}, {needle}) > 0"


def _where(account_id: str, f: LinkFilter, postgresql: bool = False) -> tuple[str, dict[str, Any]]:
    params: dict[str, Any] = {"account_id": account_id}
    clauses = ["l.account_id = :account_id"]
    destination = ("lower(l.body ->> 'destination_url')" if postgresql
                   else "lower(json_extract(l.body, '$.destination_url'))")
    if f.needle:
        tagged = ("EXISTS (SELECT 1 FROM link_tags t WHERE t.account_id = l.account_id AND t.link_id = l.id AND "
                  f"{_find(postgresql, 'lower(t.tag)', ':needle')})")
        clauses.append(f"({_find(postgresql, 'lower(l.code)', ':needle')} "
                       f"OR {_find(postgresql, destination, ':needle')} "
                       f"OR {_find(postgresql, 'lower(l.folder)', ':needle')} OR {tagged})")
        params["needle"] = f.needle
    if f.tag is not None:
        clauses.append("EXISTS (SELECT 1 FROM link_tags t WHERE t.account_id = l.account_id AND t.link_id = l.id "
                       "AND t.tag = :tag)")
        params["tag"] = f.tag
    if f.folder is not None:
        clauses.append("l.folder = :folder")
        params["folder"] = f.folder
    query = f"(replace({destination}, '#', '&') || '&')"
    for i, texts in enumerate(f.utm):
        found = []
        for j, text in enumerate(texts):
            params[f"utm{i}_{j}"] = text
            found.append(_find(postgresql, query, f":utm{i}_{j}"))
        clauses.append(f"({' OR '.join(found)})")
    return " AND ".join(clauses), params


@dataclass(frozen=True, slots=True)
class LinkOverviewRecord:
    """One link of the dashboard's list: its stored body (decoded), its campaign's name, its human clicks since the
    time asked (``clicks``), of all time (``total_clicks``) and the time of its latest (None: never clicked)."""

    id: str
    link: dict[str, Any]
    created_at: str
    updated_at: str
    campaign_name: str | None
    clicks: int
    total_clicks: int
    last_clicked_at: str | None


_TOTAL = "(SELECT coalesce(sum(h.clicks), 0) FROM link_human_clicks h WHERE h.link_id = l.id)"
_LAST = ("(SELECT k.clicked_at FROM clicks k WHERE k.link_id = l.id AND k.bot = 0 "
         "ORDER BY k.clicked_at DESC LIMIT 1)")
LINK_ORDERS: dict[str, tuple[str, bool]] = {
    "created": ("l.created_at", False), "updated": ("l.updated_at", False), "code": ("l.code", False),
    "clicks": (_TOTAL, False), "last_clicked": (_LAST, True),
}
"""The orders of the list by name: the expression sorted by, and whether it can be missing (NULL, put last)."""


def _order(sort: str, descending: bool) -> str:
    expression, nullable = LINK_ORDERS[sort]
    way = "DESC" if descending else "ASC"
    first = f"({expression} IS NULL), " if nullable else ""
    return f"{first}{expression} {way}, l.id {way}"


async def page_links(conn: Conn, account_id: str, f: LinkFilter, clicks_since: str, limit: int,
                     offset: int, sort: str = "created", descending: bool = True) -> list[LinkOverviewRecord]:
    """The page's links in the order ``sort`` (a key of :data:`LINK_ORDERS`) names, with their clicks."""
    postgresql = dialect(conn) == "postgresql"
    where, params = _where(account_id, f, postgresql)
    rows = await fetch_all(
        conn,
        f"SELECT l.id, l.body, l.created_at, l.updated_at, {json_member(conn, 'c.body', 'name')} AS campaign_name, "
        "(SELECT count(*) FROM clicks k WHERE k.link_id = l.id AND k.clicked_at >= :since AND k.bot = 0) AS clicks, "
        f"{_TOTAL} AS total_clicks, {_LAST} AS last_clicked_at "
        "FROM links l LEFT JOIN campaigns c ON c.id = l.campaign_id AND c.account_id = l.account_id "
        f"WHERE {where} ORDER BY {_order(sort, descending)} LIMIT :limit OFFSET :offset",
        {**params, "since": clicks_since, "limit": limit, "offset": offset},
    )
    return [LinkOverviewRecord(r[0], orjson.loads(r[1]), r[2], r[3], r[4], int(r[5]), int(r[6]), r[7])
            for r in rows]


async def count_links(conn: Conn, account_id: str, f: LinkFilter) -> int:
    where, params = _where(account_id, f, dialect(conn) == "postgresql")
    row = await fetch_one(conn, f"SELECT count(*) FROM links l WHERE {where}", params)
    return int(row[0]) if row else 0


async def page_documents(conn: Conn, account_id: str, f: LinkFilter, limit: int, offset: int) -> list[Document]:
    """A page of the account's link documents that ``f`` finds, in the order of the resource list (oldest first)."""
    where, params = _where(account_id, f, dialect(conn) == "postgresql")
    rows = await fetch_all(
        conn, f"SELECT l.id, l.body, l.created_at, l.updated_at FROM links l WHERE {where} "
              "ORDER BY l.created_at, l.id LIMIT :limit OFFSET :offset", {**params, "limit": limit, "offset": offset})
    return [Document(r[0], account_id, orjson.loads(r[1]), r[2], r[3]) for r in rows]
