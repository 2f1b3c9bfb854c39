"""``POST /api/admin/v1/accounts/{account_id}/links/fdl-import``: an FDL export (CSV, the console's or Google
Takeout's) in, one link per row at the short link's own path on the account's domain
(:mod:`linksvc.links.fdl_service`)."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from pydantic import BaseModel, Field

from api.appkeys import DB, SETTINGS
from api.routing import Endpoint, data, read_body
from api.schemas import Envelope
from linksvc.domains.service import import_fdl_export
from linksvc.errors import BadRequest, InvalidField


class ImportedRow(BaseModel):
    line: int = Field(description="the row's line in the file (the header is line 1)")
    short_link: str
    link_id: str
    code: str


class FailedRow(BaseModel):
    line: int
    short_link: str
    error: str
    details: Any = Field(description="{field, message, issues}: the field is the FDL parameter behind the problem")


class ImportResult(BaseModel):
    created: list[ImportedRow] = Field(description="rows whose link this import created")
    unchanged: list[ImportedRow] = Field(
        description="rows whose link the account already holds at that path with the same settings (an import "
                    "of the same file again): nothing written")
    failed: list[FailedRow]


async def fdl_import(request: web.Request) -> web.Response:
    limit = request.app[SETTINGS].max_import_body_bytes
    raw = await read_body(request, limit)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest("Invalid export", "the export must be UTF-8 text (CSV)") from None
    if "\x00" in text:
        raise InvalidField("body", "must not contain the character U+0000", error="Invalid export")
    return data(await import_fdl_export(request.app[DB], request.app[SETTINGS], request.match_info["account_id"],
                                        text))


ENDPOINTS = [
    Endpoint("POST", "/accounts/{account_id}/links/fdl-import", fdl_import,
             "Import a Firebase Dynamic Links export (CSV: the console's, with the short and long link of each, or "
             "Google Takeout's, with the short link and a column per parameter): a link per row at "
             "the short link's path on the account's domain. Every row is checked first, then the valid ones are "
             "written together (all or none); bad rows fail alone, named by their line. Sending the same file again "
             "converges: rows already imported are unchanged", "links",
             response=Envelope[ImportResult], security="admin", permission="links:write", errors=(400, 401, 404, 413),
             max_body="max_import_body_bytes", action="fdl-import"),
]
