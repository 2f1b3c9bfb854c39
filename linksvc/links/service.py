"""What the resolver's handlers read from the store: the link behind a code, and the app association files."""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass
from typing import Any

import orjson

from linksvc.domains.hosts import LIVE, DomainRecord, held_domains
from linksvc.links import stats, wellknown
from linksvc.links.clicks import ClickRecorder
from linksvc.links.decide import unavailable
from linksvc.links.utm import edit_utm
from linksvc.readmodel import ReadModel, read_model
from linksvc.resources.service import Resources
from linksvc.rules.engine import Rules, compile_rules, target_codes, target_fields
from linksvc.store import Store, StoreError
from storage.clicks import human_clicks_of
from storage.db import WouldWait
from storage.links import (
    AppSettings,
    EncodedLink,
    StoredLink,
    account_app_settings,
    encoded_link_by_code,
    encoded_link_by_code_now,
    encoded_links,
    links_at_codes,
)

__all__ = ["AppSettings", "HeldLink", "RuledLink", "StoredLink",
           "apple_app_site_association", "apps_of_accounts", "apps_of_host", "asset_links",
           "held", "held_link", "held_links", "hold_now", "link_of_code"]


MAX_LINKS_HELD = 100_000  # links by code each worker keeps in memory (docs/benchmarks.md: their size)


@dataclass(frozen=True, slots=True)
class RuledLink(StoredLink):
    """A stored link with its rules compiled (:mod:`linksvc.rules.engine`); ``link`` holds the rest of its body."""

    rules: Rules | None = None


@dataclass(frozen=True, slots=True)
class HeldLink:
    """A link as each worker holds it: the body without its rules, still the stored JSON, and the rules
    compiled once, their link targets read with them (so a click decodes no rule and reads nothing)."""

    id: str
    account_id: str
    body: bytes
    rules: Rules | None

    def decoded(self) -> RuledLink:
        return RuledLink(self.id, self.account_id, orjson.loads(self.body), self.rules)


ORGANISING = ("tags", "folder")
"""Members of a link's document no click reads (issue 36): left out of the held body, so that a tagged link is
decoded per click exactly as an untagged one was."""


def _held(encoded: EncodedLink, targets: Mapping[str, Any]) -> HeldLink:
    """``encoded`` as held; ``targets`` are the links its rules may lead to, by code (StoredLink or EncodedLink)."""
    if b'"rules"' not in encoded.body and b'"tags"' not in encoded.body and b'"folder"' not in encoded.body:
        return HeldLink(encoded.id, encoded.account_id, encoded.body, None)
    body = orjson.loads(encoded.body)
    for name in ORGANISING:
        body.pop(name, None)
    rules = body.pop("rules", None)
    if not rules:
        return HeldLink(encoded.id, encoded.account_id, orjson.dumps(body), None)
    fields = {}
    for code in target_codes(rules):
        other = targets.get(code)
        if other is not None and other.account_id == encoded.account_id:  # one hop, within the account
            link = other.link if isinstance(other, StoredLink) else orjson.loads(other.body)
            fields[code] = target_fields(link)
    return HeldLink(encoded.id, encoded.account_id, orjson.dumps(body), compile_rules(rules, fields))


async def _load_held(db: Store, code: str) -> HeldLink | None:
    encoded = await encoded_link_by_code(db.reader, code)
    if encoded is None:
        return None
    targets: Mapping[str, Any] = {}
    if b'"link"' in encoded.body:
        rules = orjson.loads(encoded.body).get("rules") or []
        targets = await links_at_codes(db.reader, target_codes(rules)) if target_codes(rules) else {}
    return _held(encoded, targets)


async def link_of_code(db: Store, code: str) -> RuledLink | None:
    """The link at ``code``; None for an unknown code. Held in memory by each worker until a link changes."""
    model: ReadModel[str, HeldLink] = read_model(db, "links", MAX_LINKS_HELD)
    held = await model.get(code, lambda: _load_held(db, code))
    return None if held is None else held.decoded()


def held(db: Store, code: str) -> HeldLink | None:
    """The link at ``code`` as this worker holds it now, else None (unknown, or not read yet): no I/O, for a
    path that answers without awaiting anything and leaves everything else to :func:`link_of_code`."""
    model: ReadModel[str, HeldLink] = read_model(db, "links", MAX_LINKS_HELD)
    return model.peek(code)


def held_links(db: Store) -> list[tuple[str, HeldLink]]:
    """Every link this worker holds now, by code: no I/O."""
    model: ReadModel[str, HeldLink] = read_model(db, "links", MAX_LINKS_HELD)
    return model.items()


def hold_now(db: Store, code: str) -> HeldLink | None:
    """:func:`held`, or else the link at ``code`` read now and held, without awaiting: for the resolver's fast
    lane, on a store whose reader answers at once (SQLite's: one indexed read). So a link the worker does not
    hold (every link after any link is changed, which drops what the worker holds; a link made after the
    worker's start; one beyond :data:`MAX_LINKS_HELD`) is answered on the lane from its first click, not by the
    handler. None when no link has the code, when the store answers only by awaiting (PostgreSQL) or fails, or
    when the link's rules lead to other links (:func:`link_of_code` reads those with it): the handler answers."""
    model: ReadModel[str, HeldLink] = read_model(db, "links", MAX_LINKS_HELD)
    found = model.peek(code)
    if found is not None:
        return found
    generation = db.generation("links")  # before the read: a change committed meanwhile is not kept
    try:
        encoded = encoded_link_by_code_now(db.reader, code)
    except (WouldWait, *StoreError):
        return None
    if encoded is None or b'"link"' in encoded.body:
        return None
    link = _held(encoded, {})
    model.keep(code, link, generation)
    return link


def held_link(db: Store, code: str) -> RuledLink | None:
    """:func:`held`, decoded."""
    found = held(db, code)
    return None if found is None else found.decoded()


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


async def lifecycle_of_link(db: Store, resources: Resources, clicks: ClickRecorder, account_id: str, link_id: str,
                            now: float) -> dict[str, Any]:
    """Where the link stands in its lifecycle at ``now`` (404 unless the account's link): open or why not (the
    resolver's own rule, :func:`linksvc.links.decide.unavailable`), its clicks by people so far (the count
    ``max_clicks`` is held against, every click taken so far written first) and how many are left."""
    link = await resources.get(account_id, "links", link_id)
    await clicks.flush_before_counting()
    human = await human_clicks_of(db.reader, link_id)
    state = unavailable(link, now, human)
    limit = link.get("max_clicks")
    return {"link_id": link_id, "open": state is None, "reason": None if state is None else state.reason,
            "text": "open" if state is None else state.text, "status": None if state is None else state.status,
            "location": None if state is None else state.location, "human_clicks": human, "max_clicks": limit,
            "clicks_left": None if limit is None else max(0, int(limit) - human),
            "password_protected": bool(link.get("password_protected"))}


async def hold_links(db: Store) -> int:
    """Fills this worker's links from the store at its start (the most recently changed first, up to
    :data:`MAX_LINKS_HELD`), so that the first click on each link reads no row; returns how many are held. A
    link whose rules lead to a link not read with it is left for its first click to read."""
    model: ReadModel[str, HeldLink] = read_model(db, "links", MAX_LINKS_HELD)

    async def load() -> list[tuple[str, HeldLink]]:
        found = await encoded_links(db.background, MAX_LINKS_HELD)
        by_code = dict(found)
        held = []
        for code, encoded in found:
            item = _held(encoded, by_code)
            if item.rules is not None and any(rule.target is None for rule in item.rules.rules):
                continue
            held.append((code, item))
        return held

    return await model.fill(load)


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
