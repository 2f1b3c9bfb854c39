"""Deferred deep links: an app's first start claims the click that led to its install, once.

The app hands over what it has of the click: on Android the install referrer (the ``referrer`` parameter of
the Play URL the resolver sent, as the Play Install Referrer API returns it: decoded once, a query string
with the UTM fields, ``tracking_id`` and ``link``); on iOS the text the landing page put on the pasteboard
when the person tapped "Open in the app" (:func:`pasteboard_token`). Either names a tracking_id; the click
behind it, in the caller's account only, gives the link (for a click on a long Dynamic Link, the long link
the referrer names, checked again: :func:`linksvc.links.fdl_service.long_link_of_referrer`), and the install
is recorded (one per click: the store's unique key decides, so a second claim, even one at the same moment,
is refused) before the answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from linksvc.clock import iso, utcnow
from linksvc.errors import Conflict, InvalidField, NotFound
from linksvc.links import service
from linksvc.links.clicks import ClickRecorder
from linksvc.links.fdl_service import long_link_of_referrer
from linksvc.links.urls import query_values, with_query
from linksvc.links.utm import UTM_FIELDS
from linksvc.resources.service import Resources
from linksvc.store import Store
from storage import installs as repo
from storage.clicks import clicks_for_tracking_ids

TOKEN_PREFIX = "linksvc:deferred:"
MAX_TRACKING_ID = 200  # what clicks store of a tracking_id
SOURCES = {"android": "install_referrer", "ios": "pasteboard"}


def pasteboard_token(tracking_id: str) -> str:
    """The text the iOS landing page copies, and the only form of ``token`` a claim accepts."""
    return f"{TOKEN_PREFIX}{tracking_id}"


@dataclass(frozen=True)
class ClaimKey:
    """What a claim names: the click's tracking_id and, from an install referrer, the UTM it carried and the
    address clicked (``link``: the short URL, or the long Dynamic Link itself)."""

    tracking_id: str
    utm: dict[str, str]
    link: str | None = None


def _checked(tracking_id: str, field: str, what: str) -> str:
    tracking_id = tracking_id.strip()
    if not tracking_id:
        raise InvalidField(field, f"{what} holds no tracking_id", rule="missing")
    if len(tracking_id) > MAX_TRACKING_ID or not tracking_id.isprintable():
        raise InvalidField(field, f"{what} holds a tracking_id that no click carries", rule="invalid")
    return tracking_id


def key_of_referrer(referrer: str) -> ClaimKey:
    """The raw install referrer (decoded once, as the Play API returns it): a query string whose values are
    percent-encoded. Fields besides tracking_id, link and the UTM are tolerated."""
    fields = query_values("?" + referrer.strip().lstrip("?"))
    tracking_id = _checked(fields.get("tracking_id", ""), "install_referrer", "the install referrer")
    return ClaimKey(tracking_id, {name: fields[name] for name in UTM_FIELDS if fields.get(name)},
                    fields.get("link") or None)


def key_of_token(token: str) -> ClaimKey:
    """``linksvc:deferred:{tracking_id}``, exactly; a bare tracking_id is refused (a pasteboard holds whatever
    the person copied last: only our prefix says the text is ours)."""
    token = token.strip()
    if not token.startswith(TOKEN_PREFIX):
        raise InvalidField("token", f"must be the text the landing page copied: {TOKEN_PREFIX}<tracking_id>",
                           rule="pattern")
    return ClaimKey(_checked(token[len(TOKEN_PREFIX):], "token", "the token"), {})


async def claim(db: Store, clicks: ClickRecorder, account_id: str, platform: str, key: ClaimKey,
                app_version: str | None) -> dict[str, Any]:
    """The click behind ``key`` in the account, its install recorded; 404 when the account has no such
    click, 409 when the click was claimed before."""
    await clicks.flush_before_counting()  # a click answered a moment ago is still in the recorder's buffer
    click = (await clicks_for_tracking_ids(db.reader, account_id, [key.tracking_id])).get(key.tracking_id)
    stored = None if click is None or click.code is None else await service.link_of_code(db, click.code)
    if click is None or stored is None or stored.account_id != account_id or stored.id != click.link_id:
        raise NotFound("Click not found", f"no click of this account carried the tracking_id {key.tracking_id}")
    claimed_at = iso(utcnow())
    install = repo.Install(account_id, key.tracking_id, click.link_id, platform, SOURCES[platform], app_version,
                           click.clicked_at, claimed_at)
    if not await db.write(lambda tx: repo.insert_install(tx, install)):
        raise Conflict("Already claimed",
                       f"the install of the click {key.tracking_id} was claimed before: a click is claimed once")
    # A click on a long Dynamic Link is recorded against its domain's long-links link, which leads only to the
    # domain's root: the link the person clicked is the long link the install referrer names, checked again.
    link = await long_link_of_referrer(db, stored, key.link) or stored.link
    utm: dict[str, str | None] = {name: click.utm.get(name) or key.utm.get(name) or None for name in UTM_FIELDS}
    carried = {**{name: value for name, value in utm.items() if value}, "tracking_id": key.tracking_id}
    return {
        "deeplink": with_query(link["deeplink"], carried) if link.get("deeplink") else None,
        "destination_url": with_query(link["destination_url"], carried),
        "utm": utm,
        "tracking_id": key.tracking_id,
        "link_id": click.link_id,
        "link_code": click.code,
        "campaign_id": link.get("campaign_id"),
        "clicked_at": click.clicked_at,
        "claimed_at": claimed_at,
        "platform": platform,
    }


async def installs_of_link(db: Store, resources: Resources, account_id: str, link_id: str,
                           days: int) -> dict[str, Any]:
    """The link's installs claimed in the last ``days`` (404 unless the account's link): the total, per day
    split by platform, and per source."""
    await resources.get(account_id, "links", link_id)
    since = iso(utcnow() - timedelta(days=days))
    rows = await repo.install_counts(db.reader, account_id, link_id, since)
    by_day: dict[str, dict[str, Any]] = {}
    for day, platform, _source, n in rows:
        entry = by_day.setdefault(day, {"day": day, "installs": 0, "android": 0, "ios": 0})
        entry["installs"] += n
        entry[platform] = entry.get(platform, 0) + n
    by_source: dict[str, int] = dict.fromkeys(SOURCES.values(), 0)
    for _, _, source, n in rows:
        by_source[source] = by_source.get(source, 0) + n
    return {"link_id": link_id, "since": since, "installs": sum(row[3] for row in rows),
            "by_day": list(by_day.values()), "by_source": by_source}
