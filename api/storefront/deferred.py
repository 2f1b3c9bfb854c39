"""``POST /deferred-links/claim``: an app's first start claims the click that led to its install (see
:mod:`linksvc.links.deferred`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from api.appkeys import CLICKS, DB
from api.auth import principal
from api.routing import data
from linksvc.errors import Issue
from linksvc.links import deferred

_NEEDS = {"android": "install_referrer", "ios": "token"}


class DeferredClaimIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    platform: Literal["android", "ios"]
    install_referrer: Annotated[str | None, Field(
        min_length=1, max_length=4000,
        description="android: the referrer string the Play Install Referrer API returns, as it returns it")] = None
    token: Annotated[str | None, Field(
        min_length=1, max_length=300,
        description="ios: the pasteboard text the landing page copied, linksvc:deferred:<tracking_id>")] = None
    app_version: Annotated[str | None, Field(min_length=1, max_length=50)] = None

    @classmethod
    def cross_field_issues(cls, data: dict[str, Any]) -> list[Issue]:
        platform = data.get("platform")
        needed = _NEEDS.get(platform) if isinstance(platform, str) else None
        if needed is None:
            return []  # the platform's own issue
        issues = []
        if data.get(needed) is None:
            issues.append(Issue(needed, f"is required when platform is {data['platform']}", "missing"))
        other = "token" if needed == "install_referrer" else "install_referrer"
        if data.get(other) is not None:
            issues.append(Issue(other, f"is not sent when platform is {data['platform']}", "unexpected"))
        return issues


class DeferredUtm(BaseModel):
    utm_source: str | None
    utm_medium: str | None
    utm_campaign: str | None
    utm_term: str | None
    utm_content: str | None


class DeferredClaim(BaseModel):
    deeplink: str | None = Field(description="the link's deeplink with the UTM and tracking_id, null when none")
    destination_url: str
    utm: DeferredUtm = Field(description="the UTM the click carried (null for a field it did not)")
    tracking_id: str
    link_id: str
    link_code: str
    campaign_id: str | None
    clicked_at: str = Field(json_schema_extra={"format": "date-time"})
    claimed_at: str = Field(json_schema_extra={"format": "date-time"})
    platform: Literal["android", "ios"]


async def claim_deferred_link(request: web.Request, body: DeferredClaimIn) -> web.Response:
    if body.platform == "android":
        key = deferred.key_of_referrer(body.install_referrer or "")
    else:
        key = deferred.key_of_token(body.token or "")
    return data(await deferred.claim(request.app[DB], request.app[CLICKS], principal(request).account_id,
                                     body.platform, key, body.app_version))
