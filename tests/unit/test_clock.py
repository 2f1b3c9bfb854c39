"""Times as text: the cheap per-click formatter gives exactly what ``iso`` gives."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from linksvc.clock import iso, iso_from_timestamp


@given(st.integers(min_value=0, max_value=4_102_444_800_000_000))  # 1970 to 2100, in microseconds
def test_iso_from_timestamp_matches_iso(micros: int) -> None:
    seconds, fraction = divmod(micros, 1_000_000)
    moment = datetime.fromtimestamp(seconds, UTC).replace(microsecond=fraction)
    assert iso_from_timestamp(moment.timestamp()) == iso(moment)


def test_consecutive_calls_in_one_second_and_across_seconds() -> None:
    assert iso_from_timestamp(1_700_000_000.25) == "2023-11-14T22:13:20.250000Z"
    assert iso_from_timestamp(1_700_000_000.75) == "2023-11-14T22:13:20.750000Z"
    assert iso_from_timestamp(1_700_000_001.0) == "2023-11-14T22:13:21.000000Z"
    assert iso_from_timestamp(0.0) == "1970-01-01T00:00:00.000000Z"
