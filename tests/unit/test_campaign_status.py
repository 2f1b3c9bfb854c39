"""campaign_status: the four rules of product decisions section 4, first match wins, with their boundaries."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from linksvc.campaigns.status import STATUSES, campaign_status

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
TICK = timedelta(microseconds=1)
DAY = timedelta(days=1)


@pytest.mark.parametrize(
    ("starts_at", "ends_at", "paused", "finished_at", "expected"),
    [
        # 1. FINISHED: finished_at set, or ends_at <= now.
        (None, None, False, NOW - DAY, "FINISHED"),
        (None, None, False, NOW + DAY, "FINISHED"),  # set at all is enough
        (NOW - DAY, NOW + DAY, False, NOW - DAY, "FINISHED"),
        (None, NOW - DAY, False, None, "FINISHED"),
        (None, NOW, False, None, "FINISHED"),  # ends_at == now
        (None, NOW + TICK, False, None, "RUNNING"),  # just before the end
        (None, NOW - DAY, True, None, "FINISHED"),  # beats PAUSED
        (NOW + DAY, NOW - DAY, False, None, "FINISHED"),  # beats SCHEDULED
        (NOW + DAY, None, True, NOW, "FINISHED"),
        # 2. PAUSED.
        (None, None, True, None, "PAUSED"),
        (NOW + DAY, None, True, None, "PAUSED"),  # beats SCHEDULED
        (NOW - DAY, NOW + DAY, True, None, "PAUSED"),
        # 3. SCHEDULED: starts_at > now.
        (NOW + DAY, None, False, None, "SCHEDULED"),
        (NOW + TICK, NOW + DAY, False, None, "SCHEDULED"),
        (NOW, None, False, None, "RUNNING"),  # starts_at == now
        # 4. RUNNING.
        (None, None, False, None, "RUNNING"),
        (NOW - DAY, None, False, None, "RUNNING"),
        (NOW - DAY, NOW + DAY, False, None, "RUNNING"),
    ],
)
def test_status_rules(
    starts_at: datetime | None, ends_at: datetime | None, paused: bool, finished_at: datetime | None, expected: str
) -> None:
    assert campaign_status(NOW, starts_at, ends_at, paused, finished_at) == expected


def test_offsets_do_not_matter() -> None:
    bogota = timezone(timedelta(hours=-5))
    ends_here = NOW.astimezone(bogota)  # the same instant, another offset
    assert campaign_status(NOW, None, ends_here, False, None) == "FINISHED"
    assert campaign_status(NOW.astimezone(bogota), NOW, None, False, None) == "RUNNING"
    assert campaign_status(NOW, (NOW + TICK).astimezone(bogota), None, False, None) == "SCHEDULED"


moments = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC))


@given(now=moments, starts_at=st.none() | moments, ends_at=st.none() | moments, paused=st.booleans(),
       finished_at=st.none() | moments)
def test_always_one_of_the_four_statuses(
    now: datetime, starts_at: datetime | None, ends_at: datetime | None, paused: bool, finished_at: datetime | None
) -> None:
    status = campaign_status(now, starts_at, ends_at, paused, finished_at)
    assert status in STATUSES
    assert (status == "FINISHED") == (finished_at is not None or (ends_at is not None and ends_at <= now))


@given(starts_at=st.none() | moments, ends_at=st.none() | moments, paused=st.booleans(),
       instants=st.lists(moments, min_size=2, max_size=6))
def test_time_only_moves_a_campaign_forward(
    starts_at: datetime | None, ends_at: datetime | None, paused: bool, instants: list[datetime]
) -> None:
    # As the clock advances a campaign never goes back: SCHEDULED/PAUSED -> RUNNING/PAUSED -> FINISHED.
    rank = {"SCHEDULED": 0, "PAUSED": 1, "RUNNING": 1, "FINISHED": 2}
    seen = [campaign_status(now, starts_at, ends_at, paused, None) for now in sorted(instants)]
    assert [rank[s] for s in seen] == sorted(rank[s] for s in seen)
    if paused:
        assert set(seen) <= {"PAUSED", "FINISHED"}
