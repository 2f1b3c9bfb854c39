"""An account's link-preview defaults: the title, description, image and site name of the page that
link-preview fetchers get when a link does not set its own (one row per account, none until set)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from storage.db import Conn, Tx, WouldWait, execute, fetch_one

OWNS = ("link_preview_defaults",)


@dataclass(frozen=True, slots=True)
class PreviewDefaults:
    account_id: str
    title: str | None
    description: str | None
    image_url: str | None
    site_name: str | None
    updated_at: str


_DEFAULTS = ("SELECT account_id, title, description, image_url, site_name, updated_at FROM link_preview_defaults "
             "WHERE account_id = ?")


async def get_defaults(conn: Conn, account_id: str) -> PreviewDefaults | None:
    row = await fetch_one(conn, _DEFAULTS, (account_id,))
    return None if row is None else PreviewDefaults(*row)


def get_defaults_now(conn: Conn, account_id: str) -> PreviewDefaults | None:
    """:func:`get_defaults` without awaiting, on a plain ``sqlite3`` connection (the event loop's reader), for a
    path that answers at once (the resolver's fast lane); :class:`~storage.db.WouldWait` on any other."""
    if not isinstance(conn, sqlite3.Connection):
        raise WouldWait(type(conn).__name__)
    row = conn.execute(_DEFAULTS, (account_id,)).fetchone()
    return None if row is None else PreviewDefaults(*row)


async def put_defaults(tx: Tx, defaults: PreviewDefaults) -> None:
    await execute(
        tx,
        "INSERT INTO link_preview_defaults (account_id, title, description, image_url, site_name, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (account_id) DO UPDATE SET title = excluded.title, "
        "description = excluded.description, image_url = excluded.image_url, site_name = excluded.site_name, "
        "updated_at = excluded.updated_at",
        (defaults.account_id, defaults.title, defaults.description, defaults.image_url, defaults.site_name,
         defaults.updated_at),
    )
