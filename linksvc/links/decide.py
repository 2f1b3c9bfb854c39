"""Where a click goes (product decisions, section 11, steps 1 to 4): a pure function of the link, the
device, the click's query and what it accepts. Looking up the link and recording the click are the
handler's; nothing here touches the network, the store or the clock.

    desktop, unknown, bots      302 to the destination
    Android, link has a package Chromium browser: 302 to an intent URL whose fallback is
                                android.fallback_url, else fallback_url, else the Play page with the
                                install referrer; other browsers and in-app browsers: 302 to that fallback
    iOS, link has ios settings  302 to ios.fallback_url, else fallback_url, else the App Store page
    iOS, ios.landing_page       200 and a page (answer "landing"): "Open in the app" copies the click's token
                                and opens the App Store; "Continue to the website" goes where the 302 would
    $app-found=true             302 to the deeplink; 200 JSON when the client accepts application/json

Every URL the answer leads to carries the five UTM fields and ``tracking_id``. A link stored before the
rules of :mod:`linksvc.links.link_urls` is read through them: a deeplink or fallback they refuse is
skipped as if absent, and a refused destination makes the answer ``broken`` (status 502, no location), as
does, in the last resort, a location that is not an RFC 3986 URL (a header with a control character in it
would make the server drop the connection instead of answering).

Given a :class:`Trace`, :func:`decide` also records which branch it took, where the fallback and each UTM
value came from and whether the tracking id was kept; :mod:`linksvc.links.explain` turns that into
sentences. The click path passes none, so it pays for no recording.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from linksvc.clock import parse_iso
from linksvc.links.appstores import intent_url, play_store_url
from linksvc.links.link_urls import URL_TEXT, usable_link
from linksvc.links.urls import with_query
from linksvc.links.utm import default_utm, resolve_utm

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
    utm_origin: dict[str, str] = field(default_factory=dict)  # field -> a name of utm.UTM_SOURCES, for the click


@dataclass
class Trace:
    """What :func:`decide` did, recorded only when one is passed in."""

    route: str = ""  # the branch of step 4: see ROUTES in linksvc.links.explain
    fallback_from: str | None = None  # the link field of the selected fallback, or "play" / "app_store"
    utm_from: dict[str, str] = field(default_factory=dict)  # field -> a name of utm.UTM_SOURCES
    tracking_id_kept: bool = False  # the query carried a tracking_id


@dataclass(frozen=True)
class Unavailable:
    """Why a link does not lead to its target now, and what it answers instead (docs/decisions.md, "Link
    lifecycle and passwords (issue 34)"): a 302 to the link's ``pending_url`` or ``expired_url`` when it names
    one, else a page (404 before ``valid_since``, 410 otherwise). No click is recorded for these answers."""

    reason: str  # "disabled", "not yet valid", "expired", "click limit reached"
    text: str  # the reason in words, with the time or the count
    status: int  # 302, 404 or 410
    location: str | None  # for 302


def unavailable(link: Mapping[str, Any], now: float, human_clicks: int | None = None) -> Unavailable | None:
    """Why a stored link does not lead to its target at ``now`` (a Unix time), given the clicks by people
    counted for it (None: not known, and not checked), or None when it does."""
    if link.get("disabled"):
        return Unavailable("disabled", "disabled", 410, None)
    valid_since = link.get("valid_since")
    if valid_since is not None and parse_iso(valid_since).timestamp() > now:
        pending = link.get("pending_url")
        return Unavailable("not yet valid", f"not yet valid: valid since {valid_since}", 302 if pending else 404,
                           pending)
    expired = link.get("expired_url")
    expires_at = link.get("expires_at")
    if expires_at is not None and parse_iso(expires_at).timestamp() <= now:
        return Unavailable("expired", f"expired at {expires_at}", 302 if expired else 410, expired)
    limit = link.get("max_clicks")
    if limit is not None and human_clicks is not None and human_clicks >= limit:
        return Unavailable("click limit reached", f"click limit reached: {human_clicks} of {limit} clicks by people",
                           302 if expired else 410, expired)
    return None


def _fallback_for(link: Mapping[str, Any], device: DeviceLike) -> tuple[str, str | None, str | None]:
    """The fallback step 4 picks for this device, what kind it is (``play`` or ``app_store`` when
    generated) and the link field it came from."""
    android, ios = link.get("android"), link.get("ios")
    if not device.bot and device.platform == "android" and android:
        if android.get("fallback_url"):
            return "fallback", android["fallback_url"], "android.fallback_url"
        if link.get("fallback_url"):
            return "fallback", link["fallback_url"], "fallback_url"
        return "play", None, None
    if not device.bot and device.platform == "ios" and ios:
        if ios.get("fallback_url"):
            return "fallback", ios["fallback_url"], "ios.fallback_url"
        if link.get("fallback_url"):
            return "fallback", link["fallback_url"], "fallback_url"
        return "app_store", None, None
    chosen = link.get("fallback_url")
    return "fallback", chosen, "fallback_url" if chosen else None


def decide(
    link: Mapping[str, Any], device: DeviceLike, query: Mapping[str, str], accepts_json: bool,
    short_url: str, new_tracking_id: str, service_label: str, trace: Trace | None = None,
) -> Decision:
    kept = query.get("tracking_id", "").strip() if query else ""
    tracking_id = kept or new_tracking_id
    if trace is not None:
        trace.tracking_id_kept = bool(kept)
    usable, skipped = usable_link(link)
    if usable is None:
        if trace is not None:
            trace.route = "broken"
        return Decision(502, None, None, "broken", {}, tracking_id, tuple(skipped))
    decision = _decide(usable, device, query, accepts_json, short_url, tracking_id, service_label, trace)
    if decision.location is not None and not URL_TEXT.fullmatch(decision.location):
        skipped.append("location: is not an RFC 3986 URL")
        if trace is not None:
            trace.route = "broken"
        return Decision(502, None, None, "broken", decision.utm, tracking_id, tuple(skipped), decision.utm_origin)
    return replace(decision, skipped=tuple(skipped)) if skipped else decision


def _decide(
    link: Mapping[str, Any], device: DeviceLike, query: Mapping[str, str], accepts_json: bool,
    short_url: str, tracking_id: str, service_label: str, trace: Trace | None,
) -> Decision:
    fallback_kind, fallback, fallback_from = _fallback_for(link, device)
    defaults = default_utm(link["kind"], service_label, link.get("campaign_id"), link.get("template_id"))
    origins: dict[str, str] = {} if trace is None else trace.utm_from  # recorded with the click
    utm = resolve_utm(query, link["destination_url"], fallback, defaults, origins)
    if trace is not None:  # a generated fallback is named by its kind
        trace.fallback_from = fallback_from or (None if fallback_kind == "fallback" else fallback_kind)
    carried = {**utm, "tracking_id": tracking_id}
    # Only the URLs the chosen answer uses are built: this runs on every click.

    def tagged(url: str) -> str:
        return with_query(url, carried)

    def redirect(location: str, answer: str, route: str) -> Decision:
        if trace is not None:
            trace.route = route
        return Decision(302, location, None, answer, utm, tracking_id, utm_origin=origins)

    if query.get("$app-found") == "true" and not device.bot:
        destination = tagged(link["destination_url"])
        deeplink = tagged(link["deeplink"]) if link.get("deeplink") else None
        if accepts_json:
            body = {"deeplink": deeplink, "destination_url": destination, "utm": utm, "tracking_id": tracking_id,
                    "link_id": link["id"], "campaign_id": link.get("campaign_id")}
            if trace is not None:
                trace.route = "app_found_json"
            return Decision(200, None, {"data": body}, "deeplink", utm, tracking_id, utm_origin=origins)
        if deeplink:
            return redirect(deeplink, "deeplink", "app_found")
        return redirect(destination, "destination", "app_found_no_deeplink")
    platform = device.platform
    if device.bot:
        return redirect(tagged(link["destination_url"]), "destination", "bot")
    if platform not in ("android", "ios"):
        return redirect(tagged(link["destination_url"]), "destination", "desktop")
    if platform == "android" and link.get("android"):
        package = link["android"]["package"]
        if fallback_kind == "play":
            referrer = {**carried, "link": short_url}
            escape = play_store_url(package, referrer)
        else:
            escape = _tag_store_or_url(fallback or link["destination_url"], package, carried, short_url)
        if device.chromium and not device.in_app:
            target = tagged(link.get("deeplink") or link["destination_url"])
            return redirect(intent_url(target, package, escape), "intent", "android_intent")
        return redirect(escape, fallback_kind if fallback_kind == "play" else "fallback",
                        "android_in_app" if device.in_app else "android_other_browser")
    if platform == "ios" and link.get("ios"):
        if link["ios"].get("landing_page") and link["ios"].get("app_store_id"):
            return _landing(link, fallback, tagged, utm, tracking_id, origins, trace)
        if fallback_kind == "app_store" and link["ios"].get("app_store_id"):
            return redirect(tagged(APP_STORE.format(link["ios"]["app_store_id"])), "app_store", "ios")
        if trace is not None and not fallback:
            trace.fallback_from = "destination_url"
        return redirect(tagged(fallback or link["destination_url"]), "fallback", "ios")
    return redirect(tagged(link["destination_url"]), "destination", f"{platform}_no_app")


def _landing(link: Mapping[str, Any], fallback: str | None, tagged: Callable[[str], str], utm: dict[str, str],
             tracking_id: str, origins: dict[str, str], trace: Trace | None) -> Decision:
    """The iOS landing page of a link with ``ios.landing_page`` (deferred deep links): 200 and a page, whose
    button opens the App Store and whose link goes where the 302 would have (the fallback, else the
    destination). ``body`` holds the two URLs for the page."""
    if trace is not None:
        trace.route = "ios_landing"
        if not fallback:
            trace.fallback_from = "destination_url"
    body = {"app_store_url": tagged(APP_STORE.format(link["ios"]["app_store_id"])),
            "web_url": tagged(fallback or link["destination_url"])}
    return Decision(200, None, body, "landing", utm, tracking_id, utm_origin=origins)


def _tag_store_or_url(url: str, package: str, carried: Mapping[str, str], short_url: str) -> str:
    """A stored fallback that is a Play page gets the fields inside its referrer (stored referrer
    fields kept); any other URL gets them as parameters."""
    if url.startswith("https://play.google.com/store/apps/details"):
        return play_store_url(package, {**carried, "link": short_url}, url)
    return with_query(url, carried)
