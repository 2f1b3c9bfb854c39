"""Where a click goes: table-driven over devices, link kinds and UTM cases, asserting exact locations."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from linksvc.links.appstores import read_install_referrer
from linksvc.links.decide import decide
from linksvc.links.urls import query_values


@dataclass(frozen=True)
class Dev:
    platform: str
    chromium: bool = False
    bot: bool = False
    in_app: str | None = None


DESKTOP, BOT = Dev("desktop"), Dev("desktop", bot=True)
CHROME_ANDROID, FIREFOX_ANDROID = Dev("android", chromium=True), Dev("android")
FB_ANDROID = Dev("android", chromium=False, in_app="facebook")
SAFARI_IOS, UNKNOWN = Dev("ios"), Dev("unknown")
SHORT = "https://l.example/welcome"
TID = "t-new"

LINK: dict[str, Any] = {
    "id": "l-1", "kind": "email", "campaign_id": "c-1", "template_id": None,
    "destination_url": "https://shop.example/menu?lang=es&utm_source=stored#top",
    "deeplink": "democoffee://menu?x=1",
    "android": {"package": "com.democoffee.app", "fallback_url": None},
    "ios": {"app_store_id": "1234567890", "bundle_id": "com.democoffee.app", "fallback_url": None},
    "fallback_url": None,
}


def link(**changes: Any) -> dict[str, Any]:
    return {**LINK, **changes}


def run(the_link: dict[str, Any], device: Dev, query: dict[str, str] | None = None, json_: bool = False):
    return decide(the_link, device, query or {}, json_, SHORT, TID, "linksvc")


EMAIL_UTM = "utm_source=stored&utm_medium=email&utm_campaign=c-1&tracking_id=t-new"


@pytest.mark.parametrize(
    ("device", "expected"),
    [
        (DESKTOP, f"https://shop.example/menu?lang=es&{EMAIL_UTM}#top"),
        (UNKNOWN, f"https://shop.example/menu?lang=es&{EMAIL_UTM}#top"),
        (BOT, f"https://shop.example/menu?lang=es&{EMAIL_UTM}#top"),
        (Dev("android", chromium=True, bot=True), f"https://shop.example/menu?lang=es&{EMAIL_UTM}#top"),
        (CHROME_ANDROID,
         "intent://menu?x=1&utm_source=stored&utm_medium=email&utm_campaign=c-1&tracking_id=t-new"
         "#Intent;scheme=democoffee;package=com.democoffee.app;S.browser_fallback_url="
         "https%3A%2F%2Fplay.google.com%2Fstore%2Fapps%2Fdetails%3Fid%3Dcom.democoffee.app%26referrer%3D"
         "utm_source%253Dstored%2526utm_medium%253Demail%2526utm_campaign%253Dc-1%2526tracking_id%253Dt-new"
         "%2526link%253Dhttps%25253A%25252F%25252Fl.example%25252Fwelcome;end"),
        (SAFARI_IOS, "https://apps.apple.com/app/id1234567890?utm_source=stored&utm_medium=email&utm_campaign=c-1"
                     "&tracking_id=t-new"),
    ],
)
def test_location_by_device(device: Dev, expected: str) -> None:
    decision = run(LINK, device)
    assert (decision.status, decision.location) == (302, expected)


def test_other_android_browsers_and_in_app_browsers_get_the_play_page() -> None:
    for device in (FIREFOX_ANDROID, FB_ANDROID):
        decision = run(LINK, device)
        assert decision.answer == "play"
        assert decision.location is not None and decision.location.startswith(
            "https://play.google.com/store/apps/details?id=com.democoffee.app&referrer=")
        assert read_install_referrer(decision.location) == {
            "utm_source": "stored", "utm_medium": "email", "utm_campaign": "c-1", "tracking_id": "t-new",
            "link": SHORT}


def test_incoming_utm_wins_and_empty_never_erases() -> None:
    decision = run(LINK, DESKTOP, {"utm_source": "newsletter", "utm_medium": "", "utm_content": "hero"})
    assert decision.location == ("https://shop.example/menu?lang=es&utm_source=newsletter&utm_medium=email"
                                 "&utm_campaign=c-1&utm_content=hero&tracking_id=t-new#top")


def test_incoming_tracking_id_is_kept() -> None:
    assert run(LINK, DESKTOP, {"tracking_id": "t-old"}).tracking_id == "t-old"


@pytest.mark.parametrize("kind", ["in_app", "news_feed", "external", "campaign"])
def test_kinds_without_defaults(kind: str) -> None:
    decision = run(link(kind=kind, destination_url="https://shop.example/p"), DESKTOP)
    assert decision.location == "https://shop.example/p?tracking_id=t-new"
    assert decision.utm == {}


def test_template_id_is_the_default_campaign_without_a_campaign() -> None:
    decision = run(link(kind="push", campaign_id=None, template_id="tpl-9", destination_url="https://s.example/"),
                   DESKTOP)
    assert decision.utm == {"utm_source": "linksvc", "utm_medium": "push", "utm_campaign": "tpl-9"}


def test_selected_fallback_fills_missing_fields_per_platform() -> None:
    the_link = link(
        kind="external", destination_url="https://s.example/p",
        fallback_url="https://s.example/web?utm_term=web-term",
        android={"package": "com.a", "fallback_url": "https://play.google.com/store/apps/details?id=com.a"
                 "&referrer=utm_campaign%3Dplay-c%26gclid%3DG1"},
    )
    android = run(the_link, FIREFOX_ANDROID)
    assert android.utm == {"utm_campaign": "play-c"}
    assert android.location is not None
    assert read_install_referrer(android.location) == {"utm_campaign": "play-c", "gclid": "G1",
                                                       "tracking_id": "t-new", "link": SHORT}
    assert run(the_link, DESKTOP).utm == {"utm_term": "web-term"}  # desktop's fallback is fallback_url


def test_android_fallback_url_is_the_intent_fallback() -> None:
    the_link = link(android={"package": "com.a", "fallback_url": "https://s.example/android?x=1"})
    decision = run(the_link, CHROME_ANDROID)
    assert decision.location is not None and decision.location.endswith(
        "S.browser_fallback_url=https%3A%2F%2Fs.example%2Fandroid%3Fx%3D1%26utm_source%3Dstored%26utm_medium%3D"
        "email%26utm_campaign%3Dc-1%26tracking_id%3Dt-new;end")


def test_ios_fallback_url_wins_over_the_app_store() -> None:
    the_link = link(ios={"app_store_id": "1", "fallback_url": "https://s.example/ios#x"})
    assert run(the_link, SAFARI_IOS).location == f"https://s.example/ios?{EMAIL_UTM}#x"


def test_links_without_app_settings_go_to_the_destination_everywhere() -> None:
    the_link = link(android=None, ios=None)
    for device in (CHROME_ANDROID, FIREFOX_ANDROID, SAFARI_IOS):
        assert run(the_link, device).answer == "destination"


def test_app_found_goes_to_the_deeplink_or_answers_json() -> None:
    query = {"$app-found": "true", "utm_term": "kw"}
    tagged = "democoffee://menu?x=1&utm_source=stored&utm_medium=email&utm_campaign=c-1&utm_term=kw&tracking_id=t-new"
    assert run(LINK, SAFARI_IOS, query).location == tagged
    answer = run(LINK, CHROME_ANDROID, query, json_=True)
    assert answer.status == 200 and answer.location is None
    assert answer.body == {"data": {
        "deeplink": tagged,
        "destination_url": "https://shop.example/menu?lang=es&utm_source=stored&utm_medium=email&utm_campaign=c-1"
                           "&utm_term=kw&tracking_id=t-new#top",
        "utm": {"utm_source": "stored", "utm_medium": "email", "utm_campaign": "c-1", "utm_term": "kw"},
        "tracking_id": "t-new", "link_id": "l-1", "campaign_id": "c-1"}}
    json.dumps(answer.body)
    # Without a deeplink the app is sent to the destination.
    assert query_values(run(link(deeplink=None), SAFARI_IOS, query).location or "")["utm_term"] == "kw"
