"""The operating system and the kind of device of a click, for rules: a few substring tests on the user agent
beside :func:`linksvc.links.devices.classify` (whose platform and bot they follow), cached like it."""

from __future__ import annotations

from functools import lru_cache

from linksvc.links.devices import MAX_EXAMINED, Device, classify


@lru_cache(maxsize=8192)
def _of_agent(user_agent: str) -> tuple[str, str]:
    device = classify(user_agent)
    ua = user_agent[:MAX_EXAMINED].lower()
    return os_of(ua, device), device_type_of(ua, device)


def agent_facts(user_agent: str) -> tuple[str, str]:
    """``(os, device type)`` of a User-Agent: os one of android, ios, windows, macos, linux, chromeos, other;
    device type one of mobile, tablet, desktop, tv, other."""
    return _of_agent(user_agent[:MAX_EXAMINED]) if user_agent else ("other", "other")


def os_of(ua: str, device: Device) -> str:
    if device.bot:
        return "other"
    if device.platform == "android":
        return "android"
    if device.platform == "ios":
        return "ios"
    if device.platform == "desktop":
        if "; cros " in ua or "chromebook" in ua:
            return "chromeos"
        if "windows" in ua or "win64" in ua or "winnt" in ua:
            return "windows"
        if "mac os" in ua or "macintosh" in ua or "macos" in ua:
            return "macos"
        if "linux" in ua or "x11" in ua:
            return "linux"
    return "other"


_TV = ("smarttv", "smart-tv", "hbbtv", "web0s", "webos", "tizen", "netcast", "vidaa", "crkey", "roku", "aftmm",
       "aftb", "aftt", "google tv", "android tv", "appletv", "apple tv", "xbox", "playstation")


def device_type_of(ua: str, device: Device) -> str:
    if device.bot:
        return "other"
    if any(token in ua for token in _TV):
        return "tv"
    if device.platform == "ios":
        return "tablet" if "ipad" in ua else "mobile"
    if device.platform == "android":
        # Android tablets leave "Mobile" out of their strings (Chrome's own rule for its tablet UA)
        return "mobile" if "mobile" in ua else "tablet"
    if device.platform == "desktop":
        return "desktop"
    return "mobile" if "mobile" in ua else "other"
