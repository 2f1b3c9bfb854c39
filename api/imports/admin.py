"""``POST /api/admin/v1/accounts/{account_id}/imports?vendor=...``: another link service's export in (the file
itself as the body, as ``curl --data-binary @export.json`` sends it), a link per row
(:mod:`linksvc.imports.service`); ``dry_run=true`` lists what the import would do and writes nothing."""

from __future__ import annotations

from typing import Any, Literal

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from api.appkeys import DB, SETTINGS
from api.routing import Endpoint, data, read_body
from api.schemas import Envelope
from linksvc.errors import BadRequest, InvalidField
from linksvc.imports.service import ImportOptions, import_links

Vendor = Literal["bitly", "rebrandly", "shortio", "shlink", "yourls", "kutt"]


class ImportQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")
    vendor: Vendor = Field(description="whose export the body is")
    dry_run: bool = Field(default=False, description="true: list what would happen to each row, write nothing")
    new_codes: bool = Field(default=False, description=(
        "true: a row whose code is taken by another account's link, or is not a code here, gets a fresh code "
        "instead of an error"))


class LinkImportRow(BaseModel):
    row: int = Field(description="the row's place in the file: a JSON list's item (from 1), a CSV row's line")
    status: Literal["created", "skipped", "error", "pending"] = Field(
        description="pending: not reached within the request's time; the same file sent again goes on")
    code: str | None = Field(description="the link's code (null in a dry run when a new one is to be drawn)")
    original_code: str | None = Field(description="the code the vendor had")
    destination_url: str
    title: str | None
    tags: list[str] = Field(description="the vendor's tags, as read")
    created_at: str | None = Field(description="when the vendor created it")
    host: str | None = Field(description="the vendor's short domain")
    utm: dict[str, str] = Field(description="the UTM fields the destination carries: the link's UTM")
    link_id: str | None = Field(description="the link created, or the one that holds the code (skipped)")
    reason: str | None = Field(description="why it was skipped, or why it got a new code")
    error: str | None
    details: Any = None


class ImportSummary(BaseModel):
    rows: int = Field(description="rows in the file")
    created: int = Field(description="links created (a dry run: that would be)")
    skipped: int = Field(description="rows whose code a link of this account has already: sending a file again "
                                     "converges")
    failed: int = Field(description="rows refused, each with its error")
    pending: int = Field(description="rows not reached in time: send the same file again")


class LinkImport(BaseModel):
    vendor: str = Field(description="whose export the file is: bitly, rebrandly, shortio, shlink, yourls or kutt")
    dry_run: bool = Field(description="true: nothing was written, the rows say what would happen")
    summary: ImportSummary = Field(description="the rows counted by what happened to them")
    rows: list[LinkImportRow]


async def import_export(request: web.Request, query: ImportQuery) -> web.Response:
    settings = request.app[SETTINGS]
    raw = await read_body(request, settings.max_import_body_bytes)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise BadRequest("Invalid export", "the export must be UTF-8 text (JSON or CSV)") from None
    if "\x00" in text:
        raise InvalidField("body", "must not contain the character U+0000", error="Invalid export")
    # Half the request's deadline: the answer (and what was imported) always comes back in time.
    options = ImportOptions(dry_run=query.dry_run, new_codes=query.new_codes,
                            allow_private=settings.allow_private_destinations,
                            time_budget=settings.request_timeout_seconds / 2)
    return data(await import_links(request.app[DB], request.match_info["account_id"], query.vendor, text, options))


ENDPOINTS = [
    Endpoint("POST", "/accounts/{account_id}/imports", import_export,
             "Import the links of another link service's export (Bitly, Rebrandly, Short.io, Shlink, YOURLS, Kutt): "
             "the file as it was downloaded is the body (JSON, or CSV for Bitly). Each row becomes a link saved "
             "with the same rules as any link; it keeps its code when the code is free, is skipped when a link of "
             "this account has it, and fails alone otherwise (new_codes=true: it gets a fresh code). With "
             "dry_run=true nothing is written and the answer says what would happen to each row", "links",
             query=ImportQuery, response=Envelope[LinkImport], security="admin", permission="links:write",
             errors=(400, 401, 403, 404, 413, 415), max_body="max_import_body_bytes", action="import"),
]
