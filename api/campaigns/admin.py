"""Admin handlers of campaigns beyond the resource endpoints: the dashboard's filtered list of campaigns."""

from __future__ import annotations

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
                                           query.status, query.brand_id, query.limit, query.offset)
    return json_response({"data": items, "count": total, "limit": query.limit, "offset": query.offset})


def overview_endpoints() -> list[Endpoint]:
    """Declared before ``api.admin``'s resource endpoints: ``/campaigns/overview`` is not ``/campaigns/{id}``."""
    return [
        Endpoint("GET", "/accounts/{account_id}/campaigns/overview", campaigns_overview,
                 "Campaigns filtered by type, status and brand, with their status now", "campaigns",
                 query=CampaignOverviewQuery, response=Page[CampaignSummary], security="admin",
                 permission="campaigns:read", errors=ERRORS),
    ]
