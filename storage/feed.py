"""The live feed's reads (issue 37): an account's clicks and events stored after a position, and where the stored
ones end. Nothing is written here; the feed's position is the client's (its ``Last-Event-ID``).

Clicks are read by id up to a *horizon*: the largest id such that every click up to it that will ever be stored
is stored. On SQLite the one writer at a time commits ids in order, so the horizon is ``max(id)``. On PostgreSQL
ids commit out of order; the conversion rollups' mark (``conversion_click_mark``) is such a horizon already
(``storage.conversions.click_horizon`` waited for the click transactions under way before the pass moved it),
so the feed reads behind it and takes no lock of its own: a click reaches the feed with the next rollup pass.

Events are read by *position*: on SQLite their ``rowid`` (one writer at a time: rowids grow in commit order, as
the export reads them, ``storage.exports``); on PostgreSQL, which has no such order without a column of its own,
``(received_at, id)`` of the events received at least :data:`EVENT_SETTLE_SECONDS` ago (a batch commits well
within that of its events' arrival), as the text ``received_at id``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from storage.db import Conn, Row, dialect, fetch_all, fetch_one

OWNS: tuple[str, ...] = ()

EVENT_SETTLE_SECONDS = 5.0
"""On PostgreSQL, how old an event's ``received_at`` is before the feed reads it: a batch of events taken at one
moment may commit after another's taken later, and a position already past it would never show it."""

_CLICK_COLUMNS = ("c.id, c.link_id, l.code, c.tracking_id, c.clicked_at, c.platform, c.bot, c.answer, c.country, "
                  "c.referrer_host, c.utm, c.rule, c.variant")


@dataclass(frozen=True, slots=True)
class FeedClick:
    """A stored click as the feed shows it: never the client's address (clicks do not store it) nor its user
    agent."""

    id: int
    link_id: str
    code: str | None  # None once the link is deleted
    tracking_id: str
    clicked_at: str
    platform: str
    bot: bool
    answer: str
    country: str | None
    referrer_host: str | None
    utm: dict[str, str]
    rule: str | None
    variant: str | None


@dataclass(frozen=True, slots=True)
class FeedEvent:
    """A stored event as the feed shows it, with its position in the account's events."""

    position: str
    id: str
    type: str
    customer_id: str | None
    issued_at: str
    received_at: str
    attribution: dict[str, Any]


def _click_of(row: Row) -> FeedClick:
    utm = row["utm"]
    return FeedClick(
        id=int(row["id"]), link_id=row["link_id"], code=row["code"], tracking_id=row["tracking_id"],
        clicked_at=row["clicked_at"], platform=row["platform"], bot=bool(row["bot"]), answer=row["answer"],
        country=row["country"], referrer_host=row["referrer_host"],
        utm=orjson.loads(utm) if isinstance(utm, str | bytes) else dict(utm or {}),
        rule=row["rule"], variant=row["variant"],
    )


def _event_of(row: Row, postgres: bool) -> FeedEvent:
    body = row["body"]
    decoded = orjson.loads(body) if isinstance(body, str | bytes) else body
    attribution = decoded.get("attribution") if isinstance(decoded, dict) else None
    position = f"{row['received_at']} {row['id']}" if postgres else str(row["position"])
    return FeedEvent(position=position, id=row["id"], type=row["type"], customer_id=row["customer_id"],
                     issued_at=row["issued_at"], received_at=row["received_at"],
                     attribution=attribution if isinstance(attribution, dict) else {})


def valid_event_position(conn: Conn, position: str) -> bool:
    """Whether ``position`` is an event position of this store ("" is before the first event)."""
    if position == "":
        return True
    if dialect(conn) == "postgresql":
        received_at, sep, event_id = position.partition(" ")
        return bool(sep and received_at and event_id)
    return position.isascii() and position.isdigit() and len(position) <= 19


async def click_horizon(conn: Conn) -> int:
    """The largest click id such that every click up to it is stored (see the module's docstring)."""
    if dialect(conn) == "postgresql":
        row = await fetch_one(conn, "SELECT counted FROM conversion_click_mark WHERE name = 'clicks'")
    else:
        row = await fetch_one(conn, "SELECT max(id) FROM clicks")
    return int(row[0]) if row is not None and row[0] is not None else 0


async def clicks_between(conn: Conn, account_id: str, after: int, upto: int, limit: int,
                         newest: bool = False) -> list[FeedClick]:
    """The account's clicks with ``after < id <= upto``, in id order: the first ``limit`` of them, or with
    ``newest`` the last ``limit``."""
    if upto <= after:
        return []
    order = "DESC" if newest else "ASC"
    rows = await fetch_all(conn, f"SELECT {_CLICK_COLUMNS} FROM clicks c LEFT JOIN links l ON l.id = c.link_id "
                                 f"WHERE c.account_id = ? AND c.id > ? AND c.id <= ? ORDER BY c.id {order} LIMIT ?",
                           (account_id, after, upto, limit))
    clicks = [_click_of(row) for row in rows]
    return clicks[::-1] if newest else clicks


async def events_between(conn: Conn, account_id: str, after: str, upto: str | None, limit: int,
                         settled: str, newest: bool = False) -> list[FeedEvent]:
    """The account's events after position ``after`` and up to position ``upto`` (None: up to the last one read
    as settled, received at or before ``settled``, which only PostgreSQL heeds), in position order: the first
    ``limit`` of them, or with ``newest`` the last ``limit``."""
    order = "DESC" if newest else "ASC"
    if dialect(conn) == "postgresql":
        clauses, params = ["account_id = ?", "received_at <= ?"], [account_id, settled]
        if after:
            clauses.append("(received_at, id) > (?, ?)")
            params += after.split(" ", 1)
        if upto is not None:
            clauses.append("(received_at, id) <= (?, ?)")
            params += upto.split(" ", 1) if upto else ["", ""]
        rows = await fetch_all(conn, "SELECT id, type, customer_id, issued_at, received_at, body FROM events WHERE "
                                     f"{' AND '.join(clauses)} ORDER BY received_at {order}, id {order} LIMIT ?",
                               [*params, limit])
        events = [_event_of(row, True) for row in rows]
    else:
        clauses, sqlite_params = ["account_id = ?", "rowid > ?"], [account_id, int(after or 0)]
        if upto is not None:
            clauses.append("rowid <= ?")
            sqlite_params.append(int(upto or 0))
        rows = await fetch_all(conn, "SELECT rowid AS position, id, type, customer_id, issued_at, received_at, body "
                                     f"FROM events WHERE {' AND '.join(clauses)} ORDER BY rowid {order} LIMIT ?",
                               [*sqlite_params, limit])
        events = [_event_of(row, False) for row in rows]
    return events[::-1] if newest else events


async def last_event_position(conn: Conn, account_id: str, settled: str) -> str:
    """The position of the account's last event ("" when it has none): on PostgreSQL, of those received at or
    before ``settled``."""
    last = await events_between(conn, account_id, "", None, 1, settled, newest=True)
    return last[0].position if last else ""


def position_key(position: str) -> tuple[int, str]:
    """What orders two event positions of one store: a rowid's number (SQLite), or the text ``received_at id``
    (PostgreSQL's ``(received_at, id)`` order, the columns being ``COLLATE "C"``)."""
    if position == "":
        return (-1, "")
    if position.isdigit():
        return (int(position), "")
    return (0, position)
