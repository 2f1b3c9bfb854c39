"""Admin handlers of links beyond the resource endpoints: the searchable list of links with their recent clicks,
the preview of where a link sends each device, a link's UTM edit, QR code and clicks.

They are admin endpoints like the others (same token, same error shape, in the admin OpenAPI document), so
anything the dashboard shows another client can read too. ``api.admin`` puts :func:`overview_endpoints`
before the resource endpoints (``/links/overview`` must be matched before ``/links/{id}`` is) and
:func:`link_endpoints` after them.
"""

from __future__ import annotations

import time
from typing import Literal
from urllib.parse import parse_qsl

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from api.appkeys import CLICKS, DB, RESOURCES, SETTINGS
from api.resources import resource_view, wrapped
from api.routing import Endpoint, data, json_response
from api.schemas import Envelope, LinkSearchQuery, Page, UtmEdit
from linksvc.domains.hosts import short_url as short_url_of
from linksvc.links import deferred, service
from linksvc.links.overview import ClickAt, Visitor, link_overview, preview_for_account
from linksvc.links.qr import CONTENT_TYPES as QR_CONTENT_TYPES
from linksvc.links.qr import qr_image
from linksvc.links.stats import DEFAULT_GROUPS, MAX_GROUPS
from linksvc.resources.kinds import KINDS
from linksvc.resources.models import Link
from linksvc.resources.types import UtcDateTime

ERRORS = (401, 404)


class LinkSummary(BaseModel):
    id: str
    code: str
    kind: str
    campaign_id: str | None
    campaign_name: str | None
    destination_url: str
    disabled: bool
    expires_at: str | None
    tags: list[str]
    folder: str | None = Field(description="the folder the link is in; null: none")
    short_url: str
    clicks_7d: int = Field(description="human clicks of the last seven days (bots are not counted)")
    clicks: int = Field(description="human clicks of all time (bots are not counted)")
    last_clicked_at: str | None = Field(description="the time of the latest human click; null: never clicked")
    created_at: str
    updated_at: str = Field(description="when the link was last changed")


LinkSort = Literal["created", "-created", "updated", "-updated", "code", "-code", "clicks", "-clicks",
                   "last_clicked", "-last_clicked"]


class LinkOverviewQuery(LinkSearchQuery):
    sort: LinkSort = Field(default="-created", description=(
        "the order of the whole list, before paging: created (when the link was made), updated (last changed), "
        "code, clicks (human clicks of all time) or last_clicked (the latest human click; links never clicked "
        "come last either way), A to Z and oldest or fewest first, or the other way round with a - before it "
        "(-clicks: most clicked first). Links that tie are ordered by id, so pages never repeat or skip one"))


async def links_overview(request: web.Request, query: LinkOverviewQuery) -> web.Response:
    items, total = await link_overview(request.app[DB], request.app[CLICKS], request.match_info["account_id"],
                                       query.search(), query.limit, query.offset, request.app[SETTINGS].public_url,
                                       request.app[SETTINGS].domain_verify_scheme, query.sort)
    return json_response({"data": items, "count": total, "limit": query.limit, "offset": query.offset})


class PreviewVisitor(BaseModel):
    """Who clicks, for the preview of the link's rules: each preview device in turn, from this place, with
    these headers and this query, at this time."""

    model_config = ConfigDict(extra="forbid")
    country: str | None = Field(default=None, pattern=r"^[A-Za-z]{2}$",
                                description="the client's country (ISO 3166-1 alpha-2); else placed from `ip`")
    ip: str | None = Field(default=None, max_length=64, description="the client's address, placed as a click's is")
    language: str = Field(default="", max_length=1000, description="the Accept-Language header, as browsers send it")
    referer: str = Field(default="", max_length=2000, description="the Referer header")
    query: str = Field(default="", max_length=2000, description="the click's query string (name=value&...)")
    at: UtcDateTime | None = Field(default=None, description="when the click comes; none: now")


class LinkPreviewIn(Link):
    """A link as it would be created (or as it is stored), and UTM changes to its destination. Its URLs are
    checked by the same field types as saving a link, so the builder shows an error before the link exists.
    With ``rules``, each device's preview says which rule picks the target for ``visitor``."""

    utm: UtmEdit = Field(default_factory=UtmEdit)
    visitor: PreviewVisitor = Field(default_factory=PreviewVisitor)


class RouteStep(BaseModel):
    model_config = ConfigDict(extra="allow")
    step: str = Field(description="device, route, skipped, utm, tracking_id, or app (what an installed app makes "
                                  "of the click)")
    text: str = Field(description="the reason in words")
    field: str | None = Field(default=None, description="utm steps: the UTM field")
    value: str | None = Field(default=None, description="utm steps: its value, null when no source has it")
    from_: str | None = Field(default=None, alias="from",
                              description="utm steps: query, destination, fallback or defaults")


class DeviceApp(BaseModel):
    apps: list[str] = Field(description="the account's apps the short link's host lists for this platform "
                                        "(TEAM.bundle on iOS, the package on Android)")
    via: Literal["universal_link", "app_link"] = Field(description="how the installed app opens the short link "
                                                                    "without the browser")
    answer: str = Field(description="the resolver's answer to the app's own request ($app-found=true): deeplink, "
                                    "else destination")
    location: str | None = Field(description="where that answer leads: the deeplink with the click's UTM")


class DevicePreview(BaseModel):
    device: str = Field(description="desktop, android or ios")
    label: str = Field(description="the browser whose user agent was used")
    user_agent: str
    answer: str = Field(description="destination, intent, fallback, play or app_store")
    rule: str | None = Field(default=None, description="the name of the rule that picks the target; null: none")
    app: DeviceApp | None = Field(default=None, description=(
        "on a phone whose platform has an app of the account listed by the association files of the short link's "
        "host: what the installed app makes of the click (the answer above is a click without the app); null: "
        "none"))
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
    link = body.model_dump(mode="json", exclude={"utm", "visitor"})
    settings = request.app[SETTINGS]
    who = body.visitor
    visitor = Visitor(ClickAt(who.country, who.ip, who.language, who.referer), dict(parse_qsl(who.query)),
                      None if who.at is None else who.at.timestamp())
    return data(await preview_for_account(request.app[DB], request.match_info["account_id"], link,
                                          body.utm.model_dump(exclude_unset=True), settings.public_url,
                                          settings.service_label, settings.domain_verify_scheme, visitor,
                                          request.app[CLICKS].geo))


def overview_endpoints() -> list[Endpoint]:
    """Declared before ``api.admin``'s resource endpoints (see the module docstring)."""
    return [
        Endpoint("GET", "/accounts/{account_id}/links/overview", links_overview,
                 "Links in the order asked (newest first unless sort says otherwise) with their human clicks of "
                 "the last 7 days and of all time; q searches code, destination (UTM values too), folder and tags; "
                 "tag, folder and utm_* filter",
                 "links", query=LinkOverviewQuery, response=Page[LinkSummary], security="admin",
                 permission="links:read", errors=ERRORS),
        Endpoint("POST", "/accounts/{account_id}/links/preview", links_preview,
                 "Where a link would send desktop, Android and iOS clicks, with UTM changes applied; saves nothing",
                 "links", body=LinkPreviewIn, response=Envelope[LinkPreview], security="admin",
                 permission="links:read", errors=ERRORS),
    ]


async def edit_link_utm(request: web.Request, body: UtmEdit) -> web.Response:
    account_id, link_id = request.match_info["account_id"], request.match_info["id"]
    return data(await service.edit_link_utm(request.app[RESOURCES], account_id, link_id,
                                            body.model_dump(exclude_unset=True)))


class QrQuery(BaseModel):
    format: Literal["svg", "png"] = "svg"
    scale: int = Field(default=8, ge=1, le=40, description="pixels per module")


async def link_qr(request: web.Request, query: QrQuery) -> web.Response:
    account_id, link_id = request.match_info["account_id"], request.match_info["id"]
    link = await request.app[RESOURCES].get(account_id, "links", link_id)
    settings = request.app[SETTINGS]
    short_url = short_url_of(settings.public_url, settings.domain_verify_scheme, link)
    image, content_type = qr_image(short_url, query.format, query.scale)
    name = f"{link['code']}.{query.format}"
    return web.Response(body=image, content_type=content_type,
                        headers={"Content-Disposition": f'inline; filename="{name}"'})


class ClicksQuery(BaseModel):
    days: int = Field(default=30, ge=1, le=366, description="how many days back")
    limit: int = Field(default=DEFAULT_GROUPS, ge=1, le=MAX_GROUPS,
                       description="the groups of by_country, by_referrer_host, by_rule, by_variant, by_utm_source, "
                                   "by_browser, by_os, by_device, by_browser_family, by_os_family and by_bot shown "
                                   "at most, the most clicked first; the rest "
                                   "are summed in other")


class CountSplit(BaseModel):
    model_config = ConfigDict(extra="allow")
    human: int
    bot: int


class ClickOtherGroups(BaseModel):
    groups: int = Field(description="how many groups are summed here")
    human: int
    bot: int


class LinkClicks(BaseModel):
    link_id: str
    since: str
    limit: int
    human: int
    bot: int
    by_day: list[CountSplit]
    by_platform: list[CountSplit]
    by_country: list[CountSplit] = Field(description="by the client's country, ISO 3166-1 alpha-2 (null: unknown)")
    by_referrer_host: list[CountSplit] = Field(description="by the host of the Referer (null: none)")
    by_rule: list[CountSplit] = Field(description="by the name of the link's rule that matched (null: none)")
    by_variant: list[CountSplit] = Field(description="by the variant of the link's A/B split (null: none, or a rule "
                                                     "matched)")
    by_utm_source: list[CountSplit]
    by_browser: list[CountSplit] = Field(description="by browser family and major version (null: unknown)")
    by_os: list[CountSplit] = Field(description="by OS family and major version (null: unknown)")
    by_device: list[CountSplit] = Field(description="by device brand and model (null: unknown)")
    by_browser_family: list[CountSplit] = Field(
        description="by browser family alone, whatever the version (browser: \"Instagram\"; null: unknown); by_browser "
                    "has the versions")
    by_os_family: list[CountSplit] = Field(description="by OS family alone, whatever the version (os: \"Android\"; "
                                                       "null: unknown); by_os has the versions")
    by_bot: list[CountSplit] = Field(description="the bots' clicks alone (human is 0), by the bot's name as the user "
                                                 "agent's parse gives it (name: \"Applebot\", \"FacebookBot\"; null: "
                                                 "a bot the parse does not name)")
    other: dict[str, ClickOtherGroups] = Field(description="per breakdown holding more groups than limit (by_country, "
                                                      "by_referrer_host, by_rule, by_variant, by_utm_source, "
                                                      "by_browser, by_os, by_device, by_browser_family, by_os_family, "
                                                      "by_bot), the groups left out, summed")


async def link_clicks(request: web.Request, query: ClicksQuery) -> web.Response:
    account_id, link_id = request.match_info["account_id"], request.match_info["id"]
    return data(await service.clicks_of_link(request.app[DB], request.app[RESOURCES], request.app[CLICKS], account_id,
                                             link_id, query.days, query.limit))


class LinkLifecycle(BaseModel):
    link_id: str
    open: bool = Field(description="whether a click now goes to the link's target")
    reason: Literal["disabled", "not yet valid", "expired", "click limit reached"] | None = Field(
        description="why not (null when open), as the resolver decides it")
    text: str = Field(description="the state in words, with the time or the count")
    status: int | None = Field(description="what a click is answered when not open: 302 (to pending_url or "
                                           "expired_url), 404 or 410")
    location: str | None = Field(description="the 302's Location when not open")
    human_clicks: int = Field(description="clicks by people stored so far: the count max_clicks is held against")
    max_clicks: int | None
    clicks_left: int | None = Field(description="max_clicks - human_clicks, at least 0; null without max_clicks")
    password_protected: bool


async def link_lifecycle(request: web.Request) -> web.Response:
    account_id, link_id = request.match_info["account_id"], request.match_info["id"]
    return data(await service.lifecycle_of_link(request.app[DB], request.app[RESOURCES], request.app[CLICKS],
                                                account_id, link_id, time.time()))


class InstallsQuery(BaseModel):
    days: int = Field(default=30, ge=1, le=366, description="how many days back")


class InstallDay(BaseModel):
    day: str
    installs: int
    android: int
    ios: int


class LinkInstalls(BaseModel):
    link_id: str
    since: str
    installs: int = Field(description="installs claimed from the link's clicks (deferred deep links)")
    by_day: list[InstallDay]
    by_source: dict[str, int] = Field(description="install_referrer (Android) and pasteboard (iOS)")


async def link_installs(request: web.Request, query: InstallsQuery) -> web.Response:
    account_id, link_id = request.match_info["account_id"], request.match_info["id"]
    return data(await deferred.installs_of_link(request.app[DB], request.app[RESOURCES], account_id, link_id,
                                                query.days))


def link_endpoints() -> list[Endpoint]:
    """A link's UTM, QR code and clicks; after the resource endpoints, as they were declared first."""
    return [
        Endpoint("PATCH", "/accounts/{account_id}/links/{id}/utm", edit_link_utm,
                 "Edit the UTM of a link's destination: other parameters, their order and the fragment stay",
                 "links", body=UtmEdit, response=wrapped(resource_view(KINDS["links"]))[0], security="admin",
                 permission="links:write",
                 errors=(401, 404)),
        Endpoint("GET", "/accounts/{account_id}/links/{id}/qr", link_qr,
                 "The QR code of a link's short URL, as SVG or PNG", "links", query=QrQuery,
                 media_types=tuple(QR_CONTENT_TYPES.values()), security="admin",
                 permission="links:read", errors=(401, 404)),
        Endpoint("GET", "/accounts/{account_id}/links/{id}/clicks", link_clicks,
                 "Clicks of a link: by day (human and bot apart), platform, utm_source, country, referrer, rule, "
                 "variant, browser and OS (by family, and by family and version), device, and the bots by name",
                 "links",
                 query=ClicksQuery, response=Envelope[LinkClicks], security="admin",
                 permission="links:read", errors=(401, 404)),
        Endpoint("GET", "/accounts/{account_id}/links/{id}/lifecycle", link_lifecycle,
                 "Where a link stands now: open, or not yet valid, expired, at its click limit or disabled (what a "
                 "click gets then), with its clicks by people so far and how many max_clicks leaves",
                 "links", response=Envelope[LinkLifecycle], security="admin", permission="links:read",
                 errors=(401, 404)),
        Endpoint("GET", "/accounts/{account_id}/links/{id}/installs", link_installs,
                 "Installs claimed from a link's clicks (deferred deep links), by day, platform and source",
                 "links", query=InstallsQuery, response=Envelope[LinkInstalls], security="admin",
                 permission="links:read", errors=(401, 404)),
    ]
