"""Numbers (money, points, levels) are bounded at validation, so no input makes a huge Decimal."""

from __future__ import annotations

from decimal import Decimal

import pytest
from aiohttp.test_utils import TestClient
from pydantic import TypeAdapter, ValidationError

from linksvc.resources.types import Number
from tests.conftest import ADMIN
from tests.factories import A

NUMBER = TypeAdapter(Number)


@pytest.mark.parametrize(
    ("given", "shown"),
    [(5, b"5"), ("12.50", b"12.5"), ("-3", b"-3"), ("999999999999999.5", b"999999999999999.5"),
     ("0.000000000001", b"1e-12"), ("0E-1000", b"0")],
)
def test_accepted(given: object, shown: bytes) -> None:
    assert NUMBER.dump_json(NUMBER.validate_python(given)) == shown


@pytest.mark.parametrize(
    "given", ["1E+999999999", "-1E+999999999", 1e308, "1e15", "1e-13", "0.1234567890123456", "NaN", "Infinity", True]
)
def test_refused(given: object) -> None:
    with pytest.raises(ValidationError):
        NUMBER.validate_python(given)


async def test_a_huge_exponent_in_a_body_is_a_400(seeded: TestClient) -> None:
    # Before the bound, this request made the server build a billion-digit integer.
    response = await seeded.post(f"/api/admin/v1/accounts/{A}/tiers", headers=ADMIN,
                                 json={"name": "Huge", "level": "1E+999999999"})
    assert response.status == 400
    assert (await response.json())["details"]["field"] == "level"
    assert Decimal("1E+999999999").adjusted() > 15
