"""Dynamic Links on an account's domain: a click on a long link, and the import of an FDL export
(:mod:`linksvc.links.fdl` reads both).

- **A long link** is answered through the resolver like a stored link: its parameters make a link body, checked
  by the Link model and then by what the account allows (:mod:`linksvc.links.long_links`: the domain's URL
  patterns, the account's own hosts and apps); a wrong or refused parameter is a 400 page naming it, and
  :func:`linksvc.links.decide.decide` answers the rest. Its clicks are recorded against the domain's *long-links
  link* (:func:`long_links_code`), a stored link of the account created when the domain goes live, so that clicks
  and reports count them per domain. A deferred claim of such a click answers the long link the install referrer
  names, checked again (:func:`long_link_of_referrer`).
- **The importer** creates, for each row of the export (the console's, with a long link per row, or Google
  Takeout's, with a column per parameter), a link at the short link's own path on that domain: the row's FDL
  parameters mapped as a long link's, its ``utm_*`` written into the destination (a stored link has no other place for
  them, and the resolver carries them from there), its name as the preview title when it has none. Every row
  is checked in memory with the same rules as a link created through the admin API; then the valid rows are
  written in one unit of work on the write queue (one statement for all the new links), all of them or none.
  A row fails alone; a row whose link the account already holds at that path with the same settings is
  ``unchanged``, so sending the same file again (after a lost answer, or a cut-off import) converges.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from linksvc.clock import iso, utcnow
from linksvc.domains.hosts import LIVE, held_domains
from linksvc.errors import Conflict, InvalidField, Issue, NotFound, ServiceError
from linksvc.jsoncodec import dumps
from linksvc.links.fdl import (
    ExportProblem,
    ExportRow,
    LongLink,
    export_rows,
    link_of_long_link,
    parameter_of,
    parameters_of,
    short_path,
)
from linksvc.links.long_links import own_targets, refusals
from linksvc.links.service import StoredLink, link_of_code
from linksvc.links.utm import edit_utm
from linksvc.resources.kinds import KINDS, RESERVED_CODES
from linksvc.resources.models import LINK_CODE_PATTERN, Link
from linksvc.resources.service import Resources
from linksvc.resources.validation import validate
from linksvc.store import Store, account_turn
from storage import documents
from storage.db import Tx
from storage.domains import DomainRecord
from storage.domains import of_account as domains_of_account
from storage.links import encoded_link_by_code, links_at_codes

MAX_ROWS = 20_000  # rows of one import: well within the request deadline on a busy 2-core machine (docs/decisions.md)
LINKS = KINDS["links"]


def long_links_code(host: str) -> str:
    """The code of the domain's long-links link: fixed per host, in the codes' alphabet."""
    return "fdl-" + hashlib.sha256(host.encode()).hexdigest()[:12]


def long_links_body(host: str) -> dict[str, Any]:
    """The domain's long-links link: never answered itself (its code is not printed anywhere); it holds the clicks
    on the domain's long links."""
    return {"code": long_links_code(host), "kind": "external", "domain": host,
            "destination_url": f"https://{host}/"}


async def ensure_long_links_link(resources: Resources, account_id: str, host: str) -> None:
    """Creates the domain's long-links link unless it exists (a domain that goes live, verified again)."""
    found = await encoded_link_by_code(resources.db.reader, long_links_code(host))
    if found is not None:
        return
    with contextlib.suppress(Conflict):  # made meanwhile by another request
        await resources.create(account_id, "links", long_links_body(host))


async def drop_long_links_link(resources: Resources, account_id: str, host: str) -> None:
    """Deletes the long-links link of a domain that is deleted (with its clicks)."""
    found = await encoded_link_by_code(resources.db.reader, long_links_code(host))
    if found is not None and found.account_id == account_id:
        with contextlib.suppress(ServiceError):
            await resources.delete(account_id, "links", found.id)


def checked_long_link(query: Mapping[str, str], link_id: str) -> tuple[dict[str, Any], LongLink]:
    """The link a long link describes, checked by the Link model: the stored-link body the resolver decides on
    (``id`` the long-links link's, so that the ``$app-found`` answer names it). A wrong parameter raises
    :class:`InvalidField` whose paths are the FDL parameters."""
    long = link_of_long_link(query)
    if not long.body.get("deeplink"):
        raise InvalidField("link", "is required: the deep link the app opens")
    if "preview" not in Link.model_fields:  # a release without link previews: the preview parameters go unused
        long.body.pop("preview", None)
    try:
        model = validate(Link, long.body)
    except InvalidField as refused:
        raise renamed(refused, query) from None
    body = model.model_dump(mode="json", exclude_none=True)
    body["id"] = link_id
    return body, long


async def long_link_click(db: Store, domain: DomainRecord, query: Mapping[str, str]
                          ) -> tuple[StoredLink, dict[str, Any], LongLink]:
    """A click on a long link of ``domain`` (live): the domain's long-links link, the link the long link describes
    (checked by the Link model, then against what the account allows) and its parameters. NotFound when the
    domain has no long-links link; InvalidField naming the FDL parameters at fault."""
    held = await link_of_code(db, long_links_code(domain.host))
    if held is None or held.account_id != domain.account_id:
        raise NotFound("Link not found", "There is no link at this address.")
    body, long = checked_long_link(query, held.id)
    refused = refusals(body, query, await own_targets(db, domain.account_id), domain)
    if refused:
        raise InvalidField.of(refused, error="Invalid Dynamic Link")
    return held, body, long


async def long_link_of_referrer(db: Store, held: StoredLink, clicked: str | None) -> dict[str, Any] | None:
    """The link a long link describes, when ``held`` is a domain's long-links link and ``clicked`` (the install
    referrer's ``link``: the long link the person clicked) is a long link on that live domain that the account
    still allows; else None."""
    host = held.link.get("domain")
    if not clicked or not isinstance(host, str) or held.link.get("code") != long_links_code(host):
        return None
    try:
        parts = urlsplit(clicked)
        same_host = (parts.hostname or "").rstrip(".") == host
    except ValueError:
        return None
    domain = (await held_domains(db).current()).get(host)
    if not same_host or parts.path not in ("", "/") or domain is None or domain.status != LIVE \
            or domain.account_id != held.account_id:
        return None
    try:
        _, body, _ = await long_link_click(db, domain, parameters_of(clicked))
    except ServiceError:
        return None
    return body


def renamed(refused: InvalidField, query: Mapping[str, str]) -> InvalidField:
    """The same problems, each named by the FDL parameter behind our field."""
    return InvalidField.of([Issue(parameter_of(issue.path, query), issue.message, issue.type, issue.accepted)
                            for issue in refused.issues], error="Invalid Dynamic Link")


@dataclass
class _Row:
    """A row of the export that is a valid link: its line, short link, code, the link (validated) and the body it
    is stored with (made before the write, which then only compares and inserts)."""

    line: int
    short_link: str
    code: str
    link: Link
    body: dict[str, Any]
    text: str


class _Outcome:
    """The answer of an import, row by row."""

    def __init__(self) -> None:
        self.created: list[dict[str, Any]] = []
        self.unchanged: list[dict[str, Any]] = []
        self.failed: list[dict[str, Any]] = []

    def fail(self, line: int, short_link: str, error: str, details: Any) -> None:
        self.failed.append({"line": line, "short_link": short_link, "error": error, "details": details})

    def answer(self) -> dict[str, Any]:
        def by_line(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return sorted(rows, key=lambda row: int(row["line"]))
        return {"created": by_line(self.created), "unchanged": by_line(self.unchanged),
                "failed": by_line(self.failed)}


def row_body(row: ExportRow, host: str, code: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The link body a row describes (not yet checked) and its FDL parameters (its long link's, or its columns'
    in a Takeout export)."""
    query = row.parameters
    long = link_of_long_link(query)
    body = {**long.body, "code": code, "domain": host}
    if long.utm and isinstance(body.get("destination_url"), str):
        with contextlib.suppress(ValueError, ServiceError):  # the Link model names a bad destination
            body["destination_url"] = edit_utm(body["destination_url"], long.utm)
    if row.name and "title" not in body.get("preview", {}):
        body["preview"] = {**body.get("preview", {}), "title": row.name[:200]}
    if "preview" not in Link.model_fields:
        body.pop("preview", None)
    return body, query


def checked_row(row: ExportRow, hosts: Sequence[str], outcome: _Outcome) -> _Row | None:
    """The row as a valid link, or None once its failure is told to ``outcome``: the same checks as a link
    created through the admin API (the Link model, reserved codes, the account's domains)."""
    def fail(error: str, details: Any) -> None:
        outcome.fail(row.line, row.short_link, error, details)

    where = short_path(row.short_link)
    if where is None:
        fail("Invalid short link", {"field": "short_link", "message": "must be https://DOMAIN/PATH"})
        return None
    host, code = where
    if host not in hosts:
        fail("Unknown domain", {"field": "short_link", "message": f"{host} is not a domain of this account"})
        return None
    if not re.fullmatch(LINK_CODE_PATTERN, code):
        fail("Invalid short link", {"field": "short_link",
                                    "message": "its path must be 3 to 64 letters, digits, - or _"})
        return None
    if code.lower() in RESERVED_CODES:
        fail("Invalid short link", {"field": "short_link",
                                    "message": "its path is reserved for the service's own paths"})
        return None
    body, query = row_body(row, host, code)
    if not body.get("deeplink"):
        fail("Invalid Dynamic Link", {"field": "link", "message": "is required: the deep link the app opens"})
        return None
    try:
        link = validate(Link, body)
    except InvalidField as refused:
        named = renamed(refused, query)
        fail(named.error, named.details)
        return None
    body = _stored(link, link.id)
    return _Row(row.line, row.short_link, code, link, body, dumps(body))


def _stored(link: Link, link_id: str) -> dict[str, Any]:
    """The body a link is stored with (as :func:`linksvc.resources.service.save` stores it), under ``link_id``."""
    return {**link.model_dump(mode="json"), "id": link_id}


def _checked_export(text: str, hosts: Sequence[str]) -> tuple[_Outcome, list[_Row]]:
    """Every row of an export checked in memory: the rows to write, and the outcome holding those that failed."""
    try:
        rows = export_rows(text)
    except ExportProblem as problem:
        raise InvalidField("body", str(problem), error="Invalid export") from None
    if len(rows) > MAX_ROWS:
        raise InvalidField("body", f"holds {len(rows):,} rows; at most {MAX_ROWS:,} a request: send the export in "
                                   "parts", error="Invalid export")
    outcome = _Outcome()
    valid: list[_Row] = []
    first_line: dict[str, int] = {}
    for row in rows:
        checked = checked_row(row, hosts, outcome)
        if checked is None:
            continue
        if checked.code in first_line:
            outcome.fail(row.line, row.short_link, "Code taken", {
                "field": "short_link", "message": f"line {first_line[checked.code]} has the same path"})
            continue
        first_line[checked.code] = row.line
        valid.append(checked)
    return outcome, valid


async def import_export(db: Store, account_id: str, text: str, hosts: Sequence[str]) -> dict[str, Any]:
    """Creates a link per row of an FDL export (``text``) whose short link is on one of ``hosts`` (the
    account's domains). Every row is checked in memory first; then the valid rows are written in one unit of
    work on the write queue, all of them or none. Rows fail alone, each named by its line. Sending the same file
    again converges: a row whose link this account already holds at that path with the same settings is
    ``unchanged`` (with that link's id), never "Code taken"."""
    # Parsing and checking are CPU only (no store, no loop): a thread does them, so a file of 20,000 rows holds the
    # worker's other requests for no more than the interpreter's switch interval at a time.
    outcome, valid = await asyncio.to_thread(_checked_export, text, hosts)

    async def unit(tx: Tx) -> _Outcome:
        written = _Outcome()
        live_hosts = {domain.host for domain in await domains_of_account(tx, account_id)}
        held = await links_at_codes(tx, [row.code for row in valid])
        new: list[tuple[str, str, dict[str, Any]]] = []
        for row in valid:
            found = held.get(row.code)
            if row.link.domain not in live_hosts:  # the domain was deleted meanwhile
                written.fail(row.line, row.short_link, "Unknown domain", {
                    "field": "short_link", "message": f"{row.link.domain} is not a domain of this account"})
            elif found is None:
                new.append((row.link.id, row.text, LINKS.columns(row.link)))
                written.created.append({"line": row.line, "short_link": row.short_link, "link_id": row.link.id,
                                        "code": row.code})
            elif found.account_id == account_id and found.link == {**row.body, "id": found.id}:
                written.unchanged.append({"line": row.line, "short_link": row.short_link, "link_id": found.id,
                                          "code": row.code})
            else:
                message = ("a link of this account with other settings is at this path (id " + found.id + ")"
                           if found.account_id == account_id else "another link has this code")
                written.fail(row.line, row.short_link, "Code taken", {"field": "short_link", "message": message})
        await documents.insert_many(tx, "links", account_id, new, iso(utcnow()))
        return written

    written = await db.write(unit, account_turn(account_id)) if valid else _Outcome()
    outcome.created, outcome.unchanged = written.created, written.unchanged
    outcome.failed += written.failed
    return outcome.answer()
