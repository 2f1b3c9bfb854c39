"""pydantic validation errors as the service's :class:`InvalidField`, naming the first bad field."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from linksvc.errors import InvalidField

M = TypeVar("M", bound=BaseModel)


def field_path(loc: Sequence[int | str], prefix: str = "") -> str:
    """``("campaigns", 3, "stores")`` -> ``campaigns[3].stores`` (after ``prefix``)."""
    path = prefix
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path or "body"


def _message(error: Any) -> str:
    msg = str(error["msg"])
    return msg.removeprefix("Value error, ")


def invalid_from(exc: ValidationError, prefix: str = "", where: str = "body") -> InvalidField:
    errors = exc.errors(include_url=False, include_context=False, include_input=False)
    first = errors[0]
    path = field_path(first["loc"], prefix)
    invalid = InvalidField(path, _message(first), error=f"Invalid {where}")
    invalid.details = {
        "field": path,
        "message": invalid.message,
        "issues": [{"path": field_path(e["loc"], prefix), "message": _message(e), "type": e["type"]} for e in errors],
    }
    return invalid


def validate(model: type[M], data: Any, prefix: str = "", where: str = "body") -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise invalid_from(exc, prefix, where) from None
