"""Properties of the retry schedule (product decisions, section 10: exponential backoff with jitter, honouring
``Retry-After``): the pure parts of the dispatcher, ``retry_after_seconds`` and ``backoff_delay``."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from unittest import mock

from hypothesis import example, given, settings
from hypothesis import strategies as st

from linksvc.forwarding.dispatcher import MAX_DELAY_SECONDS, backoff_delay
from linksvc.forwarding.sender import retry_after_seconds

FAST = settings(max_examples=100, deadline=None)
NOW = datetime(2024, 5, 2, 8, 0, tzinfo=UTC)
# LINKSVC_DELIVERY_BACKOFF_SECONDS is refused outside (0, 3600].
BASES = st.floats(min_value=0.001, max_value=3600)
TRIES = st.integers(1, 1000)  # see the last test for more
RETRY_AFTER = st.one_of(st.none(), st.floats(min_value=0, max_value=10**6), st.just(math.inf))


def extremes(tries: int, base: float) -> tuple[float, float]:
    """The shortest and the longest delay the jitter can give (its random draw at each end)."""
    with mock.patch("linksvc.forwarding.dispatcher.random.uniform", side_effect=lambda low, high: low):
        shortest = backoff_delay(tries, base, None)
    with mock.patch("linksvc.forwarding.dispatcher.random.uniform", side_effect=lambda low, high: high):
        longest = backoff_delay(tries, base, None)
    return shortest, longest


@FAST
@given(TRIES, BASES, RETRY_AFTER)
def test_a_delay_is_never_below_retry_after_nor_above_the_cap(tries: int, base: float,
                                                              retry_after: float | None) -> None:
    delay = backoff_delay(tries, base, retry_after)
    assert 0 < delay <= MAX_DELAY_SECONDS
    # Retry-After is honoured up to the cap (a server asking for a day gets the cap, not a day).
    assert delay >= min(retry_after or 0.0, MAX_DELAY_SECONDS)


@FAST
@given(st.integers(1, 40), BASES)
def test_the_jitter_envelope_doubles_per_try_up_to_the_cap(tries: int, base: float) -> None:
    shortest, longest = extremes(tries, base)
    # backoff × 2^(tries-1), capped, with equal jitter: at least half of it, at most all of it.
    assert longest == min(MAX_DELAY_SECONDS, base * 2 ** (tries - 1))
    assert shortest == longest / 2
    following = extremes(tries + 1, base)
    assert following[0] >= shortest and following[1] >= longest  # never shorter on a later try
    for _ in range(5):
        assert shortest <= backoff_delay(tries, base, None) <= longest


@FAST
@given(st.floats(min_value=-10**9, max_value=10**9, allow_nan=False), st.sampled_from([repr, str, "{:.3f}".format]))
def test_retry_after_in_seconds_is_that_many_seconds_never_negative(seconds: float, spelled: object) -> None:
    text = spelled(seconds)  # type: ignore[operator]
    assert retry_after_seconds(text, NOW) == max(0.0, float(text))


@FAST
@given(st.integers(-10**7, 10**8), st.booleans())
def test_retry_after_as_a_date_is_the_wait_until_then(offset: int, gmt: bool) -> None:
    when = NOW + timedelta(seconds=offset)
    # "GMT", or "-0000" (a UTC time whose zone the sender does not vouch for): both are UTC.
    text = format_datetime(when, usegmt=True) if gmt else format_datetime(when.replace(tzinfo=None))
    assert retry_after_seconds(text, NOW) == max(0.0, float(offset))


@FAST
@given(st.one_of(st.text(max_size=40),
                 st.text(" ,:+-0123456789MonTueJanFebGMTUTCESTZ", max_size=40),
                 st.sampled_from(["nan", "-inf", "1e400", "Wed, 21 Oct 2015 07:28:00 GMT", "0x10", "٣"])))
def test_any_retry_after_header_is_none_or_a_wait_never_an_error(value: str) -> None:
    wait = retry_after_seconds(value, NOW)
    assert wait is None or wait >= 0  # NaN would fail this too


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 10**5), BASES)
@example(1025, 1.0)
def test_any_number_of_tries_the_settings_allow_has_a_delay(tries: int, base: float) -> None:
    assert 0 < backoff_delay(tries, base, None) <= MAX_DELAY_SECONDS
