"""Admin handlers of an account's link-preview defaults (``/api/admin/v1/accounts/{account_id}/link-preview``):
what link-preview fetchers are shown of the account's links that do not set their own ``preview`` fields."""

from __future__ import annotations

from aiohttp import web
from pydantic import BaseModel, Field

from api.appkeys import DB
from api.routing import Endpoint, data
from api.schemas import Envelope
from linksvc.links import previews
from linksvc.links.previews import AccountPreviewDefaults


class AccountPreviewDefaultsView(BaseModel):
    account_id: str
    title: str | None
    description: str | None
    image_url: str | None
    site_name: str | None
    updated_at: str | None = Field(description="null until the defaults are first set")


async def get_link_preview(request: web.Request) -> web.Response:
    return data(await previews.read_defaults(request.app[DB], request.match_info["account_id"]))


async def put_link_preview(request: web.Request, body: AccountPreviewDefaults) -> web.Response:
    return data(await previews.put_defaults(request.app[DB], request.match_info["account_id"], body))


ENDPOINTS = [
    Endpoint("GET", "/accounts/{account_id}/link-preview", get_link_preview,
             "The account's link-preview defaults (title, description, image_url, site_name; null when unset)",
             "links", response=Envelope[AccountPreviewDefaultsView], security="admin",
             permission="links:read", errors=(401, 404)),
    Endpoint("PUT", "/accounts/{account_id}/link-preview", put_link_preview,
             "Replace the account's link-preview defaults: the preview page shows a link's own preview fields, "
             "else these", "links", body=AccountPreviewDefaults, response=Envelope[AccountPreviewDefaultsView],
             security="admin", permission="links:write", errors=(401, 404)),
]
