"""Which device sent a click: the User-Agent string classified into platform, browser, bot and in-app.

This module owns the answer to "what is on the other end of this click" for the resolver (product
decisions 11, step 4). It is pure: a string in, a frozen ``Device`` out.

Why hand-written and not the ``user-agents`` package: ``user_agents.parse`` runs hundreds of regular
expressions and costs about 1 ms per new string on these machines. Crawlers, app updates and the reduced
Chrome user agent mean a large share of clicks carry a string not seen before, and the resolver must
answer a never-seen user agent at a good fraction of a bare handler's speed. The resolver only needs five
facts, so plain substring tests on the lower-cased string decide them in a few microseconds, and an LRU
cache makes a repeated string a dict lookup. Only the first ``MAX_EXAMINED`` characters are examined, so a
huge header costs no more than a normal one.

Decisions:

- Bots and link-preview crawlers win over everything. They are those of the crawler-user-agents package
  plus a few fetchers of our own, matched case-sensitively on the original string (``bots``, which says
  why). A bot's ``platform`` is ``"unknown"`` (the Googlebot smartphone string says "Android", yet it must
  get the destination, never an intent URL), its ``chromium`` is False and its ``browser`` is the
  crawler's name. A resolver that looked only at the platform would therefore still send a bot to the
  destination.
- ``chromium`` means "an Android browser that honours ``intent://`` URLs": Chrome, Samsung Internet,
  Edge (EdgA), Opera (OPR), and other browsers built on Chrome that carry its token (Brave sends exactly
  Chrome's string). It is False on every other platform, including desktop Chrome and Chrome on iOS
  (CriOS is WebKit and has no intents), so ``device.chromium`` alone selects the intent answer.
- In-app browsers of Facebook (FBAN/FBAV/FB_IAB), Instagram and TikTok (musical_ly, trill_,
  BytedanceWebview, TikTok) are WebViews: an ``intent://`` navigation there is handled, or dropped, by the
  host app, and is often dropped. They get ``in_app`` = "facebook" / "instagram" / "tiktok",
  ``browser`` = "webview" and ``chromium`` = False, so the resolver sends them to the fallback. Other
  Android WebViews (the "; wv)" token) are treated alike, with ``in_app`` = "webview".
- Firefox on Android (Gecko, no Chrome token) is not chromium. Android UAs with no known browser token
  are not chromium either: the fallback always works, a wrong intent URL does not.
- iPadOS Safari sends a macOS string by default ("Macintosh; Intel Mac OS X"); nothing in Safari's string
  tells it from a Mac, so it is desktop. Chrome, Edge and Firefox on iPadOS keep their tokens (CriOS,
  EdgiOS, FxiOS) and in-app browsers keep "Mobile/": those are ios. Chrome's "request desktop site" on
  Android is desktop Linux.
- iOS apps' own HTTP clients send "Name/1.0 CFNetwork/... Darwin/..." and are ios; macOS apps add their
  CPU or model after Darwin ("(x86_64)", "(arm64)", "(i386) (MacBookPro5%2C1)") and stay desktop.
- Windows Phone (whose strings also name Android or iPhone), KaiOS and HarmonyOS NEXT (OpenHarmony, no
  Android) have neither Google Play nor the App Store: unknown, so they get the web page. Amazon Silk is
  android without intents (Fire devices have Amazon's store).
- Android is looked for before iOS: Android models may carry "ipad" in their names ("HiPad X"), and the
  strings that name both (Windows Phone's) are decided before. "like Android" (PocketBook, Tizen, Plasma
  Mobile) claims compatibility and is not Android. Android under other spellings is android without
  intents: UC Browser's "Adr 9", the "Andr0id" of TV browsers, Google TV, Fire TV model codes ("AFTMM")
  and Facebook's Android app client ("FB4A") in strings naming no system. An Android app on ChromeOS
  (the string names a Chromebook) is desktop.
- A device that is neither a computer nor an Android or iOS device is unknown, whatever system its
  string names: Xbox, Windows Phone / Mobile / CE and Windows RT ("; ARM;") among Windows strings; smart
  TVs and set-top boxes (HbbTV, SmartTV, webOS, Tizen, VIDAA, NetCast, Opera TV's OMI, CE-HTML / NetRange
  portals, Chromecast's CrKey, Roku, MIPS boards), signage (BrightSign), cars (Tesla), speakers (Sonos),
  e-readers (Kindle, PocketBook) and phones whose browser says Linux (Opera Mini, Tizen) among Linux
  strings. desktop and unknown get the same answer (the destination); the difference is for statistics.
- Apps' own clients that name no usual system are placed by what they do name: "iOS" as a word
  ("(iPad; iOS 17.0)", "iOS/16.1") is ios, "Mac OS" / "macOS" and Windows tokens ("Win64", "WinNT") are
  desktop, Apple Watch (watchOS) and Apple TV ("like Mac OS X" with no iPhone or iPad) are unknown.
- In-app browsers of LinkedIn, Snapchat, X, LINE and the Google app on Android are Android WebViews
  ("; wv)"): in_app "webview", which already sends them to the fallback, so they need no name of their
  own. On iOS in_app changes no answer (ios gets the App Store or the fallback either way). WhatsApp opens
  links in the system browser. Telegram's in-app browser on Android may send a WebView string without
  "; wv)" ("Version/4.0 Chrome/..."): Chrome itself never sends "Version/4.0", so such a string (also
  pre-5.0 WebViews and OEM browsers built on one) is a webview and gets the fallback, not an intent URL
  (the fallback always works, an intent URL a WebView drops does not). When Telegram sends Chrome's own
  string, only its X-Requested-With header would tell it: it then counts as Chrome (a known gap).
- How these decisions are measured against independent labelled sets: docs/decisions.md, "User-agent
  platforms: how fidelity is measured" (bench.useragents).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from linksvc.links.bots import bot_name

Platform = Literal["android", "ios", "desktop", "unknown"]

MAX_EXAMINED = 512
"""Characters of the User-Agent that are looked at; the longest in-app strings are under 400."""

CACHE_SIZE = 8192
"""Distinct (truncated) strings remembered; at most about 5 MB of keys."""


@dataclass(frozen=True, slots=True)
class Device:
    """What the resolver needs to know about the client of one click."""

    platform: Platform
    browser: str
    chromium: bool
    bot: bool
    in_app: str | None


UNKNOWN = Device(platform="unknown", browser="other", chromium=False, bot=False, in_app=None)

_FACEBOOK_TOKENS = ("fban/", "fbav/", "fb_iab", "fbios")
_TIKTOK_TOKENS = ("musical_ly", "bytedancewebview", "tiktok", " trill_")
# Windows that is no PC: Xbox, Windows Phone / Mobile / CE (and UC Browser's "wds" for it), Windows RT.
_NOT_A_WINDOWS_PC = ("xbox", "; arm;", "windows ce", "iemobile", "wpdesktop", "; wds ")
# Linux that is no computer: smart TVs and set-top boxes (HbbTV, webOS, Tizen, VIDAA, NetCast, Opera TV and
# its OMI, CE-HTML / NetRange portals, Chromecast, Roku, MIPS boards), signage, cars, speakers, e-readers,
# and phones whose browser says Linux (Opera Mini, Tizen).
_NOT_A_LINUX_COMPUTER = ("smarttv", "smart-tv", "hbbtv", "web0s", "webos", "tizen", "netcast", "vidaa", " omi/",
                         "opera tv", "ce-html", "netrange", "crkey", "roku", "mips", "_tv_", "large screen",
                         "brightsign", "tesla/", "sonos", "kindle", "pocketbook", "opera mini")


def classify(user_agent: str | None) -> Device:
    """Classify a User-Agent header; never raises, whatever the input."""
    if not user_agent:
        return UNKNOWN
    return _classify_cached(user_agent[:MAX_EXAMINED])


def classify_uncached(user_agent: str) -> Device:
    """The same classification without the cache (the cache stores its results)."""
    ua = user_agent[:MAX_EXAMINED].lower()
    bot = _bot_name(user_agent[:MAX_EXAMINED])
    if bot is not None:
        return _device("unknown", bot, False, True, None)
    if "windows phone" in ua or "kaios" in ua or "openharmony" in ua or ("harmonyos" in ua and "android" not in ua):
        return UNKNOWN
    # Android before iOS: Android models may contain "ipad" ("HiPad X"); no iOS string names Android.
    if "android" in ua or "silk/" in ua:
        return _android(ua, _in_app(ua))
    if "iphone" in ua or "ipad" in ua or "ipod" in ua or _ipados_desktop(ua) or _ios_app_client(ua):
        in_app = _in_app(ua)
        return _device("ios", _ios_browser(ua, in_app), False, False, in_app)
    if "windows" in ua:
        return _windows(ua)
    if "macintosh" in ua or ("mac os" in ua and "like mac os" not in ua):
        return _device("desktop", _desktop_browser(ua), False, False, None)
    if "linux" in ua or "x11" in ua or "; cros " in ua:
        return _linux(ua, _in_app(ua))
    return _elsewhere(ua, _in_app(ua))


_classify_cached = lru_cache(maxsize=CACHE_SIZE)(classify_uncached)

# Every field of a Device comes from a small fixed set, so this cache stays small; it saves building a
# frozen dataclass (about 1.5 us) on each classification and lets equal devices share one object.
_device = lru_cache(maxsize=None)(Device)


def clear_cache() -> None:
    """Forget every cached classification (benchmarks and tests of the uncached path)."""
    _classify_cached.cache_clear()


def _bot_name(text: str) -> str | None:
    """The bot's name, from the crawler-user-agents list and ours (``bots``), matched case-sensitively on the
    original string as upstream does; None for a person's browser or app."""
    return bot_name(text)


def _ipados_desktop(ua: str) -> bool:
    """iPadOS asking for the desktop site: a Mac string with an iOS browser's token or the Mobile/ build."""
    return "macintosh" in ua and ("crios/" in ua or "fxios/" in ua or "edgios/" in ua or " mobile/" in ua)


def _ios_app_client(ua: str) -> bool:
    """An app's own HTTP client on iOS ("App/1.2 CFNetwork/1490 Darwin/23.2.0"); macOS adds its CPU or model
    after Darwin ("(x86_64)", "(arm64)", "(i386) (MacBookPro5%2C1)")."""
    at = ua.find("darwin/")
    return at >= 0 and "cfnetwork/" in ua and "(" not in ua[at:]


def _android_variant(ua: str) -> bool:
    """Android spelled otherwise: UC Browser's "Adr 9", the "Andr0id" of TV browsers, Google TV."""
    return "; adr " in ua or ";adr " in ua or "andr0id" in ua or "googletv" in ua


def _windows(ua: str) -> Device:
    """Windows is desktop, except Xbox, Windows Phone / Mobile / CE and Windows RT ("; ARM;"), which run
    neither Android nor iOS apps and are no computer to send to a desktop page either."""
    for token in _NOT_A_WINDOWS_PC:
        if token in ua:
            return UNKNOWN
    return _device("desktop", _desktop_browser(ua), False, False, None)


def _linux(ua: str, in_app: str | None) -> Device:
    """Linux is desktop, except Android under another name and devices that are no computer (TVs, set-top
    boxes, cars, speakers, e-readers, other phone systems): those are unknown."""
    if _android_variant(ua):
        return _device("android", "webview" if in_app else "other", False, False, in_app)
    for token in _NOT_A_LINUX_COMPUTER:
        if token in ua:
            return UNKNOWN
    return _device("desktop", _desktop_browser(ua), False, False, None)


def _elsewhere(ua: str, in_app: str | None) -> Device:
    """Strings naming none of the usual systems: mostly apps' own HTTP clients."""
    if "darwin/" in ua:
        return UNKNOWN if "watchos" in ua else _device("desktop", "other", False, False, None)
    if "macos" in ua or "(win" in ua or "winnt" in ua or "win64" in ua or "win32" in ua:
        return _device("desktop", "other", False, False, None)
    if _android_variant(ua) or "fb4a" in ua or _fire_tv(ua):
        return _device("android", "webview" if in_app else "other", False, False, in_app)
    if _ios_word(ua):
        return _device("ios", "webview" if in_app else "other", False, False, in_app)
    return UNKNOWN


def _fire_tv(ua: str) -> bool:
    """An Amazon Fire TV model code (AFTMM, AFTKA, AFTSO001) after a separator: Fire OS apps' own clients."""
    at = ua.find("aft")
    while at >= 0:
        if at > 0 and ua[at - 1] in ";_ (" and ua[at + 3 : at + 4].isalpha():
            return True
        at = ua.find("aft", at + 3)
    return False


def _ios_word(ua: str) -> bool:
    """The word "iOS" ("(iPad; iOS 17.0)", "App/2 iOS/16.1", "FBSN/iOS"): an iOS app's own client."""
    at = ua.find("ios")
    while at >= 0:
        before = ua[at - 1 : at] if at > 0 else " "
        after = ua[at + 3 : at + 4]
        if not before.isalnum() and not after.isalpha():
            return True
        at = ua.find("ios", at + 3)
    return False


def _in_app(ua: str) -> str | None:
    # Instagram first: its strings are the more specific of the two Meta apps.
    if "instagram" in ua:
        return "instagram"
    if "fb" in ua:
        for token in _FACEBOOK_TOKENS:
            if token in ua:
                return "facebook"
    for token in _TIKTOK_TOKENS:
        if token in ua:
            return "tiktok"
    return None


def _android(ua: str, in_app: str | None) -> Device:
    if "like android" in ua:  # a claim of compatibility (PocketBook, Tizen, Plasma Mobile), not Android
        return _linux(ua, in_app)
    if "chromebook" in ua:  # an Android app on ChromeOS (ARC): the computer is a Chromebook
        return _device("desktop", "webview" if in_app else "other", False, False, None)
    if in_app is None and "; wv)" in ua:
        in_app = "webview"
    if in_app is not None:
        return _device("android", "webview", False, False, in_app)
    if "silk/" in ua:  # Amazon Fire: Amazon's store, not Google Play, so no intent URL
        return _device("android", "silk", False, False, None)
    if "chrome/" in ua:
        if "samsungbrowser/" in ua:
            browser = "samsung"
        elif "edga/" in ua:
            browser = "edge"
        elif "opr/" in ua:
            browser = "opera"
        elif "version/4.0 " in ua:
            # Chrome never sends "Version/4.0": this is a WebView without the "; wv)" token (Telegram's
            # in-app browser, pre-5.0 WebViews, OEM browsers built on one); an intent URL may be dropped there
            return _device("android", "webview", False, False, "webview")
        else:
            browser = "chrome"
        return _device("android", browser, True, False, None)
    return _device("android", "firefox" if "firefox/" in ua else "other", False, False, None)


def _ios_browser(ua: str, in_app: str | None) -> str:
    if in_app is not None:
        return "webview"
    if "crios/" in ua:
        return "chrome"
    if "fxios/" in ua:
        return "firefox"
    if "edgios/" in ua:
        return "edge"
    if "opios/" in ua or "opt/" in ua:
        return "opera"
    if "safari/" in ua:
        return "safari"
    return "webview"


def _desktop_browser(ua: str) -> str:
    if "edg/" in ua or "edge/" in ua:
        return "edge"
    if "opr/" in ua:
        return "opera"
    if "firefox/" in ua:
        return "firefox"
    if "chrome/" in ua:
        return "chrome"
    if "safari/" in ua:
        return "safari"
    return "other"
