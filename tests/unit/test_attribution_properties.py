"""Properties of an event's attribution (the specification's Behavior events, attribution rules 1 to 3):
per field, the top level over ``attribution`` over legacy ``properties``; empty values never erase; nothing
is made up."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from linksvc.loyalty.attribution import FIELDS, resolve

FAST = settings(max_examples=80, deadline=None)

# What "empty" looks like on the wire: absent, null, "" and blanks.
EMPTY = st.sampled_from([None, "", " ", "\t", " \n "])
TEXT = st.text(min_size=1, max_size=12).filter(lambda s: s.strip() != "")
OTHER_VALUES = st.one_of(st.none(), st.integers(), st.text(max_size=8), st.booleans())


LEVELS = ("top", "attribution", "properties")
OTHERS = st.dictionaries(st.sampled_from(["revenue", "cost", "currency", "type", "customer_id", "coupon"]),
                         OTHER_VALUES, max_size=3)


@st.composite
def sources(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any] | None]:
    """(top level, ``attribution``, ``properties``): each field, at each level, given (a value naming its level),
    sent empty, or absent, independently, so that every combination of levels turns up."""
    top, nested, legacy = draw(OTHERS), draw(OTHERS), draw(OTHERS)
    for field in FIELDS:
        for level, place in zip(LEVELS, (top, nested, legacy), strict=True):
            state = draw(st.sampled_from(["given", "empty", "absent"]))
            if state == "given":
                place[field] = f"{level}:{draw(TEXT)}"
            elif state == "empty":
                place[field] = draw(EMPTY)
    # No attribution object, or no properties, at all.
    return (top, None if not nested and draw(st.booleans()) else nested,
            None if not legacy and draw(st.booleans()) else legacy)


def given_text(value: Any) -> bool:
    return isinstance(value, str) and value.strip() != ""


@FAST
@given(sources())
def test_each_field_comes_from_the_highest_source_that_gives_it(
        three: tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any] | None]) -> None:
    top, nested, legacy = three
    resolved = resolve(top, nested, legacy)
    for field in FIELDS:
        if given_text(top.get(field)):
            assert resolved[field] == top[field]
        elif given_text((nested or {}).get(field)):
            assert resolved[field] == (nested or {})[field]
        elif given_text((legacy or {}).get(field)):
            assert resolved[field] == (legacy or {})[field]
        else:
            assert field not in resolved  # a tracking id alone fills nothing; nothing is looked up


@FAST
@given(sources(), st.sampled_from(FIELDS), st.sampled_from(["top", "attribution"]), EMPTY)
def test_an_empty_value_above_never_erases_a_value_below(
        three: tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any] | None], field: str, where: str,
        empty: Any) -> None:
    top, nested, legacy = three
    # Without the field at that level, then with it sent empty there: the same outcome.
    if where == "top":
        top = {k: v for k, v in top.items() if k != field}
        pair = resolve(top, nested, legacy), resolve({**top, field: empty}, nested, legacy)
    else:
        nested = {k: v for k, v in (nested or {}).items() if k != field}
        pair = resolve(top, nested, legacy), resolve(top, {**nested, field: empty}, legacy)
    assert pair[0] == pair[1]


@FAST
@given(sources())
def test_only_the_six_fields_and_the_attribution_objects_own_members_come_out(
        three: tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any] | None]) -> None:
    top, nested, legacy = three
    resolved = resolve(top, nested, legacy)
    for key, value in resolved.items():
        if key not in FIELDS:
            # Revenue, cost, currency and any other member of `attribution` as sent; never something of the
            # event's top level or of its free-form properties.
            assert nested is not None and key in nested and nested[key] == value and value is not None
    for key, value in (nested or {}).items():
        if key not in FIELDS and value is not None:
            assert resolved[key] == value


@FAST
@given(sources())
def test_the_sources_are_left_as_they_were(
        three: tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any] | None]) -> None:
    top, nested, legacy = three
    copies = copy.deepcopy((top, nested, legacy))
    resolve(top, nested, legacy)
    assert (top, nested, legacy) == copies  # the original nested object is stored untouched beside the result
