"""The events' own depth check gives the answer of the general one (``linksvc.untrusted.nesting_exceeds``)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from linksvc.loyalty.service import _nests_deeper
from linksvc.untrusted import nesting_exceeds

JSON = st.recursive(st.none() | st.integers() | st.text(max_size=3),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3),
                    max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=2), JSON, max_size=4) | st.lists(JSON, max_size=4), st.integers(0, 8))
def test_the_same_answer_as_the_general_check(value: Any, limit: int) -> None:
    assert _nests_deeper(value, limit) == nesting_exceeds(value, limit)


def test_deep_and_shallow_events() -> None:
    deep: dict[str, Any] = {"type": "x"}
    node = deep
    for _ in range(70):
        node["properties"] = {}
        node = node["properties"]
    assert _nests_deeper(deep, 64) and nesting_exceeds(deep, 64)
    assert not _nests_deeper({"type": "x", "properties": {"a": [1, {"b": []}]}}, 64)
    assert _nests_deeper({"a": []}, 1) and not _nests_deeper({"a": 1}, 1)
