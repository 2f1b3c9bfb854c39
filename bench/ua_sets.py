"""Independent labelled user agents for bench.useragents: what the resolver's platform is measured against.

Two sets, read from PyPI packages that carry them (``pip install -e '.[bench]'``); nothing is downloaded at
run time, and either set is simply absent when its package is not installed:

- fake-useragent 2.2.0, ``fake_useragent/data/browsers.jsonl``: 6,936 rows of 2024-25 browser strings
  (839 distinct), each labelled with the ``os`` the string was collected from. About 476 distinct strings
  (one row each) carry implausible versions ("Chrome/46.0.2184.1797" on an Android 8 Pixel 2), the
  randomised shapes of ByteDance's crawler; they are kept, as the package ships them.
- Matomo device-detector's test fixtures, shipped by the ``device_detector`` 6.5.1 package under
  ``device_detector/tests/fixtures/upstream/*.yml``: about 38,300 strings of real devices and apps, each
  labelled with the OS (name and family), device type and client; ``bots.yml`` holds the bots and is left
  out, since the bot decision is measured on crawlers separately.

The label to platform mapping (docs/decisions.md, "User-agent platforms: how fidelity is measured") asks of
each label the resolver's question: which store, if any, can this device install an app from?

- android: OS family Android (Android, Fire OS, Android TV, HarmonyOS that says Android, Wear OS,
  LineageOS and the other derivatives) and Google TV.
- ios: iOS and iPadOS, on iPhone, iPad and iPod. Apple TV (tvOS) and Apple Watch (watchOS) are unknown:
  neither opens an App Store page for the phone app.
- desktop: Windows, Mac, Chrome OS, Unix and GNU/Linux distributions on a computer (device type desktop,
  none, or a Windows or Mac tablet).
- unknown: everything else: Windows Phone / Mobile / RT / CE, KaiOS and Firefox OS, Symbian, BlackBerry,
  Tizen, webOS, feature phones and real-time OSes, HarmonyOS NEXT / OpenHarmony, and any TV, console,
  car, speaker, camera, e-reader or phone whose OS is neither Android nor iOS (a Linux smart TV is no
  desktop either).

"Browser-shaped" strings are those a browser sends: they start with ``Mozilla/5.0 (`` and carry an engine
token (AppleWebKit/, Gecko/ or Trident/). Every fake-useragent string is one; of the Matomo strings, those
whose client type is "browser" and that are so shaped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from typing import Any

FAKE_USERAGENT = "fake-useragent 2.2.0 data/browsers.jsonl"
MATOMO = "matomo-org/device-detector Tests/fixtures, via PyPI device_detector 6.5.1"

_FAKE_USERAGENT_OS = {
    "Android": "android",
    "iOS": "ios",
    "Windows": "desktop",
    "Mac OS X": "desktop",
    "Linux": "desktop",
    "Ubuntu": "desktop",
    "Chrome OS": "desktop",
}
_DESKTOP_FAMILIES = {"Windows", "Mac", "Chrome OS", "Unix", "GNU/Linux"}
_COMPUTER_TYPES = {"desktop", "", None}
_ENGINES = ("applewebkit/", "gecko/", "trident/")


@dataclass(frozen=True, slots=True)
class Labelled:
    """One labelled string: its platform under the mapping, the label it came from, and its kind."""

    user_agent: str
    platform: str
    label: str
    browser_shaped: bool
    library: bool = False


def browser_shaped(user_agent: str) -> bool:
    lowered = user_agent.lower()
    return lowered.startswith("mozilla/5.0 (") and any(engine in lowered for engine in _ENGINES)


def fake_useragent_set() -> list[Labelled]:
    """Every row of fake-useragent's data (repeated strings kept: each row is an observation)."""
    try:
        text = resources.files("fake_useragent").joinpath("data/browsers.jsonl").read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError):
        return []
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [Labelled(row["useragent"], _FAKE_USERAGENT_OS.get(row["os"], "unknown"),
                     f"{row['os']} / {row['type']} / {row['browser']}", True) for row in rows]


def matomo_platform(entry: dict[str, Any]) -> str:
    """The platform of one Matomo fixture entry under the mapping above."""
    family = entry.get("os_family")
    os_info = entry.get("os")
    name = os_info.get("name") if isinstance(os_info, dict) else None
    device_type = (entry.get("device") or {}).get("type")
    if family in ("Android", "Google TV"):
        return "android"
    if family == "iOS":
        return "ios" if name in ("iOS", "iPadOS") and device_type not in ("tv", "wearable") else "unknown"
    if family in _DESKTOP_FAMILIES:
        if device_type in _COMPUTER_TYPES or (device_type == "tablet" and family in ("Windows", "Mac")):
            return "desktop"
        return "unknown"
    return "unknown"


def _matomo_label(entry: dict[str, Any]) -> str:
    os_info = entry.get("os")
    name = os_info.get("name") if isinstance(os_info, dict) else None
    client = entry.get("client")
    client_type = client.get("type") if isinstance(client, dict) else None
    device_type = (entry.get("device") or {}).get("type") or "-"
    return f"{entry.get('os_family')} / {name} / {device_type} / {client_type}"


def _matomo_entries(bots: bool = False, files: int | None = None) -> Iterator[dict[str, Any]]:
    """The entries of every fixture file but bots.yml (of the first ``files`` of them), or of bots.yml alone."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    folder = resources.files("device_detector").joinpath("tests/fixtures/upstream")
    chosen = [item for item in sorted(folder.iterdir(), key=lambda path: path.name)
              if item.name.endswith(".yml") and (item.name == "bots.yml") == bots]
    for item in chosen[:files]:
        yield from yaml.load(item.read_text(encoding="utf-8"), Loader=loader) or []


def matomo_bots() -> list[str]:
    """The user agents of Matomo's bots.yml (crawlers, monitors, preview fetchers), empty when not installed."""
    try:
        return [str(e["user_agent"]) for e in _matomo_entries(bots=True) if isinstance(e, dict) and e.get("user_agent")]
    except (ModuleNotFoundError, FileNotFoundError):
        return []


def matomo_set(files: int | None = None) -> list[Labelled]:
    """Every non-bot entry of the Matomo fixtures, or of the first ``files`` fixture files (parsing them all
    takes about 7 s with libyaml, much longer without)."""
    try:
        entries = list(_matomo_entries(files=files))
    except (ModuleNotFoundError, FileNotFoundError):
        return []
    labelled = []
    for entry in entries:
        user_agent = str(entry.get("user_agent") or "")
        client = entry.get("client")
        client_type = client.get("type") if isinstance(client, dict) else None
        labelled.append(Labelled(user_agent, matomo_platform(entry), _matomo_label(entry),
                                 client_type == "browser" and browser_shaped(user_agent), client_type == "library"))
    return labelled
