"""Admin handlers of behavior events: an event with its attribution lineage, and a customer's path from clicks
to events."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from pydantic import BaseModel, Field

from api.appkeys import DB
from api.routing import Endpoint, data, json_response
from api.schemas import Envelope, Page
from linksvc.loyalty import lineage


class EventDetail(BaseModel):
    id: str
    type: str
    customer_id: str | None
    order_id: str | None
    issued_at: str
    received_at: str
    value: Any = Field(description="the purchase's value as sent (PURCHASE only)")
    currency: str | None
    attribution: dict[str, Any] = Field(description="the resolved attribution fields")
    reversed_at: str | None
    lineage: dict[str, Any] | None = Field(
        description="per field of tracking_id and the five utm_*: value, source (event.top_level, "
                    "event.attribution, event.properties or null), rule, the click's value with its origin and "
                    "rule, agrees; and click, the click behind the tracking_id. Stored when the event was "
                    "written; null for events stored before lineage was recorded")


class PathEvent(BaseModel):
    id: str
    type: str
    issued_at: str
    value: Any
    currency: str | None
    reversed_at: str | None


class PathClick(BaseModel):
    tracking_id: str
    link_id: str
    link_code: str | None
    campaign_id: str | None
    campaign_name: str | None
    clicked_at: str
    platform: str
    utm: dict[str, str]


class PathStep(BaseModel):
    event: PathEvent
    click: PathClick | None = Field(description="the click behind the event's tracking_id, when there was one")


class PathQuery(BaseModel):
    limit: int = Field(default=50, ge=1, le=200)
    offset: int = Field(default=0, ge=0, le=1_000_000_000)


async def event_detail(request: web.Request) -> web.Response:
    account_id, event_id = request.match_info["account_id"], request.match_info["event_id"]
    return data(await lineage.event_detail(request.app[DB], account_id, event_id))


async def customer_path(request: web.Request, query: PathQuery) -> web.Response:
    account_id, customer_id = request.match_info["account_id"], request.match_info["customer_id"]
    steps, total = await lineage.customer_path(request.app[DB], account_id, customer_id, query.limit, query.offset)
    return json_response({"data": steps, "count": total, "limit": query.limit, "offset": query.offset})


ENDPOINTS = [
    Endpoint("GET", "/accounts/{account_id}/events/{event_id}", event_detail,
             "An event with its attribution lineage: where each field came from and the click behind it",
             "events", response=Envelope[EventDetail], security="admin", permission="events:read", errors=(401, 404)),
    Endpoint("GET", "/accounts/{account_id}/customers/{customer_id}/path", customer_path,
             "A customer's events, newest first, each with the click that led to it; paged (count: all the "
             "customer's events)", "events", query=PathQuery, response=Page[PathStep], security="admin",
             permission="events:read",
             errors=(400, 401, 404)),
]
