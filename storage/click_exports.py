"""The clicks export's bookkeeping (issue 37): how far each export target has written each account's clicks, and
the stored clicks to write, with their link's code and campaign.

An account's clicks are taken in id order up to a horizon under which every id is committed
(:func:`storage.conversions.click_horizon`: the largest id on SQLite, whose one writer commits ids in order; on
PostgreSQL the largest once the click transactions under way have committed). So ``id > last_id`` up to the
horizon is exactly "stored and not yet written", on both stores, and a range (``last_id``, ``pending_id``] read
again after a crash holds the same clicks (less any deleted meanwhile). Claiming and advancing are
compare-and-set, so two exporters (two workers, two nodes, ``linksvc export`` beside the service) never both
advance the same range. On SQLite a deleted click above every click left moves watermarks back (the trigger of
migration 0038), since its id is handed out again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from storage.db import Conn, Tx, execute, fetch_all, fetch_one

OWNS = ("click_export_progress",)


@dataclass(frozen=True, slots=True)
class ClickExportProgress:
    """How far a target has written an account's clicks: ``last_id`` written (0: none), ``pending_id`` the end of
    a claimed range not yet written (None: none); ``updated_at`` None where no progress is stored yet."""

    account_id: str
    last_id: int
    pending_id: int | None
    updated_at: str | None = None


@dataclass(frozen=True, slots=True)
class StoredClick:
    """A stored click as the export reads it: never the client's address (which no click holds) nor its visitor
    hash. ``code`` and ``campaign_id`` are its link's (None once the link is gone)."""

    id: int
    account_id: str
    link_id: str
    code: str | None
    campaign_id: str | None
    tracking_id: str
    clicked_at: str
    platform: str
    bot: bool
    answer: str
    utm: dict[str, str]
    browser_family: str | None
    browser_version: str | None
    os_family: str | None
    os_version: str | None
    device_brand: str | None
    device_model: str | None
    country: str | None
    region: str | None
    city: str | None
    referrer_host: str | None
    rule: str | None
    variant: str | None


_CLICK_COLUMNS = ("c.id, c.account_id, c.link_id, l.code, l.campaign_id, c.tracking_id, c.clicked_at, c.platform, "
                  "c.bot, c.answer, c.utm, c.browser_family, c.browser_version, c.os_family, c.os_version, "
                  "c.device_brand, c.device_model, c.country, c.region, c.city, c.referrer_host, c.rule, c.variant")


def _click_of(row: Any) -> StoredClick:
    utm = row[10]
    decoded = orjson.loads(utm) if isinstance(utm, (str, bytes)) else (utm or {})
    return StoredClick(int(row[0]), row[1], row[2], row[3], row[4], row[5], row[6], row[7], bool(row[8]), row[9],
                       decoded if isinstance(decoded, dict) else {}, *row[11:23])


async def accounts_to_export(conn: Conn, target: str, horizon: int) -> list[ClickExportProgress]:
    """Accounts with clicks past their watermark up to ``horizon``, or with a claimed range, with their progress.
    (SQLite: every index ends with the id, so ``account_id = ? AND id > ?`` is one range of ``clicks_account``.)"""
    rows = await fetch_all(
        conn,
        "SELECT a.id AS account_id, COALESCE(p.last_id, 0) AS last_id, p.pending_id AS pending_id "
        "FROM accounts a LEFT JOIN click_export_progress p ON p.target = ? AND p.account_id = a.id "
        "WHERE p.pending_id IS NOT NULL OR EXISTS (SELECT 1 FROM clicks c WHERE c.account_id = a.id "
        "AND c.id > COALESCE(p.last_id, 0) AND c.id <= ?) ORDER BY a.id",
        (target, horizon),
    )
    return [ClickExportProgress(r[0], int(r[1]), None if r[2] is None else int(r[2])) for r in rows]


async def clicks_between(conn: Conn, account_id: str, after: int, upto: int,
                         limit: int | None = None) -> list[StoredClick]:
    """The account's clicks with ids in (``after``, ``upto``], in id order (the first ``limit`` when given)."""
    sql = (f"SELECT {_CLICK_COLUMNS} FROM clicks c LEFT JOIN links l ON l.id = c.link_id "
           "WHERE c.account_id = ? AND c.id > ? AND c.id <= ? ORDER BY c.id")
    params: tuple[Any, ...] = (account_id, after, upto)
    if limit is not None:
        sql += " LIMIT ?"
        params += (limit,)
    return [_click_of(row) for row in await fetch_all(conn, sql, params)]


async def count_clicks_between(conn: Conn, account_id: str, after: int, upto: int) -> int:
    """How many of the account's clicks have ids in (``after``, ``upto``] (the progress of ``linksvc export``)."""
    row = await fetch_one(conn, "SELECT count(*) FROM clicks WHERE account_id = ? AND id > ? AND id <= ?",
                          (account_id, after, upto))
    return int(row[0]) if row else 0


async def claim(tx: Tx, target: str, account_id: str, last_id: int, pending_id: int, now: str) -> bool:
    """Claims (``last_id``, ``pending_id``] for writing; False when the progress is no longer at ``last_id`` or
    another range is claimed (another exporter got there first)."""
    changed = await execute(
        tx,
        "INSERT INTO click_export_progress (target, account_id, last_id, pending_id, updated_at) "
        "VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (target, account_id) DO UPDATE SET pending_id = excluded.pending_id, "
        "updated_at = excluded.updated_at "
        "WHERE click_export_progress.last_id = excluded.last_id AND click_export_progress.pending_id IS NULL",
        (target, account_id, last_id, pending_id, now),
    )
    return changed == 1


async def advance(tx: Tx, target: str, account_id: str, last_id: int, pending_id: int, now: str) -> bool:
    """Records the claimed range as written; False when it already was (by another exporter), or when the
    range was given up meanwhile (SQLite: its last clicks were deleted)."""
    changed = await execute(
        tx,
        "UPDATE click_export_progress SET last_id = pending_id, pending_id = NULL, updated_at = ? "
        "WHERE target = ? AND account_id = ? AND last_id = ? AND pending_id = ?",
        (now, target, account_id, last_id, pending_id),
    )
    return changed == 1


async def progress(conn: Conn, target: str) -> list[ClickExportProgress]:
    """Every account's progress for ``target``."""
    rows = await fetch_all(
        conn,
        "SELECT account_id, last_id, pending_id, updated_at FROM click_export_progress WHERE target = ? "
        "ORDER BY account_id",
        (target,),
    )
    return [ClickExportProgress(r[0], int(r[1]), None if r[2] is None else int(r[2]), r[3]) for r in rows]
