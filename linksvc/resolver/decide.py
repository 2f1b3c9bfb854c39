"""Where a click goes (product decisions, section 11, steps 1 to 4): a pure function of the link, the
device, the click's query and what it accepts. Looking up the link and recording the click are the
handler's; nothing here touches the network, the store or the clock.

    desktop, unknown, bots      302 to the destination
    Android, link has a package Chromium browser: 302 to an intent URL whose fallback is
                                android.fallback_url, else fallback_url, else the Play page with the
                                install referrer; other browsers and in-app browsers: 302 to that fallback
    iOS, link has ios settings  302 to ios.fallback_url, else fallback_url, else the App Store page
    $app-found=true             302 to the deeplink; 200 JSON when the client accepts application/json

Every URL the answer leads to carries the five UTM fields and ``tracking_id``. A link stored before the
rules of :mod:`linksvc.resources.link_urls` is read through them: a deeplink or fallback they refuse is
skipped as if absent, and a refused destination makes the answer ``broken`` (status 502, no location), as
does, in the last resort, a location that is not an RFC 3986 URL (a header with a control character in it
would make the server drop the connection instead of answering).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from linksvc.resolver.appstores import intent_url, play_store_url
from linksvc.resolver.urls import with_query
from linksvc.resolver.utm import default_utm, resolve_utm
from linksvc.resources.link_urls import URL_TEXT, usable_link

APP_STORE = "https://apps.apple.com/app/id{}"


class DeviceLike(Protocol):
    @property
    def platform(self) -> str: ...
    @property
    def chromium(self) -> bool: ...
    @property
    def bot(self) -> bool: ...
    @property
    def in_app(self) -> str | None: ...


@dataclass(frozen=True)
class Decision:
    status: int  # 302, 200, or 502 when the link leads nowhere a browser may go
    location: str | None  # for 302
    body: dict[str, Any] | None  # for 200 (JSON)
    answer: str  # what was chosen: destination, intent, fallback, play, app_store, deeplink; broken for 502
    utm: dict[str, str]
    tracking_id: str
    skipped: tuple[str, ...] = ()  # stored URLs the link rules refuse, as "field: problem"


def _fallback_for(link: Mapping[str, Any], device: DeviceLike) -> tuple[str, str | None]:
    """The fallback step 4 picks for this device, and what kind it is (``play`` when generated)."""
    android, ios = link.get("android"), link.get("ios")
    if not device.bot and device.platform == "android" and android:
        chosen = android.get("fallback_url") or link.get("fallback_url")
        return ("fallback", chosen) if chosen else ("play", None)
    if not device.bot and device.platform == "ios" and ios:
        chosen = ios.get("fallback_url") or link.get("fallback_url")
        return ("fallback", chosen) if chosen else ("app_store", None)
    return ("fallback", link.get("fallback_url"))


def decide(
    link: Mapping[str, Any], device: DeviceLike, query: Mapping[str, str], accepts_json: bool,
    short_url: str, new_tracking_id: str, service_label: str,
) -> Decision:
    tracking_id = (query.get("tracking_id", "").strip() or new_tracking_id) if query else new_tracking_id
    usable, skipped = usable_link(link)
    if usable is None:
        return Decision(502, None, None, "broken", {}, tracking_id, tuple(skipped))
    decision = _decide(usable, device, query, accepts_json, short_url, tracking_id, service_label)
    if decision.location is not None and not URL_TEXT.fullmatch(decision.location):
        skipped.append("location: is not an RFC 3986 URL")
        return Decision(502, None, None, "broken", decision.utm, tracking_id, tuple(skipped))
    return replace(decision, skipped=tuple(skipped)) if skipped else decision


def _decide(
    link: Mapping[str, Any], device: DeviceLike, query: Mapping[str, str], accepts_json: bool,
    short_url: str, tracking_id: str, service_label: str,
) -> Decision:
    fallback_kind, fallback = _fallback_for(link, device)
    defaults = default_utm(link["kind"], service_label, link.get("campaign_id"), link.get("template_id"))
    utm = resolve_utm(query, link["destination_url"], fallback, defaults)
    carried = {**utm, "tracking_id": tracking_id}
    # Only the URLs the chosen answer uses are built: this runs on every click.

    def tagged(url: str) -> str:
        return with_query(url, carried)

    def redirect(location: str, answer: str) -> Decision:
        return Decision(302, location, None, answer, utm, tracking_id)

    if query.get("$app-found") == "true" and not device.bot:
        destination = tagged(link["destination_url"])
        deeplink = tagged(link["deeplink"]) if link.get("deeplink") else None
        if accepts_json:
            body = {"deeplink": deeplink, "destination_url": destination, "utm": utm, "tracking_id": tracking_id,
                    "link_id": link["id"], "campaign_id": link.get("campaign_id")}
            return Decision(200, None, {"data": body}, "deeplink", utm, tracking_id)
        return redirect(deeplink or destination, "deeplink" if deeplink else "destination")
    platform = device.platform
    if device.bot or platform not in ("android", "ios"):
        return redirect(tagged(link["destination_url"]), "destination")
    if platform == "android" and link.get("android"):
        package = link["android"]["package"]
        if fallback_kind == "play":
            referrer = {**carried, "link": short_url}
            escape = play_store_url(package, referrer)
        else:
            escape = _tag_store_or_url(fallback or link["destination_url"], package, carried, short_url)
        if device.chromium and not device.in_app:
            target = tagged(link.get("deeplink") or link["destination_url"])
            return redirect(intent_url(target, package, escape), "intent")
        return redirect(escape, fallback_kind if fallback_kind == "play" else "fallback")
    if platform == "ios" and link.get("ios"):
        if fallback_kind == "app_store" and link["ios"].get("app_store_id"):
            return redirect(tagged(APP_STORE.format(link["ios"]["app_store_id"])), "app_store")
        return redirect(tagged(fallback or link["destination_url"]), "fallback")
    return redirect(tagged(link["destination_url"]), "destination")


def _tag_store_or_url(url: str, package: str, carried: Mapping[str, str], short_url: str) -> str:
    """A stored fallback that is a Play page gets the fields inside its referrer (stored referrer
    fields kept); any other URL gets them as parameters."""
    if url.startswith("https://play.google.com/store/apps/details"):
        return play_store_url(package, {**carried, "link": short_url}, url)
    return with_query(url, carried)
