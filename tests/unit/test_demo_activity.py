"""The demo's made-up two weeks (linksvc.demo.clicks, linksvc.demo.events): real user agents classified and
routed by the resolver's own rules, the same two weeks for the same seed, nothing outside them, the events a
client would send, and purchases attributed to campaign links in the report's presets whatever the weekday."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from linksvc.demo.clicks import demo_clicks
from linksvc.demo.events import demo_events
from linksvc.jsoncodec import dumpb, loads
from linksvc.links.decide import decide
from linksvc.links.devices import classify
from linksvc.loyalty.service import prepare

ROOT = Path(__file__).resolve().parents[2]
AGENTS = json.loads((ROOT / "fixtures" / "user_agents.json").read_text())
DEMO = json.loads((ROOT / "fixtures" / "demo.json").read_text())["accounts"][0]
NOW = datetime(2026, 11, 23, 15, 30, tzinfo=UTC)


def _clicks(seed: int = 7, now: datetime = NOW) -> list[Any]:
    links = [{**link, "disabled": link.get("disabled", False)} for link in DEMO["links"]]
    return demo_clicks(DEMO["id"], links, AGENTS, now, 300, "https://go.example.com", "linksvc", seed)


def test_the_same_seed_gives_the_same_week_ending_now() -> None:
    first, again = _clicks(), _clicks()
    assert first == again
    a_week_later = _clicks(now=NOW + timedelta(days=7))  # the same weekdays and hours: the same week, moved
    assert [c.clicked_at + 7 * 86400 for c in first] == pytest.approx([c.clicked_at for c in a_week_later])
    assert _clicks(seed=8) != first
    assert all(NOW - timedelta(days=14) < datetime.fromtimestamp(c.clicked_at, UTC) < NOW for c in first)
    assert [c.clicked_at for c in first] == sorted(c.clicked_at for c in first)


def test_clicks_are_what_the_resolver_records() -> None:
    clicks = _clicks()
    assert 2000 <= len(clicks) <= 4000
    by_code = {link["id"]: link for link in DEMO["links"]}
    assert {by_code[c.link_id]["code"] for c in clicks} == {
        link["code"] for link in DEMO["links"] if not link.get("disabled") and link["code"] != "summer24"}
    known = {a["user_agent"] for a in AGENTS}
    for click in clicks[::17]:
        assert click.user_agent in known
        device = classify(click.user_agent)
        assert (click.platform, click.bot) == (device.platform, device.bot)
        query = {"$app-found": "true"} if click.answer == "deeplink" else {}
        decision = decide(by_code[click.link_id], device, {**query, **{"tracking_id": click.tracking_id}},
                          bool(query), "https://go.example.com/x", "unused", "linksvc")
        assert decision.answer == click.answer
        assert len(click.tracking_id) == 32 and int(click.tracking_id, 16) >= 0
    assert len({c.tracking_id for c in clicks}) == len(clicks)


def test_the_mix_of_platforms_bots_and_sources() -> None:
    clicks = _clicks()
    platforms = {p: sum(c.platform == p and not c.bot for c in clicks) for p in ("android", "ios", "desktop")}
    assert platforms["android"] > platforms["ios"] > platforms["desktop"] > 100
    bots = sum(c.bot for c in clicks)
    assert 0.04 < bots / len(clicks) < 0.15
    sources = {c.utm.get("utm_source") for c in clicks}
    assert {"instagram", "facebook", "google", "tiktok", "newsletter", "linksvc"} <= sources
    assert {"https://www.google.com.co/", "https://www.google.com.mx/", "https://l.instagram.com/"} <= {
        c.referer for c in clicks}
    answers = {c.answer for c in clicks}
    assert {"destination", "intent", "fallback", "app_store", "deeplink"} <= answers
    # The morning and the evening of Bogotá are busier than its night.
    local_hours = [(datetime.fromtimestamp(c.clicked_at, UTC) - timedelta(hours=5)).hour for c in clicks]
    assert sum(h in (8, 18, 19) for h in local_hours) > 4 * sum(h in (2, 3, 4) for h in local_hours)


def test_events_are_valid_client_events_of_the_last_thirteen_days() -> None:
    clicks = _clicks()
    customers = DEMO["customers"]
    bronze = "3f6c1a52-0002-4000-8000-000000000001"
    points = {customers[0]["id"]: ("3f6c1a52-0003-4000-8000-000000000001", 1850)}
    plan = demo_events(customers, DEMO["campaigns"], ["app_open", "store_visit"], bronze, points, clicks, NOW, 7)
    assert plan == demo_events(customers, DEMO["campaigns"], ["app_open", "store_visit"], bronze, points, clicks,
                               NOW, 7)
    events = [p.event for p in plan if p.event is not None]
    assert [p.at for p in plan] == sorted(p.at for p in plan)
    assert all(NOW - timedelta(days=13, hours=12) < p.at < NOW for p in plan)
    for planned in plan:
        if planned.event is not None:
            prepare(loads(dumpb(planned.event)), "SERVER", planned.at)  # raises on anything a client could not send
    purchases = [e for e in events if e["type"] == "PURCHASE"]
    assert len(purchases) >= 12 and len({e["order_id"] for e in purchases}) == len(purchases)
    assert {e["type"] for e in events} == {"PURCHASE", "app_open", "store_visit"}
    assert sum(e["value"] > 250 for e in purchases) == 1
    assert sum("redeem" in e for e in purchases) == 1
    assert sum(p.reverse_order is not None for p in plan) == 1
    attributed = [e for e in purchases if "attribution" in e]
    tracking = {c.tracking_id for c in clicks if not c.bot}
    assert attributed and all(e["attribution"]["tracking_id"] in tracking for e in attributed)
    assert any("analytics" in e for e in purchases) and any("analytics" not in e for e in purchases)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_any_seed_keeps_the_week_and_the_events_valid(seed: int) -> None:
    clicks = _clicks(seed=seed)
    plan = demo_events(DEMO["customers"], DEMO["campaigns"], ["app_open"], None, {}, clicks, NOW, seed)
    for planned in plan:
        if planned.event is not None:
            prepare(loads(dumpb(planned.event)), "SERVER", planned.at)


@pytest.mark.parametrize("weekday", range(7))
def test_last_week_and_the_last_seven_days_hold_purchases_of_campaign_links_whatever_the_day(weekday: int) -> None:
    """The README's question, "Last week, group by campaign", has revenue to show on any day of the week."""
    now = NOW + timedelta(days=weekday)
    clicks = _clicks(now=now)
    by_tracking = {c.tracking_id: c for c in clicks}
    campaign_of = {link["id"]: link.get("campaign_id") for link in DEMO["links"]}
    plan = demo_events(DEMO["customers"], DEMO["campaigns"], ["app_open"], None, {}, clicks, now, 7)
    monday = (now - timedelta(days=now.weekday())).date()
    last_week = (monday - timedelta(days=7), monday - timedelta(days=1))
    days: list[Any] = []
    for planned in plan:
        event = planned.event
        if event is None or event["type"] != "PURCHASE" or "attribution" not in event:
            continue
        click = by_tracking[event["attribution"]["tracking_id"]]
        if campaign_of.get(click.link_id):
            days.append(datetime.fromtimestamp(click.clicked_at, UTC).date())
    assert sum(last_week[0] <= day <= last_week[1] for day in days) >= 3
    assert sum(day >= (now - timedelta(days=6)).date() for day in days) >= 3
