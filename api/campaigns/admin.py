"""Admin handlers of campaigns beyond the resource endpoints: the dashboard's filtered list of campaigns."""

from __future__ import annotations

from typing import Literal

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from api.appkeys import DB
from api.routing import Endpoint, json_response
from api.schemas import Page, Paging
from linksvc.campaigns.overview import campaign_overview
from linksvc.resources.models import CampaignStatus, CampaignType
from linksvc.resources.types import Uuid

ERRORS = (401, 404)


class CampaignOverviewQuery(Paging):
    type: CampaignType | None = None
    status: CampaignStatus | None = Field(default=None, description="the status now; NOT FINISHED is all but FINISHED")
    brand_id: Uuid | None = None
    sort: Literal["order", "-order", "name", "-name", "created", "-created", "starts", "-starts", "ends", "-ends",
                  "status", "-status"] = Field(default="order", description=(
        "the order of the whole list, before paging: order (the campaigns' own list order, as the storefront "
        "lists them), name (whatever the case), created, starts or ends (campaigns without that date come last "
        "either way), status (running, scheduled, paused, finished), A to Z, earliest or first, or the other way "
        "round with a - before it (-created: newest first). Campaigns that tie are ordered by id, so pages never "
        "repeat or skip one"))


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
    items, total = await campaign_overview(request.app[DB], request.match_info["account_id"], query.type,
                                           query.status, query.brand_id, query.limit, query.offset, query.sort)
    return json_response({"data": items, "count": total, "limit": query.limit, "offset": query.offset})


def overview_endpoints() -> list[Endpoint]:
    """Declared before ``api.admin``'s resource endpoints: ``/campaigns/overview`` is not ``/campaigns/{id}``."""
    return [
        Endpoint("GET", "/accounts/{account_id}/campaigns/overview", campaigns_overview,
                 "Campaigns filtered by type, status and brand, with their status now", "campaigns",
                 query=CampaignOverviewQuery, response=Page[CampaignSummary], security="admin",
                 permission="campaigns:read", errors=ERRORS),
    ]
