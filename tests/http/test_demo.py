"""The living demo: the first start on an empty database with ``fixtures/demo.json`` shows a week of clicks,
customers whose purchases moved their wallets and tiers, and deliveries that the service's own receivers
answer: the webhook sink (signatures checked) and Meta's stand-in (an expired access token). Nothing of it
needs private destinations, and none of it exists on a database without demo data."""

from __future__ import annotations

import asyncio
import base64
import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from standardwebhooks.webhooks import Webhook

from api.appkeys import DB
from linksvc.app import create_app
from linksvc.clock import parse_iso
from linksvc.settings import Settings
from storage.db import fetch_one
from tests.conftest import ADMIN, bearer, service_server

DEMO = "3f6c1a52-8d4e-4b7a-9c21-5e0f7a9b1d01"
SERVER_KEY = "lk_demo_server_4f8a2c9e7b1d3a5f6c8e0b2d"
WEBHOOK = "3f6c1a52-0008-4000-8000-000000000001"
GA4 = "3f6c1a52-0008-4000-8000-000000000002"
META = "3f6c1a52-0008-4000-8000-000000000003"
SECRET = "whsec_ZGVtby1jb2ZmZWUtd2ViaG9vay1zZWNyZXQtMDAx"
ANA, SOFIA, JORDAN = ("3f6c1a52-0006-4000-8000-000000000001", "3f6c1a52-0006-4000-8000-000000000003",
                      "3f6c1a52-0006-4000-8000-000000000004")
BRONZE, GOLD = "3f6c1a52-0002-4000-8000-000000000001", "3f6c1a52-0002-4000-8000-000000000003"


@pytest.fixture
async def demo(aiohttp_client: Any, settings: Settings) -> TestClient:
    """The service's first start on an empty database, as ``linksvc serve`` does it: the demo file loaded,
    private destinations not allowed (the default)."""
    first_start = replace(settings, load_demo=True, allow_private_destinations=False)
    return await aiohttp_client(service_server(create_app(first_start)))


async def _admin(client: TestClient, path: str) -> Any:
    response = await client.get(f"/api/admin/v1/accounts/{DEMO}{path}", headers=ADMIN)
    assert response.status == 200, await response.text()
    return (await response.json())["data"]


async def _settled(client: TestClient, connection_id: str, seconds: float = 20) -> list[dict[str, Any]]:
    """The connection's deliveries once none is pending."""
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        found = await _admin(client, f"/connections/{connection_id}/deliveries?limit=500")
        if found and not any(d["state"] == "pending" for d in found):
            return list(found)
        assert asyncio.get_running_loop().time() < deadline, [d["state"] for d in found]
        await asyncio.sleep(0.1)


async def test_a_week_of_clicks_on_several_links(demo: TestClient) -> None:
    links = await _admin(demo, "/links?limit=500")
    totals: dict[str, dict[str, int]] = {}
    platforms: set[str] = set()
    days: set[str] = set()
    sources: set[str | None] = set()
    for link in links:
        stats = await _admin(demo, f"/links/{link['id']}/clicks?days=7")
        totals[link["code"]] = {"human": stats["human"], "bot": stats["bot"]}
        platforms |= {row["platform"] for row in stats["by_platform"]}
        days |= {row["date"] for row in stats["by_day"]}
        sources |= {row["utm_source"] for row in stats["by_utm_source"]}
    clicked = [code for code, n in totals.items() if n["human"]]
    assert len(clicked) >= 6, totals
    assert totals["old-menu"] == {"human": 0, "bot": 0}  # disabled: nobody gets through
    assert totals["summer24"] == {"human": 0, "bot": 0}  # expired
    human, bots = sum(n["human"] for n in totals.values()), sum(n["bot"] for n in totals.values())
    assert 500 <= human + bots <= 2500
    assert 0.03 < bots / (human + bots) < 0.2
    assert {"android", "ios", "desktop", "unknown"} <= platforms
    today = datetime.now(UTC).date()
    # Every whole day of the week has clicks (today's and the first day's are parts of days).
    assert {str(today - timedelta(days=n)) for n in range(1, 7)} <= days and len(days) >= 7
    assert {"instagram", "facebook", "google", "newsletter"} <= sources

    # The whole two weeks are in the past fourteen days, as the clicks of real visitors would be.
    rows = await fetch_one(demo.app[DB].reader, "SELECT min(clicked_at), max(clicked_at) FROM clicks")
    assert rows is not None
    now = datetime.now(UTC)
    assert now - timedelta(days=14, minutes=1) < parse_iso(rows[0]) < parse_iso(rows[1]) <= now


async def test_breakdowns_of_the_busiest_link(demo: TestClient) -> None:
    link = next(item for item in await _admin(demo, "/links/overview?limit=100") if item["code"] == "welcome")
    assert link["clicks_7d"] > 100
    stats = await _admin(demo, f"/links/{link['id']}/clicks?days=7")
    browsers = {row["browser"] for row in stats["by_browser"] if row["human"]}
    assert {"Chrome Mobile", "Mobile Safari", "Samsung Internet"} <= browsers
    assert {row["os"] for row in stats["by_os"] if row["human"]} >= {"Android", "iOS"}
    assert any(row["brand"] == "Samsung" for row in stats["by_device"])
    assert any(row["bot"] and row["browser"] for row in stats["by_browser"])  # bots by name
    assert len(stats["by_utm_source"]) >= 4


async def test_custom_events_of_the_readme_are_active(demo: TestClient) -> None:
    response = await demo.get("/api/storefront/v1/auth/authorize", headers={"x-api-key": SERVER_KEY})
    token = (await response.json())["data"]
    response = await demo.post("/api/storefront/v1/behavior/events/bulk", headers=bearer(token), json={
        "events": [{"type": "store_visit", "customer_id": ANA}, {"type": "nope"}]})
    assert response.status == 200
    body = (await response.json())["data"]
    assert (body["accepted"], body["rejected"]) == (1, 1)


async def test_purchases_moved_wallets_and_tiers(demo: TestClient) -> None:
    customers = {c["id"]: c for c in await _admin(demo, "/customers?limit=500")}
    assert customers[SOFIA]["tier_id"] == GOLD  # a catering order over $250
    assert customers[JORDAN]["tier_id"] == BRONZE  # the first purchase of a customer without a tier
    assert len({c["tier_id"] for c in customers.values()}) == 3
    week_ago = datetime.now(UTC) - timedelta(days=7)
    earned = [line for c in customers.values() for line in c["wallet"]["lines"]
              if parse_iso(line["issued_at"]) > week_ago]  # the opening lines of the file are all older
    assert len(earned) >= 10
    assert all(c["wallet"]["totals"] for c in customers.values())


async def test_the_demos_events_follow_its_clicks(demo: TestClient) -> None:
    """Purchases and custom events carry the tracking_id of a demo click: their lineage names the click, the
    rollups hold attributed events and revenue, and a customer's path shows the clicks."""
    db = demo.app[DB].reader
    attributed = await fetch_one(db, "SELECT count(DISTINCT type) AS types, sum(events) AS n FROM conversion_events "
                                     "WHERE account_id = ? AND link_id != ''", (DEMO,))
    assert attributed is not None and attributed["types"] >= 2 and attributed["n"] >= 5
    revenue = await fetch_one(db, "SELECT sum(purchases) AS n FROM conversion_revenue WHERE account_id = ? "
                                  "AND link_id != ''", (DEMO,))
    assert revenue is not None and revenue["n"] >= 1
    paths = [await _admin(demo, f"/customers/{customer}/path?limit=200") for customer in (ANA, SOFIA, JORDAN)]
    clicked = [step for path in paths for step in path if step["click"] is not None]
    assert clicked and all(step["click"]["link_code"] and step["click"]["clicked_at"] for step in clicked)
    detail = await _admin(demo, f"/events/{clicked[0]['event']['id']}")
    assert detail["lineage"]["click"]["tracking_id"] == detail["attribution"]["tracking_id"]
    assert detail["lineage"]["tracking_id"]["agrees"] is True


async def test_webhook_deliveries_reach_the_sink(demo: TestClient) -> None:
    deliveries = await _settled(demo, WEBHOOK)
    assert {d["state"] for d in deliveries} == {"delivered"}
    assert {"event.accepted", "reward.issued", "tier.changed", "purchase.reversed", "reward.reversed"} <= {
        d["kind"] for d in deliveries}
    assert all(d["last_status"] == 204 for d in deliveries)


async def test_meta_refuses_the_expired_token_in_its_own_words(demo: TestClient) -> None:
    deliveries = await _settled(demo, META)
    failed = [d for d in deliveries if d["state"] == "failed"]
    assert failed and all(d["state"] in ("failed", "filtered", "skipped") for d in deliveries)
    # the demo's second week is older than Meta takes
    assert all("more than 7 days ago" in (d["reason"] or "") for d in deliveries if d["state"] == "skipped")
    error = failed[0]["last_error"]
    assert failed[0]["last_status"] == 400
    assert "(#190) Error validating access token: Session has expired" in error
    assert "subcode 463" in error and "fbtrace_id" in error
    assert any(d["reason"] == "the customer refused meta in consent" for d in deliveries)

    ga4 = await _settled(demo, GA4)
    assert any(d["state"] == "delivered" for d in ga4)


async def test_the_sink_checks_signatures(demo: TestClient) -> None:
    body = json.dumps({"type": "event.accepted", "timestamp": "2026-01-01T00:00:00Z", "data": {}})
    headers = Webhook(SECRET).sign("msg_demo_test", datetime.now(UTC), body)
    signed = {"webhook-id": "msg_demo_test", "webhook-timestamp": str(int(datetime.now(UTC).timestamp())),
              "webhook-signature": headers}
    response = await demo.post("/demo/webhook-sink", data=body, headers=signed)
    assert response.status == 204
    other = Webhook("whsec_" + base64.b64encode(b"another-secret-of-24-bytes!").decode()).sign(
        "msg_demo_test", datetime.now(UTC), body)
    response = await demo.post("/demo/webhook-sink", data=body, headers={**signed, "webhook-signature": other})
    assert response.status == 401
    assert "no signature matches" in (await response.json())["details"]
    assert (await demo.get("/demo/webhook-sink")).status == 405


async def test_no_demo_receivers_without_demo_data(client: TestClient) -> None:
    for path in ("/demo/webhook-sink", "/demo/vendor/meta/v26.0/1/events", "/demo/vendor/ga4/mp/collect"):
        assert (await client.post(path, data=b"{}")).status == 404, path
        assert (await client.get(path)).status == 404, path


async def test_connection_tests_reach_the_stand_ins(demo: TestClient) -> None:
    results = {}
    for name, connection in (("ga4", GA4), ("meta", META), ("webhook", WEBHOOK)):
        response = await demo.post(f"/api/admin/v1/accounts/{DEMO}/connections/{connection}/test", headers=ADMIN)
        assert response.status == 200, await response.text()
        results[name] = (await response.json())["data"]
    assert results["ga4"]["outcome"] == "delivered"  # GA4's validation server: nothing wrong
    assert results["meta"]["outcome"] == "not_sent"  # without a test_event_code Meta would count the test
    # A signed connection.test message: the demo's sink checks its signature and answers 204.
    assert (results["webhook"]["outcome"], results["webhook"]["status"]) == ("delivered", 204)
