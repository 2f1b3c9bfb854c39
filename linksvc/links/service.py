"""What the resolver's handlers read from the store: the link behind a code, and the app association files."""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import Any

from linksvc.domains.hosts import LIVE, DomainRecord, held_domains
from linksvc.links import stats, wellknown
from linksvc.links.clicks import ClickRecorder
from linksvc.links.utm import edit_utm
from linksvc.readmodel import ReadModel, read_model
from linksvc.resources.service import Resources
from linksvc.store import Store
from storage.links import (
    AppSettings,
    EncodedLink,
    StoredLink,
    account_app_settings,
    encoded_link_by_code,
    encoded_links,
)

__all__ = ["AppSettings", "StoredLink", "apple_app_site_association", "apps_of_accounts", "apps_of_host", "asset_links",
           "held_link", "link_of_code"]


MAX_LINKS_HELD = 100_000  # links by code each worker keeps in memory (docs/benchmarks.md: their size)


async def link_of_code(db: Store, code: str) -> StoredLink | None:
    """The link at ``code``; None for an unknown code. Held in memory by each worker until a link changes."""
    model: ReadModel[str, EncodedLink] = read_model(db, "links", MAX_LINKS_HELD)
    held = await model.get(code, lambda: encoded_link_by_code(db.reader, code))
    return None if held is None else held.decoded()


def held_link(db: Store, code: str) -> StoredLink | None:
    """The link at ``code`` if this worker holds it now, else None (unknown, or not read yet): no I/O, for a
    path that answers without awaiting anything and leaves everything else to :func:`link_of_code`."""
    model: ReadModel[str, EncodedLink] = read_model(db, "links", MAX_LINKS_HELD)
    held = model.peek(code)
    return None if held is None else held.decoded()


async def edit_link_utm(resources: Resources, account_id: str, link_id: str, changes: Mapping[str, str | None]
                        ) -> dict[str, Any]:
    """Edits the UTM fields of the link's destination (:func:`linksvc.links.utm.edit_utm`) and saves it."""
    current = await resources.get(account_id, "links", link_id)
    destination = edit_utm(current["destination_url"], changes)
    return await resources.update(account_id, "links", link_id, {"destination_url": destination}, partial=True)


async def clicks_of_link(db: Store, resources: Resources, clicks: ClickRecorder, account_id: str, link_id: str,
                         days: int, limit: int = stats.DEFAULT_GROUPS) -> dict[str, Any]:
    """The link's clicks of the last ``days`` (404 unless the account's link); every click taken so far counts.
    Read on the background reader: it scans the link's clicks, which the event loop's reader must not wait for."""
    await resources.get(account_id, "links", link_id)
    await clicks.flush_before_counting()
    return await stats.link_clicks(db.background, link_id, days, limit)


async def hold_links(db: Store) -> int:
    """Fills this worker's links from the store at its start (the most recently changed first, up to
    :data:`MAX_LINKS_HELD`), so that the first click on each link reads no row; returns how many are held."""
    model: ReadModel[str, EncodedLink] = read_model(db, "links", MAX_LINKS_HELD)
    return await model.fill(lambda: encoded_links(db.background, MAX_LINKS_HELD))


async def apps_of_host(db: Store, shared: bool, domain: DomainRecord | None) -> list[AppSettings] | None:
    """The apps a host's association files list: on a live domain its account's; on a shared host those of the
    accounts without a live domain; None for any other host (unknown, or a pending domain)."""
    if shared:
        held = await held_domains(db).current()
        return await apps_of_accounts(db, excluded={row.account_id for row in held.values() if row.status == LIVE})
    if domain is None or domain.status != LIVE:
        return None
    return await apps_of_accounts(db, only=domain.account_id)


async def apps_of_accounts(db: Store, only: str | None = None, excluded: Set[str] = frozenset()
                           ) -> list[AppSettings]:
    """The apps of the links of one account (``only``), or of every account but ``excluded`` (read off the event
    loop): what a host's association files list (a custom domain's account; on a shared host, the accounts
    without a live domain)."""
    rows = await account_app_settings(db.background)
    return [apps for account, apps in rows if (account == only if only is not None else account not in excluded)]


def apple_app_site_association(apps: list[AppSettings]) -> dict[str, Any]:
    """``/.well-known/apple-app-site-association`` from the apps of :func:`apps_of_accounts`."""
    return wellknown.apple_app_site_association(apps)


def asset_links(apps: list[AppSettings]) -> list[dict[str, Any]]:
    """``/.well-known/assetlinks.json`` from the apps of :func:`apps_of_accounts`."""
    return wellknown.asset_links(apps)
