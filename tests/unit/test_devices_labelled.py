"""Table-driven platforms of real 2024-26 strings (fixtures/user_agents_labelled.json, each with its source)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from linksvc.resolver.devices import classify

LABELLED: list[dict[str, Any]] = json.loads(
    (Path(__file__).resolve().parents[2] / "fixtures" / "user_agents_labelled.json").read_text(encoding="utf-8")
)


def test_every_entry_names_its_source() -> None:
    for entry in LABELLED:
        assert set(entry) == {"name", "user_agent", "platform", "bot", "source"} and entry["source"]


@pytest.mark.parametrize("entry", LABELLED, ids=[entry["name"] for entry in LABELLED])
def test_platform_of_labelled_strings(entry: dict[str, Any]) -> None:
    device = classify(entry["user_agent"])
    assert (device.platform, device.bot) == (entry["platform"], entry["bot"])
