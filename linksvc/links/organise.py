"""Organising links (issue 36): the list's search, the account's tags and folders, and the bulk actions on a
selection of links (tag, move to a folder, disable or enable, export as CSV).

A link's ``tags`` (names, several) and ``folder`` (a name, one) live in its document; saving the document copies
them where a query finds them by index (``storage.link_tags``). Every bulk change goes through the one document
save (:func:`linksvc.resources.service.save`), so a link changed by a bulk action is validated, stored and copied
exactly as a PATCH would; the selection changes whole or not at all, and each link it changes gets its own audit
entry (docs/decisions.md, "Bulk actions (issue 36)").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, quote_plus

from linksvc.accounts.service import get_account
from linksvc.domains.hosts import short_url
from linksvc.errors import Issues
from linksvc.links.utm import UTM_FIELDS, utm_of_url
from linksvc.people.audit import record_each
from linksvc.resources.kinds import KINDS
from linksvc.resources.models import tag_names
from linksvc.resources.service import save, view
from linksvc.spreadsheet import csv_text
from linksvc.store import Store, account_turn, in_one_unit
from storage import documents
from storage import link_tags as repo
from storage.db import Conn, Tx
from storage.documents import Document
from storage.link_overview import LinkFilter, count_links, page_documents

MAX_SELECTION = 500
"""Links one bulk action names at most (the list's largest page)."""
LINKS = KINDS["links"]


@dataclass(frozen=True)
class LinkSearch:
    """What the list of links looks for; every part given must hold. ``q``: text in the code, the destination
    URL (its UTM values included), the folder or a tag's name, whatever the case; ``tag``: a tag the link has;
    ``folder``: the link's folder; ``utm``: a UTM field's value in the destination URL, whatever the case."""

    q: str | None = None
    tag: str | None = None
    folder: str | None = None
    utm: Mapping[str, str] = field(default_factory=dict)


def link_filter(search: LinkSearch) -> LinkFilter:
    needle = (search.q or "").strip().lower() or None
    tag = (search.tag or "").strip() or None
    folder = (search.folder or "").strip() or None
    utm = tuple(utm_texts(name, value) for name, value in search.utm.items() if value.strip())
    return LinkFilter(needle, tag, folder, utm)


def utm_texts(name: str, value: str) -> tuple[str, ...]:
    """The lower-case texts one of which a destination URL holds when its ``name`` parameter is ``value``: the
    parameter after ``?`` or ``&`` and before ``&`` (the store reads the URL's ``#`` as ``&`` and adds one at its
    end), its value as typed or in any of the encodings URLs use (``%20`` or ``+`` for a space, ``/`` and ``:``
    kept or encoded)."""
    value = value.strip()
    spellings = dict.fromkeys(spelled.lower() for spelled in (
        value, quote_plus(value, safe=""), quote(value, safe=""), quote(value, safe="/:@!$'()*,;"),
        quote_plus(value, safe="/:@!$'()*,;")))
    return tuple(f"{before}{name}={spelled}&" for spelled in spellings for before in "?&")


async def list_links(db: Store, account_id: str, search: LinkSearch, limit: int, offset: int
                     ) -> tuple[list[dict[str, Any]], int]:
    """The admin API's ``GET .../links``: a page of the link documents ``search`` finds, oldest first, and how many
    it finds."""
    conn = db.reader
    await get_account(conn, account_id)
    found = link_filter(search)
    rows = await page_documents(conn, account_id, found, limit, offset)
    return [await view(conn, LINKS, account_id, row) for row in rows], await count_links(conn, account_id, found)


TAG_COLORS = ("gray", "red", "orange", "yellow", "green", "blue", "purple", "pink", "brown")
"""The colours a tag may have (Dub's palette and orange): names, which the dashboard draws in its own shades."""


async def tags_and_folders(db: Store, account_id: str) -> dict[str, Any]:
    """The account's tags (those links have, and those given a colour) with their colour and number of links, and
    its folders with their number of links, by name (the dashboard's filters)."""
    conn = db.reader
    await get_account(conn, account_id)
    counts = {t.name: t.links for t in await repo.tag_counts(conn, account_id)}
    colors = await repo.colors(conn, account_id)
    folders = await repo.folder_counts(conn, account_id)
    return {"tags": [{"name": name, "links": counts.get(name, 0), "color": colors.get(name)}
                     for name in sorted({*counts, *colors})],
            "folders": [{"name": f.name, "links": f.links} for f in folders]}


async def color_tag(db: Store, account_id: str, tag: str, color: str | None) -> dict[str, Any]:
    """Gives the account's tag ``tag`` a colour of :data:`TAG_COLORS` (None: none); the tag need not be on a link
    yet. Answers the tag as :func:`tags_and_folders` lists it."""
    name = tag.strip()
    issues = Issues()
    if not name or len(name) > 50 or any(c == "," or ord(c) < 32 or ord(c) == 127 for c in name):
        issues.add("tag", "must be a tag name: 1 to 50 characters, no comma or control character", "format")
    if color is not None and color not in TAG_COLORS:
        issues.add("color", f"must be one of {', '.join(TAG_COLORS)}", "enum", TAG_COLORS)
    issues.raise_if_any("Invalid tag")

    async def unit(tx: Tx) -> dict[str, Any]:
        await get_account(tx, account_id)
        await repo.set_color(tx, account_id, name, color)
        links = sum(t.links for t in await repo.tag_counts(tx, account_id) if t.name == name)
        return {"name": name, "links": links, "color": color}

    return await in_one_unit(db, unit, account_turn(account_id))


async def _selection(tx: Conn, account_id: str, link_ids: Sequence[str]) -> list[Document]:
    """The account's links named by ``link_ids``, in that order, once each; an id of no link of the account (an
    unknown id, another account's link) refuses the whole selection (400), naming each such id."""
    await get_account(tx, account_id)
    issues = Issues()
    found: dict[str, Document] = {}
    for index, link_id in enumerate(link_ids):
        if link_id in found:
            continue
        doc = await documents.get(tx, LINKS.name, account_id, link_id)
        if doc is None:
            issues.add(f"link_ids[{index}]", f"no link with id {link_id} in this account", "unknown_reference")
        else:
            found[link_id] = doc
    issues.raise_if_any("Unknown links")
    return list(found.values())


async def _bulk(db: Store, account_id: str, link_ids: Sequence[str], change: Callable[[dict[str, Any]], dict[str, Any]],
                fields: Mapping[str, Any], allow_private: bool) -> dict[str, Any]:
    """``change`` applied to each selected link's document and saved, in one unit: all of them or none."""
    async def unit(tx: Tx) -> dict[str, Any]:
        selected = await _selection(tx, account_id, link_ids)
        changed: list[str] = []
        for index, doc in enumerate(selected):
            stored = LINKS.restore_hidden(doc.body, doc.body)
            _, did = await save(tx, LINKS, account_id, change(dict(stored)), prefix=f"link_ids[{index}]",
                                allow_private=allow_private, must_exist=True)
            if did:
                changed.append(doc.id)
        await record_each(tx, changed, dict(fields))
        return {"selected": len(selected), "changed": len(changed), "changed_ids": changed}

    return await in_one_unit(db, unit, account_turn(account_id))


async def tag_links(db: Store, account_id: str, link_ids: Sequence[str], add: Sequence[str], remove: Sequence[str],
                    allow_private: bool = False) -> dict[str, Any]:
    """Adds ``add`` to the selected links' tags and takes ``remove`` away (a tag both added and removed is
    removed)."""
    adding, removing = tag_names(list(add)), set(tag_names(list(remove)))

    def change(body: dict[str, Any]) -> dict[str, Any]:
        tags = [t for t in [*(body.get("tags") or []), *adding] if t not in removing]
        return {**body, "tags": tags}

    return await _bulk(db, account_id, link_ids, change, {"add": adding, "remove": sorted(removing)}, allow_private)


async def move_links(db: Store, account_id: str, link_ids: Sequence[str], folder: str | None,
                     allow_private: bool = False) -> dict[str, Any]:
    """Puts the selected links in ``folder`` (None: in no folder)."""
    folder = None if folder is None else folder.strip() or None
    return await _bulk(db, account_id, link_ids, lambda body: {**body, "folder": folder}, {"folder": folder},
                       allow_private)


async def disable_links(db: Store, account_id: str, link_ids: Sequence[str], disabled: bool,
                        allow_private: bool = False) -> dict[str, Any]:
    """Sets the selected links' ``disabled`` (a disabled link answers 410 and records no click)."""
    return await _bulk(db, account_id, link_ids, lambda body: {**body, "disabled": disabled},
                       {"disabled": disabled}, allow_private)


EXPORT_COLUMNS = ("id", "code", "short_url", "destination_url", *UTM_FIELDS, "tags", "folder", "kind",
                  "campaign_id", "disabled", "expires_at", "created_at")


async def export_links(db: Store, account_id: str, link_ids: Sequence[str], public_url: str,
                       domain_scheme: str = "https") -> str:
    """The selected links as CSV (:func:`linksvc.spreadsheet.csv_text`), in the order named: a link's tags joined
    by ``; ``, its UTM fields read from its destination URL."""
    selected = await _selection(db.reader, account_id, link_ids)
    rows: list[list[Any]] = [list(EXPORT_COLUMNS)]
    for doc in selected:
        link = doc.body
        utm = utm_of_url(link.get("destination_url"))
        rows.append([doc.id, link.get("code"), short_url(public_url, domain_scheme, link), link.get("destination_url"),
                     *(utm.get(name) for name in UTM_FIELDS), "; ".join(link.get("tags") or []), link.get("folder"),
                     link.get("kind"), link.get("campaign_id"), "true" if link.get("disabled") else "false",
                     link.get("expires_at"), doc.created_at])
    return csv_text(rows)
