"""The explanation of a route: table-driven over real user agents, link shapes and UTM sources."""

from __future__ import annotations

from typing import Any

import pytest

from linksvc.links.decide import decide
from linksvc.links.devices import classify
from linksvc.links.explain import explain

DESKTOP = ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 "
           "Safari/537.36")
CHROME_ANDROID = ("Mozilla/5.0 (Linux; Android 13; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/116.0.0.0 "
                  "Mobile Safari/537.36")
FIREFOX_ANDROID = "Mozilla/5.0 (Android 13; Mobile; rv:125.0) Gecko/125.0 Firefox/125.0"
IPHONE = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
          "Version/17.5 Mobile/15E148 Safari/604.1")
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
INSTAGRAM = ("Mozilla/5.0 (Linux; Android 13; Pixel 7 Build/TQ3A; wv) AppleWebKit/537.36 (KHTML, like Gecko) "
             "Version/4.0 Chrome/116.0.0.0 Mobile Safari/537.36 Instagram 301.0.0.0 Android")

LINK: dict[str, Any] = {
    "id": "l-1", "code": "welcome", "kind": "email", "campaign_id": "c-1", "template_id": None,
    "destination_url": "https://shop.example/menu?utm_medium=stored",
    "deeplink": "democoffee://menu",
    "android": {"package": "com.democoffee.app", "fallback_url": "https://shop.example/android?utm_term=fb"},
    "ios": {"app_store_id": "1234567890", "bundle_id": "com.democoffee.app", "fallback_url": None},
    "fallback_url": None,
}


def run(user_agent: str, query: dict[str, str] | None = None, accepts_json: bool = False,
        **changes: Any) -> tuple[Any, dict[str, Any]]:
    decision, steps = explain({**LINK, **changes}, classify(user_agent), query or {}, accepts_json,
                              "https://l.example/welcome", "t-new", "linksvc")
    by_step: dict[str, Any] = {}
    for step in steps:
        if step["step"] == "utm":
            by_step.setdefault("utm", {})[step["field"]] = step
        else:
            by_step[step["step"]] = step["text"]
    return decision, by_step


@pytest.mark.parametrize(
    ("user_agent", "query", "changes", "answer", "device", "route"),
    [
        (DESKTOP, {}, {}, "destination", "desktop, chrome, not a bot, not in an app",
         "desktop and unknown platforms get the destination"),
        (CHROME_ANDROID, {}, {}, "intent", "Android, chrome (honours intent URLs), not a bot, not in an app",
         "link has android.package and the browser honours intent URLs -> intent URL; fallback: android.fallback_url"),
        (CHROME_ANDROID, {}, {"android": {"package": "com.democoffee.app", "fallback_url": None}}, "intent",
         "Android, chrome (honours intent URLs)",
         "intent URL; fallback: the Play page with the install referrer"),
        (FIREFOX_ANDROID, {}, {}, "fallback", "Android, firefox (no intent URLs), not a bot, not in an app",
         "the browser has no intent URLs -> the fallback: android.fallback_url"),
        (FIREFOX_ANDROID, {}, {"android": {"package": "p.q", "fallback_url": None},
                               "fallback_url": "https://shop.example/any"}, "fallback",
         "Android, firefox", "the fallback: fallback_url"),
        (IPHONE, {}, {}, "app_store", "iOS, safari, not a bot, not in an app",
         "link has ios settings and no fallback -> the App Store page"),
        (IPHONE, {}, {"fallback_url": "https://shop.example/any"}, "fallback", "iOS",
         "link has ios settings -> the fallback: fallback_url"),
        (IPHONE, {}, {"ios": None}, "destination", "iOS", "iOS but the link has no ios settings: the destination"),
        (GOOGLEBOT, {}, {}, "destination", "a bot or link-preview crawler (googlebot)",
         "bots always get the destination"),
        (INSTAGRAM, {}, {}, "fallback", "in the instagram in-app browser",
         "in-app browsers drop intent URLs -> the fallback: android.fallback_url"),
        (CHROME_ANDROID, {"$app-found": "true"}, {}, "deeplink", "Android", "$app-found=true (the app is installed)"),
        (IPHONE, {"$app-found": "true"}, {"deeplink": None}, "destination", "iOS", "the link has no deeplink"),
        (GOOGLEBOT, {"$app-found": "true"}, {}, "destination", "bot", "bots always get the destination"),
    ],
)
def test_device_and_route(user_agent: str, query: dict[str, str], changes: dict[str, Any], answer: str,
                          device: str, route: str) -> None:
    decision, steps = run(user_agent, query, **changes)
    assert decision.answer == answer
    assert device in steps["device"]
    assert route in steps["route"]


def test_app_found_with_json_says_200() -> None:
    decision, steps = run(CHROME_ANDROID, {"$app-found": "true"}, accepts_json=True)
    assert decision.status == 200 and "200 with the deeplink" in steps["route"]


@pytest.mark.parametrize(
    ("user_agent", "query", "changes", "field", "value", "source"),
    [
        (DESKTOP, {"utm_source": "newsletter"}, {}, "utm_source", "newsletter", "query"),
        (DESKTOP, {}, {}, "utm_source", "linksvc", "defaults"),
        (DESKTOP, {}, {}, "utm_medium", "stored", "destination"),
        (DESKTOP, {"utm_medium": "q"}, {}, "utm_medium", "q", "query"),
        (DESKTOP, {}, {}, "utm_campaign", "c-1", "defaults"),
        (CHROME_ANDROID, {}, {}, "utm_term", "fb", "fallback"),
        (DESKTOP, {}, {}, "utm_term", None, None),  # desktop selects the link's fallback_url, which is absent
        (DESKTOP, {}, {"kind": "external"}, "utm_source", None, None),
        (FIREFOX_ANDROID, {}, {"android": {"package": "p.q", "fallback_url": None},
                               "fallback_url": "https://shop.example/f?utm_content=x"}, "utm_content", "x", "fallback"),
    ],
)
def test_utm_sources(user_agent: str, query: dict[str, str], changes: dict[str, Any], field: str,
                     value: str | None, source: str | None) -> None:
    decision, steps = run(user_agent, query, **changes)
    step = steps["utm"][field]
    assert (step["value"], step["from"]) == (value, source)
    assert decision.utm.get(field) == value
    assert step["text"].startswith(f"{field}={value} (from" if value else f"{field}: none")


@pytest.mark.parametrize(("query", "text"), [({}, "new (none in the query)"),
                                             ({"tracking_id": "abc"}, "kept from the query")])
def test_tracking_id(query: dict[str, str], text: str) -> None:
    decision, steps = run(DESKTOP, query)
    assert steps["tracking_id"] == text
    assert decision.tracking_id == query.get("tracking_id", "t-new")


@pytest.mark.parametrize("user_agent", [DESKTOP, CHROME_ANDROID, FIREFOX_ANDROID, IPHONE, GOOGLEBOT, INSTAGRAM])
@pytest.mark.parametrize("query", [{}, {"$app-found": "true", "utm_source": "q"}])
def test_the_explained_decision_is_decides_own(user_agent: str, query: dict[str, str]) -> None:
    device = classify(user_agent)
    explained, _ = explain(LINK, device, query, False, "https://l.example/welcome", "t-new", "linksvc")
    assert explained == decide(LINK, device, query, False, "https://l.example/welcome", "t-new", "linksvc")


def test_a_broken_link_says_why() -> None:
    decision, steps = run(DESKTOP, destination_url="javascript:alert(1)")
    assert decision.status == 502
    assert "502" in steps["route"] and "destination_url" in steps["skipped"]
