"""Admin handlers of organising links (issue 36): the account's tags and folders, and the bulk actions on a
selection of links (``linksvc.links.organise``). Declared before the resource endpoints, so that
``/links/tags`` is not read as the link ``tags``."""

from __future__ import annotations

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from api.appkeys import DB, SETTINGS
from api.routing import Endpoint, data
from api.schemas import Envelope
from linksvc.links import organise
from linksvc.resources.models import FolderName, TagName
from linksvc.resources.types import Uuid

ERRORS = (400, 401, 404)
LinkIds = list[Uuid]


class Selection(BaseModel):
    model_config = ConfigDict(extra="forbid")
    link_ids: LinkIds = Field(min_length=1, max_length=organise.MAX_SELECTION, description=(
        "the links acted on, all of this account: one unknown id (or another account's) refuses the whole "
        "selection, each such id named"))


class BulkTags(Selection):
    add: list[TagName] = Field(default_factory=list, max_length=20, description="tags each link gets")
    remove: list[TagName] = Field(default_factory=list, max_length=20, description="tags each link loses")


class BulkFolder(Selection):
    folder: FolderName | None = Field(description="the folder the links move to; null: out of any folder")


class BulkDisable(Selection):
    disabled: bool = Field(default=True, description="true: the links answer 410; false: they open again")


class BulkResult(BaseModel):
    selected: int = Field(description="links named (each once)")
    changed: int = Field(description="links the action changed (the others were so already)")
    changed_ids: list[str] = Field(description="the ids of the links the action changed")


class NameCount(BaseModel):
    name: str = Field(description="the tag's or the folder's name")
    links: int = Field(description="how many of the account's links have it")


class TagView(NameCount):
    color: str | None = Field(description=f"one of {', '.join(organise.TAG_COLORS)}, or null")


class TagColor(BaseModel):
    model_config = ConfigDict(extra="forbid")
    color: str | None = Field(description=f"one of {', '.join(organise.TAG_COLORS)}; null: none")


class TagsAndFolders(BaseModel):
    tags: list[TagView] = Field(description="the account's tags, each with its links and colour")
    folders: list[NameCount] = Field(description="the account's folders, each with its links")


async def tags_and_folders(request: web.Request) -> web.Response:
    return data(await organise.tags_and_folders(request.app[DB], request.match_info["account_id"]))


async def color_tag(request: web.Request, body: TagColor) -> web.Response:
    return data(await organise.color_tag(request.app[DB], request.match_info["account_id"], request.match_info["tag"],
                                         body.color))


async def bulk_tags(request: web.Request, body: BulkTags) -> web.Response:
    return data(await organise.tag_links(request.app[DB], request.match_info["account_id"], body.link_ids, body.add,
                                         body.remove))


async def bulk_folder(request: web.Request, body: BulkFolder) -> web.Response:
    return data(await organise.move_links(request.app[DB], request.match_info["account_id"], body.link_ids,
                                          body.folder))


async def bulk_disable(request: web.Request, body: BulkDisable) -> web.Response:
    return data(await organise.disable_links(request.app[DB], request.match_info["account_id"], body.link_ids,
                                             body.disabled))


async def bulk_export(request: web.Request, body: Selection) -> web.Response:
    settings = request.app[SETTINGS]
    text = await organise.export_links(request.app[DB], request.match_info["account_id"], body.link_ids,
                                       settings.public_url, settings.domain_verify_scheme)
    return web.Response(text=text, content_type="text/csv", charset="utf-8",
                        headers={"Content-Disposition": 'attachment; filename="links.csv"',
                                 "Cache-Control": "no-store"})


def organise_endpoints() -> list[Endpoint]:
    bulk = "/accounts/{account_id}/links/bulk"
    return [
        Endpoint("GET", "/accounts/{account_id}/links/tags", tags_and_folders,
                 "The account's tags (with their colours) and folders, each with its number of links", "links",
                 response=Envelope[TagsAndFolders], security="admin", permission="links:read", errors=(401, 404)),
        Endpoint("PUT", "/accounts/{account_id}/links/tags/{tag}", color_tag,
                 "Give a tag of the account a colour (null: none); the tag need not be on a link yet", "links",
                 body=TagColor, response=Envelope[TagView], security="admin", permission="links:write",
                 errors=ERRORS, action="color"),
        Endpoint("POST", f"{bulk}/tags", bulk_tags,
                 "Add tags to and remove tags from a selection of links, all of them or none", "links",
                 body=BulkTags, response=Envelope[BulkResult], security="admin", permission="links:write",
                 errors=ERRORS, action="bulk-tag"),
        Endpoint("POST", f"{bulk}/folder", bulk_folder,
                 "Move a selection of links to a folder (or out of any), all of them or none", "links",
                 body=BulkFolder, response=Envelope[BulkResult], security="admin", permission="links:write",
                 errors=ERRORS, action="bulk-move"),
        Endpoint("POST", f"{bulk}/disable", bulk_disable,
                 "Disable (or enable again) a selection of links, all of them or none", "links",
                 body=BulkDisable, response=Envelope[BulkResult], security="admin", permission="links:write",
                 errors=ERRORS, action="bulk-disable"),
        Endpoint("POST", f"{bulk}/export", bulk_export,
                 "A selection of links as CSV: code, short URL, destination, UTM fields, tags, folder, state",
                 "links", body=Selection, media_types=("text/csv",), security="admin", permission="links:read",
                 errors=ERRORS),
    ]
