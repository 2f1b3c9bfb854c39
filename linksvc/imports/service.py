"""Plans and applies an import of another link service's export into an account (issue 36, "Migration in").

Each row of the vendor's export (:mod:`linksvc.imports.vendors`) becomes a link saved through the same
:func:`linksvc.resources.service.save` as a link created through the admin API, so the same rules hold: the
destination must be an https URL the link rules accept (``javascript:``, ``http:`` and private addresses are
refused per row), a code must have the codes' shape and not be one of the service's own paths. The destination is
kept as the vendor had it, so its ``utm_*`` parameters are the link's UTM fields, exactly where the admin API's UTM
edit writes them (a stored link keeps its UTM in its destination); each row's answer lists them.

Codes (docs/decisions.md, "Imports from other link services"): a row keeps its code where it can. A code a link of
this account already has is **skipped** (the link is there: an import sent again converges); a code another
account's link has, or one this service's code rules refuse, is an **error** of that row, or, with ``new_codes``,
the link is created under a fresh code and the row says why. A row's short domain is kept when it is one of the
account's domains; otherwise the link answers on the service's own host.

Rows fail alone: the rows are written a chunk at a time (:data:`CHUNK_ROWS` rows in one unit of work on the write
queue, in the account's turn), and a row refused by the rules is only a row of the answer. A **dry run** runs the
very same chunks and rolls each one back, so what it lists is what the import would do at that moment. Progress
is told per chunk (:mod:`linksvc.progress`). Given a time budget (the admin API's: half its request deadline), no
chunk starts once it is spent: the rows left are *pending*, and the same file sent again goes on from there.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass, field
from typing import Any

from linksvc.accounts.service import get_account
from linksvc.errors import Conflict, InvalidField, ServiceError
from linksvc.imports.rows import ExportProblem, ImportRow
from linksvc.imports.vendors import VENDORS
from linksvc.links.utm import utm_of_url
from linksvc.progress import SILENT, Progress
from linksvc.resources.kinds import KINDS, RESERVED_CODES
from linksvc.resources.models import LINK_CODE_PATTERN, Link
from linksvc.resources.service import save
from linksvc.store import Store, account_turn, in_one_unit
from storage import documents
from storage.db import Tx
from storage.domains import of_account as domains_of_account
from storage.links import link_by_code

CHUNK_ROWS = 200
"""Rows written in one unit of work: the writer is never held long, and progress moves at each chunk."""
LINKS = KINDS["links"]
IMPORTED_KIND = "external"  # a link made elsewhere: no UTM defaults of the service's own messages
CREATED, SKIPPED, ERROR, PENDING = "created", "skipped", "error", "pending"


@dataclass(frozen=True)
class ImportOptions:
    dry_run: bool = False
    new_codes: bool = False  # a code that cannot be kept gets a fresh one instead of failing its row
    allow_private: bool = False  # LINKSVC_ALLOW_PRIVATE_DESTINATIONS, as for every link
    # Seconds after which no further chunk is started (None: no limit): the admin API answers within its request
    # deadline, the rows left are "pending", and sending the file again goes on where this import stopped.
    time_budget: float | None = None


@dataclass
class _Chunk:
    """What one chunk did, and the codes this import holds so far (the file's own repeats)."""

    answers: list[dict[str, Any]] = field(default_factory=list)
    seen: dict[str, int] = field(default_factory=dict)


class _RolledBack(Exception):  # noqa: N818 - not an error: a dry run's chunk carried out of its unit
    def __init__(self, chunk: _Chunk) -> None:
        super().__init__("dry run")
        self.chunk = chunk


def with_tags(body: dict[str, Any], tags: tuple[str, ...]) -> dict[str, Any]:
    """The one place an import's tags reach a link: the vendor's tags become the link's (the link model keeps
    each name once, trimmed; a name it refuses is the row's error)."""
    return {**body, "tags": list(tags)} if tags else body


def link_body(row: ImportRow, hosts: set[str]) -> dict[str, Any]:
    """The link a row describes, before its code is decided."""
    body: dict[str, Any] = {"kind": IMPORTED_KIND, "destination_url": row.destination}
    if row.title and "preview" in Link.model_fields:
        body["preview"] = {"title": row.title[:200]}
    if row.host is not None and row.host in hosts:
        body["domain"] = row.host
    return with_tags(body, row.tags)


def code_refusal(code: str) -> str | None:
    """Why this service cannot keep ``code``, or None."""
    if not re.fullmatch(LINK_CODE_PATTERN, code):
        return "is not a code here: 3 to 64 letters, digits, - or _, starting with a letter or digit"
    if code.lower() in RESERVED_CODES:
        return "is reserved for the service's own paths"
    return None


def _answer(row: ImportRow, status: str, **fields: Any) -> dict[str, Any]:
    return {"row": row.number, "status": status, "code": fields.pop("code", row.code), "original_code": row.code,
            "destination_url": row.destination, "title": row.title, "tags": list(row.tags),
            "created_at": row.created_at, "host": row.host, "utm": utm_of_url(row.destination) if row.destination
            else {}, "link_id": fields.pop("link_id", None), "reason": fields.pop("reason", None),
            "error": fields.pop("error", None), "details": fields.pop("details", None)}


async def _one(tx: Tx, account_id: str, row: ImportRow, hosts: set[str], chunk: _Chunk,
               options: ImportOptions) -> dict[str, Any]:
    if row.problem is not None:
        return _answer(row, ERROR, error="Invalid row", details={"field": "row", "message": row.problem})
    body = link_body(row, hosts)
    code, reason = row.code, None
    if code is not None:
        refusal = code_refusal(code)
        found = None if refusal else await link_by_code(tx, code)
        if refusal is None and code in chunk.seen:
            return _answer(row, SKIPPED, reason=f"row {chunk.seen[code]} of this file has the same code")
        if found is not None and found.account_id == account_id:
            same = found.link.get("destination_url") == row.destination
            return _answer(row, SKIPPED, link_id=found.id, reason="a link of this account has this code" + (
                "" if same else f" and leads to {found.link.get('destination_url')}"))
        if refusal is None and found is not None:
            refusal = "is taken by another link"
        if refusal is not None:
            if not options.new_codes:
                return _answer(row, ERROR, error="Code taken" if found is not None else "Invalid code",
                               details={"field": "code", "message": f"{code!r} {refusal}"})
            code, reason = None, f"{row.code!r} {refusal}: the link gets a new code"
    if code is not None:
        body["code"] = code
    try:
        link_id, _ = await save(tx, LINKS, account_id, body, allow_private=options.allow_private, must_exist=False)
    except (InvalidField, Conflict) as refused:
        return _answer(row, ERROR, error=refused.error, details=refused.details)
    if code is not None:
        chunk.seen[code] = row.number
    if options.dry_run:  # rolled back: no id, and a fresh code is drawn again on the import itself
        return _answer(row, CREATED, code=code, reason=reason)
    if code is None:  # drawn by the save
        stored = await documents.get(tx, LINKS.name, account_id, link_id)
        code = None if stored is None else stored.body.get("code")
    return _answer(row, CREATED, code=code, link_id=link_id, reason=reason)


async def _apply(db: Store, account_id: str, rows: list[ImportRow], seen: dict[str, int],
                 options: ImportOptions) -> _Chunk:
    async def unit(tx: Tx) -> _Chunk:
        chunk = _Chunk(seen=dict(seen))  # afresh at each try: a unit PostgreSQL refused is run again whole
        hosts = {domain.host for domain in await domains_of_account(tx, account_id)}
        for row in rows:
            chunk.answers.append(await _one(tx, account_id, row, hosts, chunk, options))
        if options.dry_run:
            raise _RolledBack(chunk)
        return chunk

    try:
        return await in_one_unit(db, unit, account_turn(account_id))
    except _RolledBack as rolled:
        return rolled.chunk


async def import_links(db: Store, account_id: str, vendor: str, text: str, options: ImportOptions,
                       progress: Progress = SILENT) -> dict[str, Any]:
    """Imports (or, with ``options.dry_run``, plans) the links of ``vendor``'s export ``text`` into the account.
    The answer lists every row in the file's order (created, skipped and why, or its error) and a summary. An
    unknown vendor, or a file that is not the vendor's export, is refused whole (400); an unknown account is 404."""
    chosen = VENDORS.get(vendor)
    if chosen is None:
        raise InvalidField("vendor", "is not a vendor the import reads", "Invalid query", rule="enum",
                           accepted=sorted(VENDORS))
    await get_account(db.reader, account_id)
    try:  # CPU only: a thread, so that a large file never holds the worker's other requests
        rows = await asyncio.to_thread(chosen.rows, text)
    except ExportProblem as problem:
        raise InvalidField("body", str(problem), error="Invalid export") from None
    progress.stage(f"{'Checking' if options.dry_run else 'Importing'} {chosen.label} links", len(rows), "rows")
    answers: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    started = time.monotonic()
    for start in range(0, len(rows), CHUNK_ROWS):
        if start and options.time_budget is not None and time.monotonic() - started >= options.time_budget:
            answers += [_answer(row, PENDING, reason=PENDING_REASON) for row in rows[start:]]
            break
        part = rows[start:start + CHUNK_ROWS]
        chunk = await _apply(db, account_id, part, seen, options)
        answers += chunk.answers
        seen = chunk.seen
        progress.advance(len(part))
    counts = {status: sum(1 for answer in answers if answer["status"] == status)
              for status in (CREATED, SKIPPED, ERROR, PENDING)}
    return {"vendor": chosen.name, "dry_run": options.dry_run,
            "summary": {"rows": len(answers), "created": counts[CREATED], "skipped": counts[SKIPPED],
                        "failed": counts[ERROR], "pending": counts[PENDING]},
            "rows": answers}


PENDING_REASON = ("not reached: the import stopped to answer in time; send the same file again, the rows imported "
                  "are skipped and it goes on from here")


__all__ = ["CHUNK_ROWS", "PENDING_REASON", "ImportOptions", "ServiceError", "code_refusal", "import_links", "link_body",
           "with_tags"]
