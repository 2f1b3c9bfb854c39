"""An account's link-preview defaults: the title, description, image and site name of the page that
link-preview fetchers get when a link does not set its own (one row per account, none until set)."""

from __future__ import annotations

from dataclasses import dataclass

from storage.db import Conn, Tx, execute, fetch_one

OWNS = ("link_preview_defaults",)


@dataclass(frozen=True, slots=True)
class PreviewDefaults:
    account_id: str
    title: str | None
    description: str | None
    image_url: str | None
    site_name: str | None
    updated_at: str


async def get_defaults(conn: Conn, account_id: str) -> PreviewDefaults | None:
    row = await fetch_one(
        conn,
        "SELECT account_id, title, description, image_url, site_name, updated_at FROM link_preview_defaults "
        "WHERE account_id = ?",
        (account_id,),
    )
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
