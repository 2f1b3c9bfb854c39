"""What the resolver's handlers read from the store: the link behind a code, and the app association files."""

from __future__ import annotations

from typing import Any

from linksvc.resolver import wellknown
from linksvc.store import Store
from storage.links import StoredLink, app_settings, link_by_code

__all__ = ["StoredLink", "apple_app_site_association", "asset_links", "link_of_code"]


async def link_of_code(db: Store, code: str) -> StoredLink | None:
    """The link at ``code``; None for an unknown code."""
    return await link_by_code(db.reader, code)


async def apple_app_site_association(db: Store) -> dict[str, Any]:
    """``/.well-known/apple-app-site-association`` from the apps of every link (read off the event loop)."""
    return wellknown.apple_app_site_association(await app_settings(db.background))


async def asset_links(db: Store) -> list[dict[str, Any]]:
    """``/.well-known/assetlinks.json`` from the apps of every link (read off the event loop)."""
    return wellknown.asset_links(await app_settings(db.background))
