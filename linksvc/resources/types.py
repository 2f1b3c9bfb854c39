"""Field types shared by every resource model.

Numbers that can be money or points are :class:`~decimal.Decimal` in memory and JSON numbers on the
wire; date-times are UTC-aware (a naive value is taken as UTC); uuids are canonical lower-case text.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from decimal import Decimal
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, PlainSerializer, WithJsonSchema
from pydantic_core import PydanticCustomError

from linksvc.clock import iso


def _canonical_uuid(value: str) -> str:
    try:
        return str(uuid.UUID(value))
    except (ValueError, AttributeError, TypeError):
        raise PydanticCustomError("format", "must be a UUID") from None


def _reject_bool(value: Any) -> Any:
    # pydantic would read true as 1; a flag is never a quantity.
    if isinstance(value, bool):
        raise PydanticCustomError("type", "must be a number, not a boolean")
    return value


def decimal_to_json(value: Decimal) -> int | float:
    """A Decimal as a JSON number: exact for integers, and for the fractions a ``Number`` accepts (those a double
    holds exactly)."""
    if value == value.to_integral_value():
        return int(value)
    return float(value)


MAX_DIGITS_BEFORE_POINT = 15
MAX_DECIMAL_PLACES = 12
# A fraction reaches JSON readers as a double: one that a double does not hold exactly (beyond about 15
# significant digits) would come back as another number, so it is refused rather than rounded. Whole numbers
# are written as integers.


def _bounded(value: Decimal) -> Decimal:
    # Bounds keep arithmetic and serialisation cheap: 1E+999999999 would otherwise become a
    # billion-digit integer on the way out. Checked on the exponent, without arithmetic.
    if not value.is_finite():
        raise PydanticCustomError("range", "must be a finite number")
    if value != 0 and value.adjusted() >= MAX_DIGITS_BEFORE_POINT:
        raise PydanticCustomError("range", "must be less than 10^15 in size")
    exponent = value.as_tuple().exponent
    if value != 0 and isinstance(exponent, int) and exponent < -MAX_DECIMAL_PLACES:
        raise PydanticCustomError("range", "must have at most 12 decimal places")
    if value != value.to_integral_value() and Decimal(repr(float(value))) != value:
        raise PydanticCustomError("range", "has more digits than a JSON number keeps exactly (about 15 significant "
                                  "digits)")
    return value


def _to_utc(value: datetime) -> datetime:
    try:
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except OverflowError:
        raise PydanticCustomError("range", "is outside the years 1 to 9999 in UTC") from None


Uuid = Annotated[
    str,
    AfterValidator(_canonical_uuid),
    WithJsonSchema({"type": "string", "format": "uuid"}),
]

Number = Annotated[
    Decimal,
    BeforeValidator(_reject_bool),
    AfterValidator(_bounded),
    PlainSerializer(decimal_to_json, when_used="json"),
    WithJsonSchema({"type": "number"}),
]

UtcDateTime = Annotated[
    datetime,
    AfterValidator(_to_utc),
    # iso, not strftime("%Y..."): strftime writes the year 514 as "514", which no ISO 8601 reader takes back.
    PlainSerializer(iso, when_used="json"),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]

Name = Annotated[str, Field(min_length=1, max_length=200)]
ShortText = Annotated[str, Field(max_length=200)]
Text = Annotated[str, Field(max_length=5000)]
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def _email(value: str) -> str:
    if not EMAIL.match(value):
        raise PydanticCustomError("format", "must be an e-mail address")
    return value


Email = Annotated[
    str,
    Field(max_length=320),
    AfterValidator(_email),
    WithJsonSchema({"type": "string", "format": "email", "maxLength": 320}),
]


def new_id() -> str:
    return str(uuid.uuid4())


_NOT_DIGIT = re.compile(r"[^0-9]+")


def phone_digits(phone: str | None) -> str | None:
    """The ASCII digits of a phone number; spaces, dashes, dots, brackets and + are ignored."""
    if phone is None:
        return None
    return _NOT_DIGIT.sub("", phone) or None
