"""Every real user agent × link kind × UTM case, asserting the exact Location. Expected values are the
rules written out here, independently of the resolver's code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import DB
from linksvc.links.appstores import read_install_referrer
from linksvc.links.urls import query_values
from linksvc.seed import load_seed
from tests.factories import A, ids, two_accounts

AGENTS = json.loads((Path(__file__).parents[2] / "fixtures" / "user_agents.json").read_text())
KINDS = ("email", "push", "whatsapp", "in_app", "news_feed", "external", "campaign")
CAMPAIGN = ids(A)["campaigns"]
DEST = "https://shop.example/p?x=1&utm_content=stored#top"
CASES = {
    "no-utm": ("", {}),
    "incoming-wins": ("?utm_source=ig&utm_content=over", {"utm_source": "ig", "utm_content": "over"}),
    "empty-never-erases": ("?utm_source=&utm_medium=", {}),
}
FIELDS = ("utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content")


def expected_utm(kind: str, incoming: dict[str, str]) -> dict[str, str]:
    defaults = ({"utm_source": "linksvc", "utm_medium": kind, "utm_campaign": CAMPAIGN}
                if kind in ("email", "push", "whatsapp") else {})
    merged = {**defaults, "utm_content": "stored", **incoming}
    return {f: merged[f] for f in FIELDS if f in merged}


def device_class(agent: dict[str, Any]) -> str:
    if agent["bot"] or agent["platform"] in ("desktop", "unknown"):
        return "destination"
    if agent["platform"] == "ios":
        return "app_store"
    return "intent" if agent["chromium"] and not agent["in_app"] else "play"


@pytest.fixture(scope="module")
def seed_doc() -> dict[str, Any]:
    doc = two_accounts()
    doc["accounts"][0]["links"] += [
        {"id": f"aaaaaaaa-0010-4000-8000-{i:012d}", "code": f"k-{kind.replace('_', '-')}", "kind": kind,
         "campaign_id": CAMPAIGN, "destination_url": DEST, "deeplink": "democoffee://p",
         "android": {"package": "com.democoffee.app"}, "ios": {"app_store_id": "123"}}
        for i, kind in enumerate(KINDS)
    ]
    return doc


@pytest.fixture
async def matrix(client: TestClient, seed_doc: dict[str, Any]) -> TestClient:
    await load_seed(client.app[DB], seed_doc, allow_private=True)
    return client


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("kind", KINDS)
async def test_matrix(matrix: TestClient, kind: str, case: str) -> None:
    query, incoming = CASES[case]
    utm = expected_utm(kind, incoming)
    in_place = f"utm_content={utm['utm_content']}"
    appended = "".join(f"&{f}={utm[f]}" for f in FIELDS if f in utm and f != "utm_content")
    for agent in AGENTS:
        response = await matrix.get(f"/k-{kind.replace('_', '-')}{query}", allow_redirects=False,
                                    headers={"User-Agent": agent["user_agent"]})
        assert response.status == 302, agent["name"]
        assert response.headers["Cache-Control"] == "no-store"
        location = response.headers["Location"]
        tid = query_values(location).get("tracking_id") or read_install_referrer(location).get("tracking_id")
        assert tid and len(tid) == 32, (agent["name"], location)
        all_utm = "&".join(f"{f}={utm[f]}" for f in FIELDS if f in utm)
        expected = {
            "destination": f"https://shop.example/p?x=1&{in_place}{appended}&tracking_id={tid}#top",
            "app_store": f"https://apps.apple.com/app/id123?{all_utm}&tracking_id={tid}",
        }
        klass = device_class(agent)
        if klass in expected:
            assert location == expected[klass], agent["name"]
            continue
        play_fields = {**utm, "tracking_id": tid, "link": "http://127.0.0.1:8080/k-" + kind.replace("_", "-")}
        if klass == "play":
            assert location.startswith("https://play.google.com/store/apps/details?id=com.democoffee.app&referrer=")
            assert read_install_referrer(location) == play_fields, agent["name"]
            continue
        data, _, intent = location.rpartition("#Intent;")
        assert data == f"intent://p?{all_utm}&tracking_id={tid}", agent["name"]
        extras = dict(part.split("=", 1) for part in intent.removesuffix(";end").split(";"))
        assert (extras["scheme"], extras["package"]) == ("democoffee", "com.democoffee.app")
        assert read_install_referrer(unquote(extras["S.browser_fallback_url"])) == play_fields
