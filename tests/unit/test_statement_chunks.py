"""The sizes of the multi-row statements (``storage.db.statement_chunks``): every row once and in order, in at
most ten sizes whatever the number of rows, so that the statements' texts stay in the statement cache."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from storage.db import ROWS_PER_STATEMENT, statement_chunks

SIZES = {ROWS_PER_STATEMENT, *(1 << n for n in range(ROWS_PER_STATEMENT.bit_length() - 1))}


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=5000))
def test_every_row_once_in_order_in_few_sizes(count: int) -> None:
    rows = list(range(count))
    chunks = [list(chunk) for chunk in statement_chunks(rows)]
    assert [row for chunk in chunks for row in chunk] == rows
    assert {len(chunk) for chunk in chunks} <= SIZES
    assert len(SIZES) <= 10
    rest = [len(chunk) for chunk in chunks if len(chunk) != ROWS_PER_STATEMENT]
    assert rest == sorted(set(rest), reverse=True)  # the rest: each power of two at most once, falling


def test_a_smaller_most() -> None:
    assert [len(chunk) for chunk in statement_chunks(list(range(23)), most=8)] == [8, 8, 4, 2, 1]
