"""Revenue in the conversion report: an exact sum written at its currency's decimals, or at more when the
amounts sent had more; the same sum reads the same however its amounts were written."""

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from linksvc.reports.conversions import amount_text


@pytest.mark.parametrize(("currency", "amount", "text"), [
    ("USD", "49.0", "49.00"), ("USD", "17", "17.00"), ("COP", "922.3", "922.30"), ("EUR", "0", "0.00"),
    ("USD", "12.345", "12.345"), ("USD", "1E+3", "1000.00"), ("JPY", "1500", "1500"), ("JPY", "1500.5", "1500.5"),
    ("KWD", "1.5", "1.500"), ("CLF", "2", "2.0000"), ("USD", "9" * 40, "9" * 40)])
def test_a_sum_at_its_currencys_decimals(currency: str, amount: str, text: str) -> None:
    assert amount_text(currency, Decimal(amount)) == text


@given(st.lists(st.integers(1, 10**9), min_size=1, max_size=6), st.sampled_from(["USD", "JPY", "KWD"]))
def test_the_same_sum_reads_the_same_whatever_the_scale_of_its_parts(cents: list[int], currency: str) -> None:
    exact = sum(Decimal(c) / 100 for c in cents)  # amounts as they may be sent: 922.3, 922.30, 17
    padded = sum(Decimal(c).scaleb(-2).quantize(Decimal("0.0001")) for c in cents)  # the same, with more zeros
    assert amount_text(currency, exact) == amount_text(currency, padded)
    assert Decimal(amount_text(currency, exact)) == exact
