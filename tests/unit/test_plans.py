"""The lane's plans (linksvc.links.plans): a plain link's answer kept per kind of device and host is, for every
tracking id, exactly the answer decide() gives; links that are not plain, and answers that are not a plain 302,
are never kept for the lane; a changed link gets a new plan."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linksvc.links.decide import decide
from linksvc.links.devices import classify
from linksvc.links.plans import KINDS, DecisionPlans, device_key, is_plain
from linksvc.links.service import HeldLink
from tests.unit.test_decide_properties import DEVICES, LINKS, Device

SHORT = "https://l.example/AbC1234"
AGENTS = [entry["user_agent"] for entry in json.loads(
    (Path(__file__).parents[2] / "fixtures" / "user_agents.json").read_text())]
TRACKING = st.text("0123456789abcdef", min_size=32, max_size=32)


def _held(link: dict[str, Any], code: str = "AbC1234") -> HeldLink:
    return HeldLink(str(link.get("id", "l-1")), "a-1", orjson.dumps(link), None)


def _kept(plans: DecisionPlans, link: dict[str, Any], device: Any, domain: str | None = None,
          label: str = "linksvc") -> Any:
    plan, body = plans.plan("AbC1234", _held(link))
    return plans.answer(plan, body, device, domain, SHORT, label)


@settings(max_examples=300, deadline=None)
@given(LINKS, st.lists(DEVICES, min_size=1, max_size=6), TRACKING, TRACKING, st.sampled_from(["linksvc", "Bench"]))
def test_a_kept_answer_is_decides_answer_for_every_tracking_id(link: dict[str, Any], devices: list[Device], first: str,
                                                                 second: str, label: str) -> None:
    plans = DecisionPlans()
    held = _held(link)
    plan, _ = plans.plan("AbC1234", held)
    assert plan.plain
    for device in devices:  # one plan, several kinds of device
        _same_as_decide(plans, held, link, device, first, second, label)


def _same_as_decide(plans: DecisionPlans, held: HeldLink, link: dict[str, Any], device: Device, first: str,
                    second: str, label: str) -> None:
    plan, body = plans.plan("AbC1234", held)
    expected = decide(link, device, {}, False, SHORT, first, label)
    answer = plans.answer(plan, body, device, None, SHORT, label)
    if expected.status != 302 or expected.location is None or expected.skipped:
        assert answer is None
        return
    assert answer is not None
    assert answer.decision(first) == expected
    again, decoded = plans.plan("AbC1234", held)  # the same held link: the same plan, nothing decoded
    assert again is plan and decoded is None
    assert plans.answer(again, None, device, None, SHORT, label) is answer
    assert answer.decision(second) == decide(link, device, {}, False, SHORT, second, label)


SHARED = DecisionPlans()


@pytest.mark.parametrize("agent", AGENTS * 2)
def test_every_known_user_agent_gets_decides_answer_on_its_second_click(agent: str) -> None:
    link = {"id": "l-2", "kind": "email", "campaign_id": "c-1", "destination_url": "https://shop.example/p?utm_source=x",
            "deeplink": "democoffee://menu?x=1", "android": {"package": "com.demo.app", "fallback_url": None},
            "ios": {"app_store_id": "1234567890", "fallback_url": None}, "fallback_url": None}
    device = classify(agent)
    plans = SHARED  # one plan for every user agent: an answer kept for one kind of device never reaches another
    for _ in range(2):
        tracking_id = secrets.token_hex(16)
        answer = _kept(plans, link, device, "go.example")
        expected = decide(link, device, {}, False, SHORT, tracking_id, "linksvc")
        assert answer is not None and answer.decision(tracking_id) == expected


def test_answers_are_kept_per_kind_of_device_and_host() -> None:
    link = {"id": "l-3", "kind": "campaign", "destination_url": "https://shop.example/p",
            "android": {"package": "com.demo.app", "fallback_url": None}}
    plans = DecisionPlans()
    plan, body = plans.plan("AbC1234", _held(link))
    chrome = classify("Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) "
                      "Chrome/124.0.0.0 Mobile Safari/537.36")
    desktop = classify("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
                       "Chrome/124.0.0.0 Safari/537.36")
    intent = plans.answer(plan, body, chrome, None, SHORT, "linksvc")
    web = plans.answer(plan, None, desktop, None, SHORT, "linksvc")
    elsewhere = plans.answer(plan, None, chrome, "go.example", "https://go.example/AbC1234", "linksvc")
    assert intent is not None and intent.answer == "intent" and web is not None and web.answer == "destination"
    assert elsewhere is not None and elsewhere is not intent
    assert "go.example" in str(elsewhere.decision("t").location)  # Play's referrer names the address clicked
    assert "go.example" not in str(intent.decision("t").location)
    assert set(plan.answers) == {(device_key(chrome), None), (device_key(desktop), None),
                                 (device_key(chrome), "go.example")}


@pytest.mark.parametrize(("field", "value"), [
    ("password", "s3cret"), ("disabled", True), ("valid_since", "2030-01-01T00:00:00Z"),
    ("expires_at", "2030-01-01T00:00:00Z"), ("max_clicks", 0), ("max_clicks", 10),
    ("variants", [{"name": "a", "weight": 50}, {"name": "b", "weight": 50}]),
])
def test_a_link_with_a_password_dates_a_limit_or_a_split_is_not_plain(field: str, value: Any) -> None:
    link = {"id": "l-4", "kind": "campaign", "destination_url": "https://shop.example/p"}
    assert is_plain(link)
    assert is_plain({**link, field: None})
    assert not is_plain({**link, field: value})
    plan, _ = DecisionPlans().plan("AbC1234", _held({**link, field: value}))
    assert not plan.plain


def test_a_changed_link_gets_a_new_plan_and_the_oldest_plans_go_first() -> None:
    plans = DecisionPlans(max_answers=2)
    link = {"id": "l-5", "kind": "campaign", "destination_url": "https://shop.example/old"}
    desktop = classify("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
                       "Chrome/124.0 Safari/537.36")
    plan, body = plans.plan("AbC1234", _held(link))
    assert plans.answer(plan, body, desktop, None, SHORT, "x").decision("t").location.startswith(  # type: ignore[union-attr]
        "https://shop.example/old")
    changed = _held({**link, "destination_url": "https://shop.example/new"})
    new, decoded = plans.plan("AbC1234", changed)
    assert new is not plan and decoded is not None and not new.answers and len(plans) == 0
    assert plans.answer(new, decoded, desktop, None, SHORT, "x").decision("t").location.startswith(  # type: ignore[union-attr]
        "https://shop.example/new")
    helds = {code: _held(link) for code in ("second", "third")}
    for code, held in helds.items():
        other, body = plans.plan(code, held)
        plans.answer(other, body, desktop, None, SHORT, "x")
    assert len(plans) == 2  # at most two answers: the first link's plan went
    assert plans.plan("third", helds["third"])[0].answers  # the newest kept its answer
    assert plans.plan("AbC1234", changed)[1] is not None  # planned again


def test_each_field_decide_reads_of_a_device_keeps_its_own_answer() -> None:
    link = {"id": "l-6", "kind": "push", "destination_url": "https://shop.example/p?utm_source=x",
            "android": {"package": "com.demo.app", "fallback_url": None},
            "ios": {"app_store_id": "1234567890", "fallback_url": "https://ios.example/get"}}
    plans = DecisionPlans()
    held = _held(link)
    devices = [Device(platform, chromium, bot, in_app) for platform in ("android", "ios", "desktop", "unknown")
               for chromium in (True, False) for bot in (False, True) for in_app in (None, "facebook")]
    for _ in range(2):  # the second round reads every answer kept by the first
        for device in devices:
            _same_as_decide(plans, held, link, device, secrets.token_hex(16), secrets.token_hex(16), "linksvc")


@settings(max_examples=300, deadline=None)
@given(LINKS, st.lists(DEVICES, min_size=1, max_size=8), TRACKING, st.sampled_from(["linksvc", "Bench"]))
def test_answers_worked_out_ahead_are_decides_for_every_device(link: dict[str, Any], devices: list[Device],
                                                               tracking_id: str, label: str) -> None:
    plans = DecisionPlans()
    held = _held(link)
    assert plans.warm("AbC1234", held, SHORT, label) == len(KINDS)
    assert len(plans) == len(KINDS)
    plan, decoded = plans.plan("AbC1234", held)
    assert decoded is None and len(plan.answers) == len(KINDS)
    for device in devices:  # every device's answer is kept already, and is decide's
        expected = decide(link, device, {}, False, SHORT, tracking_id, label)
        kept = plan.answers[(device_key(device), None)]
        if expected.status != 302 or expected.location is None or expected.skipped:
            assert kept is None
        else:
            assert kept is not None and kept.decision(tracking_id) == expected
        assert plans.answer(plan, None, device, None, SHORT, label) is kept
    assert len(plans) == len(KINDS)  # nothing worked out again


def test_a_link_without_apps_keeps_one_answer_for_every_kind_and_equal_utm_is_shared() -> None:
    plans = DecisionPlans()
    web = {"id": "l-7", "kind": "email", "campaign_id": "c-1", "destination_url": "https://shop.example/a"}
    apps = {**web, "id": "l-8", "destination_url": "https://shop.example/b",
            "android": {"package": "com.demo.app", "fallback_url": None}, "ios": {"app_store_id": "1234567890"}}
    helds = {"web": _held(web), "apps": _held(apps)}
    for code, held in helds.items():
        plans.warm(code, held, SHORT, "linksvc")
    kept = {code: list(plans.plan(code, held)[0].answers.values()) for code, held in helds.items()}
    assert len({id(answer) for answer in kept["web"]}) == 1
    assert len({id(answer) for answer in kept["apps"]}) == 4  # intent, the Play fallback, App Store, the web
    assert kept["web"][0] is not None and kept["apps"][0] is not None
    assert kept["web"][0].utm is next(a for a in kept["apps"] if a is not None and a.answer == "destination").utm


@pytest.mark.parametrize("field", ["password", "domain", "max_clicks"])
def test_links_that_are_not_plain_or_name_a_domain_are_not_worked_out_ahead(field: str) -> None:
    link = {"id": "l-9", "kind": "campaign", "destination_url": "https://shop.example/p",
            field: {"password": "s3cret", "domain": "go.example", "max_clicks": 5}[field]}
    plans = DecisionPlans()
    assert plans.warm("AbC1234", _held(link), SHORT, "linksvc") == 0 and len(plans) == 0


def test_working_out_ahead_stops_at_the_bound() -> None:
    plans = DecisionPlans(max_answers=2 * len(KINDS) + 1)
    link = {"id": "l-10", "kind": "campaign", "destination_url": "https://shop.example/p"}
    added = [plans.warm(code, _held(link), SHORT, "linksvc") for code in ("a", "b", "c")]
    assert added == [len(KINDS), len(KINDS), 0] and len(plans) == 2 * len(KINDS)
