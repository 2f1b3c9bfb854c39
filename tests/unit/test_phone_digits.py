"""phone_digits: how phones are compared (section 5): digits only, on both sides."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from linksvc.resources.types import phone_digits


@pytest.mark.parametrize(
    ("phone", "digits"),
    [
        ("+57 300 123 4567", "573001234567"),
        ("573001234567", "573001234567"),
        ("(300) 123-45.67", "3001234567"),
        ("+1-202-555-0142 ext. 9", "120255501429"),
        ("\t0 0 1\n", "001"),
        (None, None),
        ("", None),
        ("+ ( ) - .", None),
        ("call me", None),
        ("٣٠٠١٢٣", None),  # Arabic-Indic digits are not ASCII digits
        ("１２３", None),  # full-width digits
        ("²³", None),  # superscripts count as digits to str.isdigit
        ("+57 ３00", "5700"),
    ],
)
def test_phone_digits(phone: str | None, digits: str | None) -> None:
    assert phone_digits(phone) == digits


def test_stored_and_queried_forms_match() -> None:
    assert phone_digits("+57 300 123 4567") == phone_digits("573001234567") == phone_digits("57-300-123-45-67")


@given(st.text())
def test_only_ascii_digits_and_idempotent(phone: str) -> None:
    digits = phone_digits(phone)
    expected = "".join(ch for ch in phone if ch in "0123456789") or None
    assert digits == expected
    assert phone_digits(digits) == digits
    if digits is not None:
        assert digits.isascii() and digits.isdigit()


@given(st.text(alphabet="0123456789", min_size=1), st.lists(st.sampled_from([" ", "-", ".", "(", ")", "+"])))
def test_punctuation_is_ignored(number: str, noise: list[str]) -> None:
    decorated = "".join(noise) + " ".join(number) + "".join(reversed(noise))
    assert phone_digits(decorated) == number
