"""What the resolver's handlers read from the store: the link behind a code, and the app association files."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from linksvc.jsoncodec import loads
from linksvc.resolver import wellknown
from linksvc.store import Store
from storage.links import app_settings, link_by_code


@dataclass(frozen=True, slots=True)
class StoredLink:
    """A link as stored: its id, its account and its body (the link's settings)."""

    id: str
    account_id: str
    link: dict[str, Any]


async def link_of_code(db: Store, code: str) -> StoredLink | None:
    """The link at ``code``; None for an unknown code."""
    row = await link_by_code(db.reader, code)
    if row is None:
        return None
    return StoredLink(row["id"], row["account_id"], loads(row["body"]))


async def apple_app_site_association(db: Store) -> dict[str, Any]:
    """``/.well-known/apple-app-site-association`` from the apps of every link (read off the event loop)."""
    return wellknown.apple_app_site_association(await app_settings(db.background))


async def asset_links(db: Store) -> list[dict[str, Any]]:
    """``/.well-known/assetlinks.json`` from the apps of every link (read off the event loop)."""
    return wellknown.asset_links(await app_settings(db.background))
