"""fixtures/demo.json: the demo seed that ``linksvc serve`` loads into an empty database.

Everything is checked through the admin API (what a user of the demo sees): the demo account covers every
campaign type, computed status and restriction case, customers hold wallets, links of every kind exist,
the sandbox account is kept apart, and loading the file a second time changes nothing.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import DB
from linksvc.app import create_app
from linksvc.clock import iso, utcnow
from linksvc.demo.endpoints import DEMO_PATH, SELF_HOST
from linksvc.jsoncodec import loads
from linksvc.resources.models import CAMPAIGN_TYPES, CONDITION_TYPES, LINK_KINDS
from linksvc.seed import load_seed, load_seed_file
from linksvc.settings import Settings
from tests.conftest import ADMIN, bearer, service_server

DEMO_FILE = Path(__file__).resolve().parents[2] / "fixtures" / "demo.json"
DEMO = "3f6c1a52-8d4e-4b7a-9c21-5e0f7a9b1d01"
SANDBOX = "7a2e9c41-3b5d-4f6a-8e1c-2d4b6f8a0c02"
DEMO_KEYS = {
    "SERVER": "lk_demo_server_4f8a2c9e7b1d3a5f6c8e0b2d",
    "CLIENT": "lk_demo_client_9b3e5d7f1a2c4e6b8d0f3a5c",
}
SANDBOX_SERVER_KEY = "lk_sandbox_server_2c4e6a8b0d1f3e5a7c9b"
SEGMENTS = (
    "brands", "tiers", "rewards", "campaigns", "contacts", "customers", "custom-event-types", "connections", "links",
)
STATUSES = {"RUNNING", "PAUSED", "SCHEDULED", "FINISHED"}


def _file() -> dict[str, Any]:
    return loads(DEMO_FILE.read_bytes())


def _account_doc(account_id: str) -> dict[str, Any]:
    return next(a for a in _file()["accounts"] if a["id"] == account_id)


async def _get(client: TestClient, path: str) -> Any:
    response = await client.get(f"/api/admin/v1{path}", headers=ADMIN)
    assert response.status == 200, await response.text()
    return await response.json()


async def _list(client: TestClient, account_id: str, segment: str) -> list[dict[str, Any]]:
    body = await _get(client, f"/accounts/{account_id}/{segment}?limit=500")
    assert body["count"] == len(body["data"]), f"{segment}: more than one page"
    return list(body["data"])


async def _snapshot(client: TestClient) -> dict[str, Any]:
    """Every admin listing of both accounts, exactly as served (timestamps included)."""
    shot: dict[str, Any] = {"accounts": await _get(client, "/accounts?limit=500")}
    for account_id in (DEMO, SANDBOX):
        shot[f"{account_id}/api-keys"] = await _get(client, f"/accounts/{account_id}/api-keys")
        for segment in SEGMENTS:
            shot[f"{account_id}/{segment}"] = await _get(client, f"/accounts/{account_id}/{segment}?limit=500")
    return shot


@pytest.fixture
async def demo(client: TestClient) -> TestClient:
    # Without private destinations: the demo must load on a default `linksvc serve`, which refuses them.
    counts = await load_seed_file(client.app[DB], DEMO_FILE, allow_private=False)
    assert all(n > 0 for n in counts.values()), counts
    return client


def _by_name(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {item["name"]: item for item in items}


# --- accounts and keys ---------------------------------------------------------------------------------

async def test_accounts_and_keys(demo: TestClient) -> None:
    accounts = {a["id"]: a for a in (await _get(demo, "/accounts?limit=500"))["data"]}
    assert set(accounts) == {DEMO, SANDBOX}
    assert (accounts[DEMO]["name"], accounts[DEMO]["environment"]) == ("Demo Coffee Co.", "production")
    assert (accounts[SANDBOX]["name"], accounts[SANDBOX]["environment"]) == ("Sandbox Bakery", "sandbox")
    keys = (await _get(demo, f"/accounts/{DEMO}/api-keys"))["data"]
    assert sorted(k["kind"] for k in keys) == ["CLIENT", "SERVER"]
    sandbox_keys = (await _get(demo, f"/accounts/{SANDBOX}/api-keys"))["data"]
    assert [k["kind"] for k in sandbox_keys] == ["SERVER"]


async def test_demo_keys_work_and_each_sees_only_its_own_brands(demo: TestClient) -> None:
    """The keys printed in the README reach the storefront API; the two accounts stay apart."""
    brands_of: dict[str, set[str]] = {}
    for label, key in (*DEMO_KEYS.items(), ("SANDBOX", SANDBOX_SERVER_KEY)):
        response = await demo.get("/api/storefront/v1/auth/authorize", headers={"x-api-key": key})
        assert response.status == 200, await response.text()
        token = (await response.json())["data"]
        response = await demo.get("/api/storefront/v1/brands", headers=bearer(token))
        assert response.status == 200, await response.text()
        brands_of[label] = {b["name"] for b in (await response.json())["data"]}
    assert brands_of["SERVER"] == brands_of["CLIENT"] == {"Demo Coffee", "Bean & Leaf Tea Bar"}
    assert brands_of["SANDBOX"] == {"Sandbox Bakery"}


# --- catalog -------------------------------------------------------------------------------------------

async def test_brands_tiers_rewards(demo: TestClient) -> None:
    assert len(await _list(demo, DEMO, "brands")) == 2
    tiers = await _list(demo, DEMO, "tiers")
    assert [t["level"] for t in tiers] == [1, 2, 3]
    used = {
        (c["type"], c["operator"])
        for t in tiers for field in ("entry_conditions", "exit_conditions") for group in t[field] for c in group
    }
    assert {kind for kind, _ in used} == set(CONDITION_TYPES)
    assert ("Purchase Count", "greater than or equal") in used
    assert all(t["exit_conditions"] for t in tiers if t["level"] > 1)
    rewards = await _list(demo, DEMO, "rewards")
    types = {r["type"] for r in rewards}
    assert {"POINTS", "CASHBACK", "FREE_PRODUCT"} <= types
    assert any(r["type"] == "POINTS" and r["attributes"]["conversion_factor"] == 0.01 for r in rewards)
    assert all(r["account_id"] == DEMO and r["labels"] and r["description"] for r in rewards)


# --- campaigns -----------------------------------------------------------------------------------------

async def test_campaigns_cover_types_statuses_and_options(demo: TestClient) -> None:
    campaigns = await _list(demo, DEMO, "campaigns")
    assert len(campaigns) >= 12
    assert {c["type"] for c in campaigns} == set(CAMPAIGN_TYPES)
    assert {c["status"] for c in campaigns} == STATUSES
    by_status: dict[str, list[dict[str, Any]]] = {}
    for c in campaigns:
        by_status.setdefault(c["status"], []).append(c)
    assert any(c["paused"] for c in by_status["PAUSED"])
    assert all(c["starts_at"] > "2099" for c in by_status["SCHEDULED"])
    finished = by_status["FINISHED"]
    assert any(c["finished_at"] is not None for c in finished), "a campaign ended by hand"
    assert any(c["finished_at"] is None and c["ends_at"] < "2025" for c in finished), "a campaign past its end"
    # Statuses stay true for decades: nothing running or scheduled ends before 2099.
    assert all(c["ends_at"] is None or c["ends_at"] >= "2099" for c in campaigns if c["status"] != "FINISHED")

    assert all(c["labels"] and c["platforms"] and c["funded_by"] and c["brand_id"] for c in campaigns)
    assert {"ios", "android", "web"} <= {p for c in campaigns for p in c["platforms"]}
    assert len({c["funded_by"] for c in campaigns}) >= 2
    assert any(c["tier_ids"] is None for c in campaigns)
    assert any(c["tier_ids"] for c in campaigns)
    assert any(c["template_id"] for c in campaigns)
    for c in campaigns:
        assert c["content"]["headline"]["type"] == "input" and c["content"]["headline"]["value"]
        banner = c["content"]["banner"]
        assert banner["type"] == "image" and banner["value"].startswith("https://")
        assert banner["alt"] and banner["href"].startswith("https://")


@pytest.mark.parametrize("field", ["stores", "channels", "products"])
async def test_every_restriction_case(demo: TestClient, field: str) -> None:
    values = [c[field] for c in await _list(demo, DEMO, "campaigns")]
    assert None in values, f"{field}: no campaign without restriction (null)"
    assert [] in values, f"{field}: no campaign with the explicit empty restriction ([])"
    assert any(v for v in values), f"{field}: no campaign restricted to a non-empty list"


async def test_coupon_codes_in_every_status(demo: TestClient) -> None:
    coupons = [c for c in await _list(demo, DEMO, "campaigns") if c["type"] == "COUPONS"]
    assert coupons
    assert any({code["status"] for code in c["codes"]} == {"AVAILABLE", "RESERVED", "REDEEMED"} for c in coupons)
    assert all(not c.get("codes") for c in await _list(demo, DEMO, "campaigns") if c["type"] != "COUPONS")


async def test_behavior_campaigns_earn_on_purchase_and_a_custom_event(demo: TestClient) -> None:
    campaigns = await _list(demo, DEMO, "campaigns")
    rewards = {r["id"] for r in await _list(demo, DEMO, "rewards")}
    events = await _list(demo, DEMO, "custom-event-types")
    active = {e["name"] for e in events if e["active"]}
    assert {"app_open", "store_visit"} <= active and any(not e["active"] for e in events)
    behavior = [c for c in campaigns if c["type"] == "BEHAVIOR"]
    earned_on = {c["attributes"]["event_type"] for c in behavior}
    assert "PURCHASE" in earned_on and earned_on & active
    for c in behavior:
        attributes = c["attributes"]
        assert attributes["reward_id"] in rewards
        assert attributes["amount"] > 0 or attributes["per_currency_unit"] > 0
        assert attributes["expires_in_days"] >= 1
        assert attributes["conditions"] and all(
            cond["primitive"] == "number" and cond["type"] in CONDITION_TYPES
            for group in attributes["conditions"] for cond in group
        )


# --- people --------------------------------------------------------------------------------------------

async def test_contacts(demo: TestClient) -> None:
    contacts = await _list(demo, DEMO, "contacts")
    assert len(contacts) >= 5
    assert sum(c["deleted_at"] is not None for c in contacts) == 1
    assert {"MALE", "FEMALE"} <= {c["gender"] for c in contacts}
    full = [c for c in contacts if c["addresses"] and c["billing_info"] and c["payments"]]
    assert full and full[0]["dob"] and full[0]["document_type"] and full[0]["external_id"]


async def test_customers_hold_wallets(demo: TestClient) -> None:
    customers = await _list(demo, DEMO, "customers")
    assert len(customers) >= 5
    assert all(c["wallet"]["lines"] and c["wallet"]["totals"] for c in customers)
    for field in ("document_number", "external_id"):
        values = [c[field] for c in customers]
        assert None not in values and len(set(values)) == len(values), field
    assert {"+57 300 123 4567", "573001112233", "+52-55-1234-5678"} <= {c["phone"] for c in customers}
    assert any(c["tier_id"] is None for c in customers) and any(c["tier_id"] for c in customers)
    assert any(c["consent"]["purposes"]["coupon_campaigns"] is False for c in customers)
    assert any(c["consent"]["vendors"].get("meta") is False for c in customers)

    # Lines that expired are in the file but not in the wallet.
    in_file = {c["id"]: c["wallet"]["lines"] for c in _account_doc(DEMO)["customers"]}
    expired = 0
    for customer in customers:
        lines = in_file[customer["id"]]
        live = [line for line in lines if line.get("expiration_date", "9999") > iso(utcnow())]
        expired += len(lines) - len(live)
        assert len(customer["wallet"]["lines"]) == len(live)
    assert expired >= 1


# --- connections and links -----------------------------------------------------------------------------

async def test_connections_deliver_only_to_the_service_itself(demo: TestClient) -> None:
    """Every demo connection is on and names the placeholder the dispatcher replaces with the service's own
    address (a .invalid name never resolves, so nothing can leave the machine), under /demo/."""
    connections = await _list(demo, DEMO, "connections")
    assert {"webhook", "ga4", "meta"} <= {c["destination"] for c in connections}
    assert all(c["enabled"] for c in connections)
    assert all(c["config"]["endpoint_url"].startswith(f"http://{SELF_HOST}{DEMO_PATH}") for c in connections)
    webhook = next(c for c in connections if c["destination"] == "webhook")
    assert webhook["config"]["secret"] == "********"
    secret = next(c for c in _account_doc(DEMO)["connections"] if c["destination"] == "webhook")["config"]["secret"]
    assert secret.startswith("whsec_")


async def test_links_of_every_kind(demo: TestClient) -> None:
    links = await _list(demo, DEMO, "links")
    assert {link["kind"] for link in links} == set(LINK_KINDS)
    assert all(link["destination_url"].startswith("https://") and "?" in link["destination_url"] for link in links)
    assert any("utm_source=" in link["destination_url"] for link in links)
    assert any("#" in link["destination_url"] and "utm_source=" not in link["destination_url"] for link in links)
    assert sum(link["disabled"] for link in links) == 1
    assert sum(link["expires_at"] is not None and link["expires_at"] < "2025" for link in links) == 1
    assert any(link["deeplink"] and link["deeplink"].startswith("democoffee://") for link in links)
    assert any(link["android"] and link["ios"] for link in links)
    assert any(link["kind"] == "email" and link["template_id"] and not link["campaign_id"] for link in links)
    campaigns = {c["id"] for c in await _list(demo, DEMO, "campaigns")}
    assert all(link["campaign_id"] in campaigns for link in links if link["campaign_id"])


# --- the sandbox account -------------------------------------------------------------------------------

async def test_sandbox_account_is_small_and_separate(demo: TestClient) -> None:
    demo_ids: set[str] = set()
    demo_codes: set[str] = set()
    for segment in ("brands", "tiers", "campaigns", "customers", "links"):
        mine = await _list(demo, SANDBOX, segment)
        assert mine, f"sandbox has no {segment}"
        theirs = await _list(demo, DEMO, segment)
        demo_ids |= {item["id"] for item in theirs}
        assert not {item["id"] for item in mine} & demo_ids
        if segment == "links":
            demo_codes = {link["code"] for link in theirs}
            assert not {link["code"] for link in mine} & demo_codes
        if segment == "customers":
            assert all(c["wallet"]["lines"] for c in mine)
    one_of_demo = _account_doc(DEMO)["campaigns"][0]["id"]
    response = await demo.get(f"/api/admin/v1/accounts/{SANDBOX}/campaigns/{one_of_demo}", headers=ADMIN)
    assert response.status == 404


# --- loading twice -------------------------------------------------------------------------------------

async def test_loading_again_changes_nothing(demo: TestClient) -> None:
    before = await _snapshot(demo)
    again = await load_seed_file(demo.app[DB], DEMO_FILE, allow_private=False)
    assert again and set(again.values()) == {0}, again
    third = await load_seed(demo.app[DB], _file(), allow_private=True)
    assert set(third.values()) == {0}, third
    assert await _snapshot(demo) == before


async def test_serve_loads_the_demo_into_an_empty_database(aiohttp_client: Any, settings: Settings) -> None:
    client = await aiohttp_client(service_server(create_app(replace(settings, load_demo=True))))
    accounts = (await _get(client, "/accounts"))["data"]
    assert {a["id"] for a in accounts} == {DEMO, SANDBOX}
