"""``GET /api/admin/v1/accounts/{account_id}/reports/conversions``: the conversion report as JSON, or as CSV with
``format=csv`` (:mod:`linksvc.reports.conversions`)."""

from __future__ import annotations

from typing import Literal

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from api.appkeys import CLICKS, DB, RESOURCES
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
from linksvc.reports.variants import variant_range, variant_report


class ConversionQuery(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    from_: str | None = Field(default=None, alias="from", description="first day, YYYY-MM-DD (UTC); default: "
                                                                      "six days before to")
    to: str | None = Field(default=None, description="last day, YYYY-MM-DD (UTC), inclusive; default: today; "
                                                     "at most 366 days after from")
    group_by: str | None = Field(
        default=None, description=f"one or two of {', '.join(GROUPS)}, separated by a comma; default day. The click "
                                  "behind a row's clicks and events gives country, referrer_host (the Referer's host), "
                                  "rule (the link's rule that picked the target) and variant (of the link's A/B "
                                  "split): country and referrer_host go alone or with day; rule alone or with day, "
                                  "link or campaign; variant only as link,variant (400 for other pairs). tag and "
                                  "folder are the link's as they are now (not with link): a link with several tags "
                                  "counts in each tag's row, so tag rows may add up to more than the totals; "
                                  "null: no tag, no folder")
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
                                                   "campaign; country, referrer_host, rule and variant are null where "
                                                   "the click had none (the CSV says (unknown), (no referrer), "
                                                   "(no rule), (no variant))")


class Unattributed(BaseModel):
    events: int
    purchases: int
    revenue: dict[str, str]


class ConversionOtherGroups(ConversionFigures):
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
    other: ConversionOtherGroups | None = Field(description="the groups beyond limit, summed; null when every group "
                                                            "is shown")
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


class VariantClicks(BaseModel):
    human: int
    bot: int


class Significance(BaseModel):
    against: str = Field(description="the control: the link's first variant")
    test: str
    sample_sizes: dict[str, int] = Field(description="visitors of this variant and of the control")
    z: float | None
    p_value: float | None = Field(description="two-sided; null when the test cannot be computed (see verdict)")
    confidence: float | None = Field(description="1 - p_value")
    lift: float | None = Field(description="(rate - control's rate) / control's rate; null when the control's is 0")
    significant: bool = Field(description="p_value under 0.05")
    verdict: str = Field(description='in plain words: "B converts 23% better than A; 97% confidence; 1,204 and '
                                     '1,188 visitors"')


class VariantRow(BaseModel):
    variant: str
    weight: int | None = Field(description="null for a variant the link no longer has")
    control: bool
    in_link: bool = Field(description="false for a variant clicks were recorded for that the link no longer has")
    clicks: VariantClicks
    visitors: int = Field(description="distinct visitors (daily salted hashes) among the human clicks")
    purchases: int = Field(description="purchases whose tracking_id's click went to this variant, net of reversals")
    revenue: dict[str, str] = Field(description="per currency, exact decimal text, net of reversals")
    conversion_rate: str | None = Field(description="purchases / visitors, 4 decimals; null without visitors")
    significance: Significance | None = Field(description="against the control; null for the control")


class VariantQuery(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    from_: str | None = Field(default=None, alias="from", description="first day, YYYY-MM-DD (UTC): clicks taken and "
                                                                      "purchases issued from that day; default: the "
                                                                      "split's whole life, or six days before to")
    to: str | None = Field(default=None, description="last day, YYYY-MM-DD (UTC), inclusive; default: the split's "
                                                     "whole life, or today (at most a week after from); at most 366 "
                                                     "days after from")


class VariantReport(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    link_id: str
    from_: str | None = Field(alias="from", description="the first day counted; null: the split's whole life")
    to: str | None = Field(description="the last day counted; null: the split's whole life")
    code: str | None
    control: str | None
    conversion_rate_of: str
    variants: list[VariantRow]


async def link_variants(request: web.Request, query: VariantQuery) -> web.Response:
    days = variant_range(query.from_, query.to)
    return data(await variant_report(request.app[DB], request.app[RESOURCES], request.app[CLICKS],
                                     request.match_info["account_id"], request.match_info["id"], days))


ENDPOINTS = [
    Endpoint("GET", "/accounts/{account_id}/reports/conversions", conversions,
             "Conversion report: clicks, visitors, routes, attributed events, purchases, revenue, conversion rate "
             "and time to purchase per group, for a range of days", "reports", query=ConversionQuery,
             response=Envelope[ConversionReport], media_types=("text/csv",), security="admin",
             permission="reports:read", errors=(401, 404)),
    Endpoint("GET", "/accounts/{account_id}/links/{id}/variants", link_variants,
             "The variant report of a link's A/B split: per variant, clicks, visitors, purchases, revenue, conversion "
             "rate, and a two-proportion z-test against the first variant (the control) with its p-value, sample "
             "sizes and a verdict in plain words; for the split's whole life, or the days from to to", "reports",
             query=VariantQuery, response=Envelope[VariantReport], security="admin", permission="reports:read",
             errors=(401, 404)),
]
