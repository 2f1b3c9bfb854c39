"""Header values made safe to log and store, and the depth bound of JSON bodies."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from linksvc.untrusted import nesting_exceeds, safe_text


def as_aiohttp_decodes(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


@pytest.mark.parametrize("raw, limit, expected", [
    (b"Mozilla/5.0 (X11; Linux x86_64)", 1000, "Mozilla/5.0 (X11; Linux x86_64)"),
    (b"Mozilla/5.0 \xff\xfe", 1000, "Mozilla/5.0 \ufffd\ufffd"),
    (b"caf\xc3\xa9", 1000, "caf\u00e9"),
    (b"caf\xc3(", 1000, "caf\ufffd("),
    (b"a\tb", 1000, "a\\x09b"),
    (b"line\r\nX-Forged: 1", 1000, "line\\x0d\\x0aX-Forged: 1"),
    ("x\u0085y".encode(), 1000, "x\\x85y"),
    (b"abcdef", 3, "abc"),
])
def test_safe_text(raw: bytes, limit: int, expected: str) -> None:
    assert safe_text(as_aiohttp_decodes(raw), limit) == expected


def test_lone_surrogates_from_json_escapes_are_replaced() -> None:
    assert safe_text("a\ud800b", 10) == "a\ufffd\ufffd\ufffdb"


@given(st.binary(max_size=300), st.integers(min_value=0, max_value=400))
def test_safe_text_is_always_storable_and_printable(raw: bytes, limit: int) -> None:
    text = safe_text(as_aiohttp_decodes(raw), limit)
    assert len(text) <= limit
    text.encode("utf-8")  # SQLite and every vendor need valid UTF-8
    orjson.dumps(text)
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in text)


def nested(depth: int, leaf: Any = 1, kind: str = "list") -> Any:
    value = leaf
    for _ in range(depth):
        value = [value] if kind == "list" else {"k": value}
    return value


@pytest.mark.parametrize("value, limit, exceeds", [
    (1, 1, False),
    ([], 1, False),
    ([[]], 1, True),
    (nested(63), 64, False),  # 63 lists around a number: 63 levels
    (nested(64), 64, False),
    (nested(65), 64, True),
    (nested(65, kind="dict"), 64, True),
    ({"a": [1, 2, {"b": nested(61)}]}, 64, False),  # 3 + 61
    ({"a": [1, 2, {"b": nested(62)}]}, 64, True),
    ({"a": [1, 2, {"b": nested(61, leaf=[])}]}, 64, True),  # an empty container is a level too
])
def test_nesting(value: Any, limit: int, exceeds: bool) -> None:
    assert nesting_exceeds(value, limit) is exceeds


def depth_of(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((depth_of(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth_of(v) for v in value), default=0)
    return 0


json_values = st.recursive(st.none() | st.integers() | st.text(max_size=3),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner,
                                                                                        max_size=3), max_leaves=40)


@given(json_values, st.integers(min_value=1, max_value=12))
def test_nesting_agrees_with_a_plain_recursive_depth(value: Any, limit: int) -> None:
    assert nesting_exceeds(value, limit) is (depth_of(value) > limit)
