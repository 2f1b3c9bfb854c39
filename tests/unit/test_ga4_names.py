"""GA4's naming rule and parameter limits: a table of names and a property over any text."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from linksvc.forwarding.ga4_names import (
    MAX_PARAMS,
    NAME_RULE,
    RESERVED_EVENTS,
    RESERVED_PARAMS,
    fit_params,
    ga4_name,
    is_reserved,
)


@pytest.mark.parametrize(("given_name", "expected"), [
    ("purchase", "purchase"),
    ("refund", "refund"),
    ("ADD_TO_CART", "ADD_TO_CART"),
    ("a", "a"),
    ("a__b", "a__b"),  # a valid name is never touched
    ("x" * 40, "x" * 40),
    ("Purchase Complete!", "Purchase_Complete_"),
    ("my.event-name", "my_event_name"),
    ("a - b", "a_b"),  # one _ for a run of other characters
    ("1st_visit", "ls_1st_visit"),
    ("_private", "ls__private"),
    ("x" * 41, "x" * 40),
    ("event_" + "y" * 60, ("event_" + "y" * 60)[:40]),
    ("session_start", "ls_session_start"),
    ("Session_Start", "ls_Session_Start"),  # reserved whatever the case
    ("ad_click", "ls_ad_click"),
    ("app_remove", "ls_app_remove"),
    ("first_open", "ls_first_open"),
    ("user_engagement", "ls_user_engagement"),
    ("google_signup", "ls_google_signup"),
    ("ga_thing", "ls_ga_thing"),
    ("firebase_x", "ls_firebase_x"),
    ("Google_Thing", "ls_Google_Thing"),
    ("gtag.config", "gtag_config"),  # the dot is replaced, so the reserved prefix "gtag." is gone
    ("Café Olé", "Cafe_Ole"),  # accents dropped
    ("日本のイベント", "ls__"),
    ("über", "uber"),
    ("", "unnamed"),
    ("!!!", "ls__"),
    ("9" * 45, "ls_" + "9" * 37),
])
def test_names(given_name: str, expected: str) -> None:
    assert ga4_name(given_name) == expected
    assert NAME_RULE.fullmatch(expected)


def test_parameter_names_have_their_own_reserved_list() -> None:
    assert ga4_name("gclid", RESERVED_PARAMS) == "ls_gclid"
    assert ga4_name("gclid") == "gclid"  # an event may be called that
    assert ga4_name("session_start", RESERVED_PARAMS) == "session_start"


@given(st.text(max_size=120))
def test_any_text_maps_to_a_valid_unreserved_name(text: str) -> None:
    for reserved in (RESERVED_EVENTS, RESERVED_PARAMS):
        name = ga4_name(text, reserved)
        assert NAME_RULE.fullmatch(name), name
        assert not is_reserved(name, reserved), name
        assert ga4_name(name, reserved) == name  # mapping twice changes nothing


def test_parameters_beyond_25_are_dropped_in_order() -> None:
    params = {f"p{i:02d}": i for i in range(30)}
    fitted, dropped = fit_params(params)
    assert len(fitted) == MAX_PARAMS
    assert list(fitted) == [f"p{i:02d}" for i in range(25)]
    assert dropped == [f"p{i:02d}" for i in range(25, 30)]


def test_the_service_own_parameters_come_first_and_stay() -> None:
    own: dict[str, Any] = {"transaction_id": "A-1", "currency": "COP", "value": Decimal("10.5"), "session_id": "17"}
    params = {**own, **{f"extra_{i}": "x" for i in range(40)}}
    fitted, dropped = fit_params(params, own=frozenset({"session_id"}))
    assert list(fitted)[:4] == ["transaction_id", "currency", "value", "session_id"]
    assert fitted["value"] == Decimal("10.5") and len(fitted) == 25 and len(dropped) == 19


@pytest.mark.parametrize(("params", "expected"), [
    ({"name": "n" * 150}, {"name": "n" * 100}),
    ({"value": 12.5, "count": 3, "price": Decimal("1.10")}, {"value": 12.5, "count": 3, "price": Decimal("1.10")}),
    ({"flag": True, "nothing": None, "obj": {"a": 1}}, {}),
    ({"items": [{"item_id": "s" * 120, "price": 2, "odd": None}, "not an item"]},
     {"items": [{"item_id": "s" * 100, "price": 2}]}),
    ({"Bad Name": 1, "session_id": "1", "gclid": "g"}, {"Bad_Name": 1, "ls_session_id": "1", "ls_gclid": "g"}),
    ({"a b": 1, "a-b": 2}, {"a_b": 1}),  # two names mapped to one: the first wins
])
def test_parameter_values_and_names(params: dict[str, Any], expected: dict[str, Any]) -> None:
    assert fit_params(params)[0] == expected
