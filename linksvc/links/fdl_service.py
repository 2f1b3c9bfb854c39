"""Dynamic Links on an account's domain: a click on a long link, and the import of an FDL export
(:mod:`linksvc.links.fdl` reads both).

- **A long link** is answered through the resolver like a stored link: its parameters make a link body, checked
  by the Link model and then by what the account allows (:mod:`linksvc.links.long_links`: the domain's URL
  patterns, the account's own hosts and apps); a wrong or refused parameter is a 400 page naming it, and
  :func:`linksvc.links.decide.decide` answers the rest. Its clicks are recorded against the domain's *long-links
  link* (:func:`long_links_code`), a stored link of the account created when the domain goes live, so that clicks
  and reports count them per domain. A deferred claim of such a click answers the long link the install referrer
  names, checked again (:func:`long_link_of_referrer`).
- **The importer** creates, for each row of the export, a link at the short link's own path on that domain:
  the long link's parameters, its ``utm_*`` written into the destination (a stored link has no other place for
  them, and the resolver carries them from there), its name as the preview title when it has none.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from linksvc.domains.hosts import LIVE, held_domains
from linksvc.errors import Conflict, InvalidField, Issue, NotFound, ServiceError
from linksvc.links.fdl import (
    ExportProblem,
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
from linksvc.resources.models import LINK_CODE_PATTERN, Link
from linksvc.resources.service import Resources
from linksvc.resources.validation import validate
from linksvc.store import Store
from storage.domains import DomainRecord
from storage.links import encoded_link_by_code

MAX_ROWS = 10_000


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


async def import_export(resources: Resources, account_id: str, text: str, hosts: Sequence[str]) -> dict[str, Any]:
    """Creates a link per row of an FDL export (``text``) whose short link is on one of ``hosts`` (the
    account's domains). Rows fail alone: the answer lists what was created and what was not, with why."""
    try:
        rows = export_rows(text)
    except ExportProblem as problem:
        raise InvalidField("body", str(problem), error="Invalid export") from None
    if len(rows) > MAX_ROWS:
        raise InvalidField("body", f"holds {len(rows)} rows; at most {MAX_ROWS} a request",
                           error="Invalid export")
    created: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    for row in rows:
        where = short_path(row.short_link)

        def fail(error: str, details: Any, row: Any = row) -> None:
            failed.append({"line": row.line, "short_link": row.short_link, "error": error, "details": details})
        if where is None:
            fail("Invalid short link", {"field": "short_link", "message": "must be https://DOMAIN/PATH"})
            continue
        host, code = where
        if host not in hosts:
            fail("Unknown domain", {"field": "short_link", "message": f"{host} is not a domain of this account"})
            continue
        if not re.fullmatch(LINK_CODE_PATTERN, code):
            fail("Invalid short link", {"field": "short_link",
                                        "message": "its path must be 3 to 64 letters, digits, - or _"})
            continue
        query = parameters_of(row.long_link)
        long = link_of_long_link(query)
        body = {**long.body, "code": code, "domain": host}
        if not body.get("deeplink"):
            fail("Invalid Dynamic Link", {"field": "link", "message": "is required: the deep link the app opens"})
            continue
        if long.utm and isinstance(body.get("destination_url"), str):
            with contextlib.suppress(ValueError, ServiceError):  # the Link model names a bad destination
                body["destination_url"] = edit_utm(body["destination_url"], long.utm)
        if row.name and "title" not in body.get("preview", {}):
            body["preview"] = {**body.get("preview", {}), "title": row.name[:200]}
        if "preview" not in Link.model_fields:
            body.pop("preview", None)
        try:
            link = await resources.create(account_id, "links", body)
        except InvalidField as refused:
            named = renamed(refused, query) if not any(i.path in ("code", "domain") for i in refused.issues) \
                else refused
            fail(named.error, named.details)
            continue
        except ServiceError as refused:  # a code another link has
            fail(refused.error, refused.details)
            continue
        created.append({"line": row.line, "short_link": row.short_link, "link_id": link["id"], "code": code})
    return {"created": created, "failed": failed}
