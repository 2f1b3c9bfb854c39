"""Admin endpoints the dashboard needs beyond the resource endpoints: the searchable list of links with their
recent clicks, the preview of where a link sends each device, and the filtered list of campaigns.

They are admin endpoints like the others (same token, same error shape, in the admin OpenAPI document), so
anything the dashboard shows another client can read too. ``api.admin`` puts :func:`overview_endpoints`
before the resource endpoints: ``/links/overview`` must be matched before ``/links/{id}`` is.
"""

from __future__ import annotations

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from api.appkeys import CLICKS, DB, SETTINGS
from api.routing import Endpoint, data, json_response
from api.schemas import Envelope, Page, Paging, UtmEdit
from linksvc.accounts import get_account
from linksvc.loyalty.overview import campaign_overview
from linksvc.resolver.overview import link_overview, preview
from linksvc.resources.models import CampaignStatus, CampaignType, Link
from linksvc.resources.types import Uuid

ERRORS = (401, 404)


class LinkOverviewQuery(Paging):
    q: str | None = Field(default=None, max_length=200, description="text looked for in the code and destination")


class LinkSummary(BaseModel):
    id: str
    code: str
    kind: str
    campaign_id: str | None
    campaign_name: str | None
    destination_url: str
    disabled: bool
    expires_at: str | None
    short_url: str
    clicks_7d: int = Field(description="human clicks of the last seven days (bots are not counted)")
    created_at: str


async def links_overview(request: web.Request, query: LinkOverviewQuery) -> web.Response:
    await request.app[CLICKS].flush_before_counting()  # every click taken so far is counted
    items, total = await link_overview(request.app[DB].reader, request.match_info["account_id"], query.q,
                                       query.limit, query.offset, request.app[SETTINGS].public_url)
    return json_response({"data": items, "count": total, "limit": query.limit, "offset": query.offset})


class LinkPreviewIn(Link):
    """A link as it would be created (or as it is stored), and UTM changes to its destination. Its URLs are
    checked by the same field types as saving a link, so the builder shows an error before the link exists."""

    utm: UtmEdit = Field(default_factory=UtmEdit)


class RouteStep(BaseModel):
    model_config = ConfigDict(extra="allow")
    step: str = Field(description="device, route, skipped, utm or tracking_id")
    text: str = Field(description="the reason in words")
    field: str | None = Field(default=None, description="utm steps: the UTM field")
    value: str | None = Field(default=None, description="utm steps: its value, null when no source has it")
    from_: str | None = Field(default=None, alias="from",
                              description="utm steps: query, destination, fallback or defaults")


class DevicePreview(BaseModel):
    device: str = Field(description="desktop, android or ios")
    label: str = Field(description="the browser whose user agent was used")
    user_agent: str
    answer: str = Field(description="destination, intent, fallback, play or app_store")
    location: str | None = Field(description="the Location of the resolver's 302")
    utm: dict[str, str] = Field(description="the UTM fields the click carries")
    explanation: list[RouteStep] = Field(description="why: the device, the route taken, each UTM field's source, "
                                                     "the tracking id")


class LinkPreview(BaseModel):
    destination_url: str = Field(description="the destination with the UTM changes applied")
    destination_utm: dict[str, str]
    defaults: dict[str, str] = Field(description="the UTM the resolver adds when no other source has a field")
    short_url: str
    tracking_id: str = Field(description="the placeholder standing for each click's tracking id")
    devices: list[DevicePreview]


async def links_preview(request: web.Request, body: LinkPreviewIn) -> web.Response:
    await get_account(request.app[DB].reader, request.match_info["account_id"])
    link = body.model_dump(mode="json", exclude={"utm"})
    settings = request.app[SETTINGS]
    return data(preview(link, body.utm.model_dump(exclude_unset=True), settings.public_url, settings.service_label))


class CampaignOverviewQuery(Paging):
    type: CampaignType | None = None
    status: CampaignStatus | None = Field(default=None, description="the status now; NOT FINISHED is all but FINISHED")
    brand_id: Uuid | None = None


class CampaignSummary(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    name: str
    type: str
    brand_id: str | None
    status: str = Field(description="RUNNING, PAUSED, SCHEDULED or FINISHED, computed at the time of the request")
    starts_at: str | None
    ends_at: str | None


async def campaigns_overview(request: web.Request, query: CampaignOverviewQuery) -> web.Response:
    items, total = await campaign_overview(request.app[DB].reader, request.match_info["account_id"], query.type,
                                           query.status, query.brand_id, query.limit, query.offset)
    return json_response({"data": items, "count": total, "limit": query.limit, "offset": query.offset})


def overview_endpoints() -> list[Endpoint]:
    """Declared before ``api.admin``'s resource endpoints (see the module docstring)."""
    return [
        Endpoint("GET", "/accounts/{account_id}/links/overview", links_overview,
                 "Links newest first with their human clicks of the last 7 days; q searches code and destination",
                 "links", query=LinkOverviewQuery, response=Page[LinkSummary], security="admin", errors=ERRORS),
        Endpoint("POST", "/accounts/{account_id}/links/preview", links_preview,
                 "Where a link would send desktop, Android and iOS clicks, with UTM changes applied; saves nothing",
                 "links", body=LinkPreviewIn, response=Envelope[LinkPreview], security="admin", errors=ERRORS),
        Endpoint("GET", "/accounts/{account_id}/campaigns/overview", campaigns_overview,
                 "Campaigns filtered by type, status and brand, with their status now", "campaigns",
                 query=CampaignOverviewQuery, response=Page[CampaignSummary], security="admin", errors=ERRORS),
    ]
