"""Why the resolver answers a click as it does: the steps of a route in words, for ``linksvc route`` and the
dashboard's link preview.

Nothing here decides anything: :func:`explain` runs :func:`linksvc.links.decide.decide` with a
:class:`~linksvc.links.decide.Trace` and describes what it recorded (the branch taken, where the
fallback and each UTM value came from, whether the tracking id was kept), so the explanation cannot
drift from the rules. Each step is a small dict: ``{"step": "device" | "route" | "utm" | "tracking_id" |
"skipped", "text": ...}``; UTM steps also carry ``field``, ``value`` and ``from`` (a name of
:data:`linksvc.links.utm.UTM_SOURCES`, or None when no source has the field); the device step carries
the classifier's ``platform``, ``browser``, ``intents`` (an Android browser that opens intent URLs), ``bot``
and ``in_app``, for a reader that words them its own way (the dashboard).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from linksvc.links.decide import Decision, DeviceLike, Trace, Unavailable, decide
from linksvc.links.utm import UTM_FIELDS

Step = dict[str, Any]

PLATFORM_NAMES = {"android": "Android", "ios": "iOS", "desktop": "desktop", "unknown": "unknown platform"}
SOURCE_TEXT = {
    "query": "from the click's query",
    "destination": "from the link's destination",
    "fallback": "from the fallback page",
    "defaults": "from the defaults of this kind of link",
}
FALLBACK_TEXT = {
    "play": "the Play page with the install referrer",
    "app_store": "the App Store page",
}


def describe_device(device: DeviceLike) -> str:
    """One line on the client: platform, browser, bot, in-app browser."""
    if device.bot:
        return f"a bot or link-preview crawler ({getattr(device, 'browser', 'bot')}), whatever its platform"
    parts = [PLATFORM_NAMES.get(device.platform, device.platform)]
    browser = getattr(device, "browser", None)
    if browser:
        if device.platform == "android":
            honours = "honours intent URLs" if device.chromium else "no intent URLs"
            parts.append(f"{browser} ({honours})")
        else:
            parts.append(str(browser))
    parts.append("not a bot")
    parts.append(f"in the {device.in_app} in-app browser" if device.in_app else "not in an app")
    return ", ".join(parts)


def _fallback_text(fallback_from: str | None) -> str:
    if fallback_from is None:
        return "none"
    return FALLBACK_TEXT.get(fallback_from, fallback_from)


def describe_route(trace: Trace, decision: Decision) -> str:
    """The branch of step 4 the decision took, in words."""
    route = trace.route
    if route == "broken":
        return "the link leads nowhere a browser may go (a stored URL the link rules refuse): 502"
    if route == "app_found_json":
        return "$app-found=true and the client accepts JSON: 200 with the deeplink and the UTM"
    if route == "app_found":
        return "$app-found=true (the app is installed): the deeplink"
    if route == "app_found_no_deeplink":
        return "$app-found=true but the link has no deeplink: the destination"
    if route == "bot":
        return "bots always get the destination (recorded as a bot click)"
    if route == "desktop":
        return "desktop and unknown platforms get the destination"
    fallback = _fallback_text(trace.fallback_from)
    if route == "android_intent":
        return f"link has android.package and the browser honours intent URLs -> intent URL; fallback: {fallback}"
    if route == "android_in_app":
        return f"link has android.package but in-app browsers drop intent URLs -> the fallback: {fallback}"
    if route == "android_other_browser":
        return f"link has android.package but the browser has no intent URLs -> the fallback: {fallback}"
    if route == "ios_landing":
        return ("link has ios.landing_page -> a page: 'Open in the app' copies the click's token and opens the "
                f"App Store; 'Continue to the website' goes to {fallback}")
    if route == "ios":
        if decision.answer == "app_store":
            return "link has ios settings and no fallback -> the App Store page"
        return f"link has ios settings -> the fallback: {fallback}"
    platform = route.removesuffix("_no_app")
    key = "android.package" if platform == "android" else "ios settings"
    return f"{PLATFORM_NAMES.get(platform, platform)} but the link has no {key}: the destination"


def describe_utm(utm: Mapping[str, str], utm_from: Mapping[str, str]) -> list[Step]:
    """One step per UTM field, in the order of the fields."""
    steps: list[Step] = []
    for name in UTM_FIELDS:
        source = utm_from.get(name)
        value = utm.get(name)
        text = f"{name}={value} ({SOURCE_TEXT[source]})" if source and value is not None else \
            f"{name}: none (no source has it)"
        steps.append({"step": "utm", "field": name, "value": value, "from": source, "text": text})
    return steps


def explain(
    link: Mapping[str, Any], device: DeviceLike, query: Mapping[str, str], accepts_json: bool,
    short_url: str, new_tracking_id: str, service_label: str,
) -> tuple[Decision, list[Step]]:
    """The decision for these inputs (the same as :func:`decide`'s) and the steps that explain it."""
    trace = Trace()
    decision = decide(link, device, query, accepts_json, short_url, new_tracking_id, service_label, trace)
    steps: list[Step] = [
        {"step": "device", "text": describe_device(device), "platform": device.platform,
         "browser": getattr(device, "browser", None), "intents": device.chromium, "bot": device.bot,
         "in_app": device.in_app},
        {"step": "route", "text": describe_route(trace, decision)},
    ]
    if decision.skipped:
        steps.append({"step": "skipped", "text": "ignored: " + "; ".join(decision.skipped)})
    if trace.route != "broken" or decision.utm:
        steps.extend(describe_utm(decision.utm, trace.utm_from))
    kept = "kept from the query" if trace.tracking_id_kept else "new (none in the query)"
    steps.append({"step": "tracking_id", "text": kept})
    return decision, steps


def explain_unavailable(state: Unavailable) -> str:
    """The route step of a link that does not lead to its target now (:func:`linksvc.links.decide.unavailable`):
    "expired", "not yet valid", "click limit reached" or "disabled", and what is answered instead."""
    if state.status == 302:
        field = "pending_url" if state.reason == "not yet valid" else "expired_url"
        instead = f"302 to its {field} {state.location} (no click recorded)"
    elif state.status == 404:
        instead = "404 and a small page saying when it opens (no click recorded)"
    else:
        instead = "410 and a small page (no click recorded)"
    return f"the link is {state.text} -> {instead}"


PASSWORD_TEXT = ("the link is password-protected: without the cookie of a right password, 200 and a page asking "
                 "for it (nothing of the target; bots and link-preview fetchers get only that page); the right "
                 "password answers as below and records the click")
