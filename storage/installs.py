"""Installs claimed from a click (deferred deep links): one row per click claimed, and a link's counts."""

from __future__ import annotations

from dataclasses import dataclass

from storage.db import Conn, Tx, execute, fetch_all

OWNS = ("installs",)


@dataclass(frozen=True, slots=True)
class Install:
    account_id: str
    tracking_id: str
    link_id: str
    platform: str  # android | ios
    source: str  # install_referrer | pasteboard
    app_version: str | None
    clicked_at: str
    claimed_at: str


async def insert_install(tx: Tx, install: Install) -> bool:
    """Records the install; False when the account already has one for this tracking_id (the unique key
    decides, so of two claims at once exactly one is recorded, on either store)."""
    added = await execute(
        tx,
        "INSERT INTO installs (account_id, tracking_id, link_id, platform, source, app_version, clicked_at, "
        "claimed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (account_id, tracking_id) DO NOTHING",
        (install.account_id, install.tracking_id, install.link_id, install.platform, install.source,
         install.app_version, install.clicked_at, install.claimed_at),
    )
    return added == 1


async def install_counts(conn: Conn, account_id: str, link_id: str, since: str) -> list[tuple[str, str, str, int]]:
    """(day, platform, source, count) of the link's installs claimed since ``since``, by day."""
    rows = await fetch_all(
        conn,
        "SELECT substr(claimed_at, 1, 10) AS day, platform, source, count(*) FROM installs "
        "WHERE account_id = ? AND link_id = ? AND claimed_at >= ? GROUP BY day, platform, source "
        "ORDER BY day, platform, source",
        (account_id, link_id, since),
    )
    return [(str(row[0]), str(row[1]), str(row[2]), int(row[3])) for row in rows]
