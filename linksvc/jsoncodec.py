"""JSON in and out with orjson; Decimals become JSON numbers."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import orjson

from linksvc.resources.types import decimal_to_json


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return decimal_to_json(value)
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")


def dumps(value: Any) -> str:
    return orjson.dumps(value, default=_default).decode()


def dumpb(value: Any) -> bytes:
    return orjson.dumps(value, default=_default)


def loads(text: str | bytes) -> Any:
    return orjson.loads(text)


JSONDecodeError = orjson.JSONDecodeError
