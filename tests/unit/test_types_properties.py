"""Properties of the ``Number`` field (money, points, levels): which Decimals it accepts, and that what it
writes as a JSON number reads back as the same number (engineering conventions, Storage: never binary
floats)."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from linksvc.resources.types import MAX_DECIMAL_PLACES, MAX_DIGITS_BEFORE_POINT, Number, decimal_to_json

FAST = settings(max_examples=100, deadline=None)
NUMBER = TypeAdapter(Number)

# Decimals of every size and precision around the bounds: sign, up to 30 digits, exponents either side.
ANY_DECIMAL = st.builds(lambda sign, digits, exponent: Decimal((sign, tuple(map(int, digits)), exponent)),
                        st.sampled_from([0, 1]), st.text("0123456789", min_size=1, max_size=30),
                        st.integers(-16, 16))


def in_bounds(value: Decimal) -> bool:
    """The documented bounds: less than 10^15 in size, at most 12 decimal places as written, and a fraction only when
    it reads back from its JSON number as itself (zero in any form)."""
    if not value.is_finite():
        return False
    if value == 0:
        return True
    places = max(0, -int(value.as_tuple().exponent))
    whole = value == value.to_integral_value()
    return (abs(value) < Decimal(10) ** MAX_DIGITS_BEFORE_POINT and places <= MAX_DECIMAL_PLACES
            and (whole or Decimal(repr(float(value))) == value))


def accepted(value: object) -> bool:
    try:
        NUMBER.validate_python(value)
    except ValidationError:
        return False
    return True


@FAST
@given(st.one_of(ANY_DECIMAL, st.sampled_from([Decimal("NaN"), Decimal("-Infinity"), Decimal("Infinity")])))
@example(Decimal("1E+15"))
@example(Decimal("-999999999999999.999999999999"))
@example(Decimal("1E-13"))
@example(Decimal("1.0000000000000"))
@example(Decimal("0E-1000"))
def test_a_number_is_accepted_exactly_within_the_bounds(value: Decimal) -> None:
    assert accepted(value) == in_bounds(value)
    assert accepted(str(value)) == in_bounds(value)  # the same from JSON text


# Accepted values of at most 15 significant digits: all a JSON reader's double keeps exactly.
SHORT_NUMBERS = st.builds(lambda sign, digits, places: Decimal((sign, tuple(map(int, digits)), -places)),
                          st.sampled_from([0, 1]), st.text("0123456789", min_size=1, max_size=15),
                          st.integers(0, MAX_DECIMAL_PLACES)).filter(in_bounds)


@FAST
@given(SHORT_NUMBERS)
def test_what_is_written_reads_back_as_the_same_number(value: Decimal) -> None:
    shown = NUMBER.dump_json(value)
    assert Decimal(shown.decode()) == value
    assert json.loads(shown) == decimal_to_json(value)
    # Whole numbers are written as integers, exactly (no exponent, no ".0").
    assert isinstance(decimal_to_json(value), int) == (value == value.to_integral_value())


@FAST
@given(st.integers(-(10**15) + 1, 10**15 - 1), st.integers(0, MAX_DECIMAL_PLACES))
def test_a_whole_number_is_written_as_that_integer(number: int, zeros: int) -> None:
    value = Decimal(number).quantize(Decimal(1).scaleb(-zeros))  # 5, 5.0, 5.000 ... all the integer 5
    assert NUMBER.dump_json(NUMBER.validate_python(value)) == str(number).encode()


ACCEPTED = st.builds(lambda sign, digits, places: Decimal((sign, tuple(map(int, digits)), -places)),
                     st.sampled_from([0, 1]), st.text("0123456789", min_size=1, max_size=27),
                     st.integers(0, MAX_DECIMAL_PLACES)).filter(in_bounds)


@FAST
@given(ACCEPTED)
@example(Decimal("123456789012.345"))
@example(Decimal("999999999999999"))
def test_every_accepted_number_reads_back_as_itself(value: Decimal) -> None:
    shown = NUMBER.dump_json(value)
    assert Decimal(shown.decode()) == value
    assert accepted(json.loads(shown, parse_float=Decimal))  # at least still a number the API accepts


@pytest.mark.parametrize("text", ["123456789012345.123456789012", "999999999999999.999999999999",
                                  "1234567.890123456789"])
def test_a_fraction_a_double_cannot_hold_is_refused_not_rounded(text: str) -> None:
    assert not accepted(Decimal(text)) and not accepted(text)
