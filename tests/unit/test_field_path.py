"""field_path: pydantic error locations as the paths that error details and seed messages name."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from linksvc.resources.validation import field_path


@pytest.mark.parametrize(
    ("loc", "prefix", "path"),
    [
        (("campaigns", 3, "stores"), "", "campaigns[3].stores"),
        (("stores",), "accounts[0].campaigns[1]", "accounts[0].campaigns[1].stores"),
        (("entry_conditions", 0, 0, "operator"), "", "entry_conditions[0][0].operator"),
        (("config", "endpoint_url"), "", "config.endpoint_url"),
        ((0, "name"), "", "[0].name"),
        ((2,), "accounts[0].tiers", "accounts[0].tiers[2]"),
        (("accounts", 0, "api_keys", 1, "key"), "", "accounts[0].api_keys[1].key"),
        ((), "", "body"),
        ((), "accounts[0].links[0]", "accounts[0].links[0]"),
    ],
)
def test_field_path(loc: tuple[int | str, ...], prefix: str, path: str) -> None:
    assert field_path(loc, prefix) == path


names = st.from_regex(r"[a-z_]{1,12}", fullmatch=True)


@given(st.lists(names | st.integers(min_value=0, max_value=999), max_size=8), st.sampled_from(["", "accounts[0]"]))
def test_every_part_appears_in_order(loc: list[int | str], prefix: str) -> None:
    path = field_path(loc, prefix)
    expected = prefix
    for part in loc:
        expected += f"[{part}]" if isinstance(part, int) else (f".{part}" if expected else part)
    assert path == (expected or "body")
    assert path.count("[") == prefix.count("[") + sum(isinstance(p, int) for p in loc)
