"""Table-driven classification of real strings (fixtures/user_agents_labelled.json, each with its source).

Most entries are copied verbatim from the independent labelled sets that bench.useragents measures
against (fake-useragent 2.2.0's 2024-25 browser strings, Matomo device-detector's fixtures as shipped by
device_detector 6.5.1, one crawler-user-agents example); the first ones are documented formats. Every entry
gives the platform and bot decision; ``chromium`` and ``in_app`` are checked where the entry gives them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from linksvc.links.devices import classify, classify_uncached

LABELLED: list[dict[str, Any]] = json.loads(
    (Path(__file__).resolve().parents[2] / "fixtures" / "user_agents_labelled.json").read_text(encoding="utf-8")
)
REQUIRED = {"name", "user_agent", "platform", "bot", "source"}
OPTIONAL = {"chromium", "in_app"}
PACKAGES = ("fake-useragent 2.2.0", "matomo-org/device-detector", "crawler-user-agents 1.67.0")


def test_every_entry_names_its_source_and_has_the_stable_keys() -> None:
    for entry in LABELLED:
        assert REQUIRED <= set(entry) <= REQUIRED | OPTIONAL and entry["source"], entry["name"]
    assert len({entry["name"] for entry in LABELLED}) == len(LABELLED)


def test_at_least_200_real_recent_strings_from_the_labelled_sets() -> None:
    copied = [e for e in LABELLED if e["source"].startswith(PACKAGES) and "pre-2024" not in e["name"]]
    assert len(copied) >= 200
    assert {e["platform"] for e in copied} == {"android", "ios", "desktop", "unknown"}


@pytest.mark.parametrize(
    "kind",
    ["Instagram", "Facebook", "TikTok", "LinkedIn", "Snapchat", "Google", "WhatsApp", "Telegram",
     "iPadOS, desktop mode", "Android TV", "HarmonyOS", "CFNetwork", "Silk", "Samsung Internet"],
)
def test_the_table_covers(kind: str) -> None:
    assert any(kind.lower() in entry["name"].lower() for entry in LABELLED)


@pytest.mark.parametrize("entry", LABELLED, ids=[entry["name"] for entry in LABELLED])
def test_labelled_strings(entry: dict[str, Any]) -> None:
    device = classify(entry["user_agent"])
    assert (device.platform, device.bot) == (entry["platform"], entry["bot"])
    if "chromium" in entry:
        assert device.chromium == entry["chromium"]
    if "in_app" in entry:
        assert device.in_app == entry["in_app"]
    assert classify_uncached(entry["user_agent"]) == device
