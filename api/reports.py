"""``GET /api/admin/v1/accounts/{account_id}/reports/conversions``: the conversion report as JSON, or as CSV with
``format=csv`` (:mod:`linksvc.reports.conversions`)."""

from __future__ import annotations

from typing import Literal

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from api.appkeys import CLICKS, DB
from api.routing import Endpoint, data
from api.schemas import Envelope
from linksvc.reports.conversions import (
    DEFAULT_ROWS,
    GROUPS,
    MAX_ROWS,
    conversion_report,
    report_csv,
    report_query,
)


class ConversionQuery(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    from_: str | None = Field(default=None, alias="from", description="first day, YYYY-MM-DD (UTC); default: "
                                                                      "six days before to")
    to: str | None = Field(default=None, description="last day, YYYY-MM-DD (UTC), inclusive; default: today; "
                                                     "at most 366 days after from")
    group_by: str | None = Field(default=None, description=f"one or two of {', '.join(GROUPS)}, separated by a "
                                                           "comma; default day")
    utm_from: Literal["click", "event"] = Field(
        default="click", description="grouped by a utm_* field, whose UTM keys an event: the click's behind its "
                                     "tracking_id (default: a click and the events attributed to it share a row) or "
                                     "the event's own as it was sent")
    limit: int = Field(default=DEFAULT_ROWS, ge=1, le=MAX_ROWS,
                       description="the groups shown at most, the most purchases first, then the most human clicks; "
                                   "the rest are summed in other")
    format: Literal["json", "csv"] = Field(default="json", description="csv: the rows as text/csv, then an (other) "
                                                                       "line when groups were left out")


class Clicks(BaseModel):
    human: int
    bot: int


class Routes(BaseModel):
    web: int = Field(description="human clicks answered with the destination or a fallback")
    app: int = Field(description="human clicks answered with an intent or the deeplink")
    store: int = Field(description="human clicks answered with Google Play or the App Store")


class ClickToPurchase(BaseModel):
    median_seconds: int | None = Field(description="upper bound of the bucket holding the median; null when no "
                                                   "purchase or beyond the last bound (30 days)")
    p90_seconds: int | None


class ConversionFigures(BaseModel):
    clicks: Clicks
    visitors: int = Field(description="distinct visitors per day, link and UTM, added up")
    routes: Routes
    events: dict[str, int] = Field(description="attributed events by type")
    purchases: int = Field(description="attributed purchases not reversed")
    revenue: dict[str, str] = Field(description="per currency, exact decimal text, net of reversals")
    conversion_rate: str | None = Field(description="purchases / human clicks, 4 decimals; null without clicks")
    click_to_purchase: ClickToPurchase


class ConversionRow(ConversionFigures):
    key: dict[str, str | None] = Field(description="the group's values; link_code with link, campaign_name with "
                                                   "campaign")


class Unattributed(BaseModel):
    events: int
    purchases: int
    revenue: dict[str, str]


class OtherGroups(ConversionFigures):
    groups: int = Field(description="how many groups are summed here")


class ConversionReport(BaseModel):
    from_: str = Field(alias="from")
    to: str
    group_by: list[str]
    utm_from: Literal["click", "event"] = Field(description="whose UTM keys the events in a grouping by a utm_* "
                                                            "field: the click's behind their tracking_id, or their own")
    limit: int
    groups: int = Field(description="how many groups the range holds; rows holds the first limit of them")
    rows: list[ConversionRow]
    other: OtherGroups | None = Field(description="the groups beyond limit, summed; null when every group is shown")
    totals: ConversionFigures
    unattributed: Unattributed = Field(description="events with no stored click behind their tracking_id")


async def conversions(request: web.Request, query: ConversionQuery) -> web.Response:
    checked = report_query(query.from_, query.to, query.group_by, utm_from=query.utm_from, limit=query.limit)
    report = await conversion_report(request.app[DB], request.app[CLICKS], request.match_info["account_id"], checked)
    if query.format == "csv":
        name = f"conversions-{report['from']}-{report['to']}.csv"
        return web.Response(text=report_csv(report), content_type="text/csv", charset="utf-8",
                            headers={"Content-Disposition": f'attachment; filename="{name}"',
                                     "Cache-Control": "no-store"})
    return data(report)


ENDPOINTS = [
    Endpoint("GET", "/accounts/{account_id}/reports/conversions", conversions,
             "Conversion report: clicks, visitors, routes, attributed events, purchases, revenue, conversion rate "
             "and time to purchase per group, for a range of days", "reports", query=ConversionQuery,
             response=Envelope[ConversionReport], media_types=("text/csv",), security="admin", errors=(401, 404)),
]
