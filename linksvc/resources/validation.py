"""pydantic validation errors as the service's :class:`InvalidField`, naming every bad field.

Each pydantic error becomes an :class:`~linksvc.errors.Issue`: its location as a path (``a.b[0].c``), its
type translated into one of the service's rule codes (:data:`~linksvc.errors.RULES`), and a message. A model
may add rules that tie fields together with a classmethod ``cross_field_issues(data)``: it reads the raw
data, so its issues are reported beside the per-field ones even when those fail.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Sequence
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from linksvc.errors import RULES, InvalidField, Issue, Issues

M = TypeVar("M", bound=BaseModel)

# pydantic's error types that are not named by their suffix (``*_type``: type, ``*_parsing``: format).
_PYDANTIC_RULES = {
    "missing": "missing",
    "extra_forbidden": "unknown_field",
    "literal_error": "enum",
    "enum": "enum",
    "string_too_short": "string_too_short",
    "string_too_long": "string_too_long",
    "too_short": "too_few_items",
    "too_long": "too_many_items",
    "string_pattern_mismatch": "pattern",
    "greater_than": "range",
    "greater_than_equal": "range",
    "less_than": "range",
    "less_than_equal": "range",
    "finite_number": "range",
    "multiple_of": "range",
    "decimal_max_digits": "range",
    "decimal_max_places": "range",
    "decimal_whole_digits": "range",
    "int_from_float": "type",
    "none_required": "type",
    "is_instance_of": "type",
    "model_attributes_type": "type",
    "union_tag_invalid": "type",
    "union_tag_not_found": "type",
    "string_unicode": "format",
    "uuid_version": "format",
    "json_invalid": "format",
    "date_from_datetime_inexact": "format",
}
# Messages in the service's words for the commonest rules; the rest keep pydantic's.
_MESSAGES = {"missing": "is required", "unknown_field": "is not a field of this object"}
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")


def rule_of(pydantic_type: str) -> str:
    """The service's rule code for a pydantic error type; our own validators raise the codes directly."""
    if pydantic_type in _PYDANTIC_RULES:
        return _PYDANTIC_RULES[pydantic_type]
    if pydantic_type in RULES:
        return pydantic_type
    if pydantic_type.endswith("_type"):
        return "type"
    if pydantic_type.endswith(("_parsing", "_invalid")):
        return "format"
    return "invalid"


def field_path(loc: Sequence[int | str], prefix: str = "", root: str = "body") -> str:
    """``("campaigns", 3, "stores")`` -> ``campaigns[3].stores`` (after ``prefix``); the root is ``root``."""
    path = prefix
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path or root


def _accepted(expected: Any) -> tuple[str, ...] | None:
    """The values of a Literal from pydantic's ``expected`` text (``"'A', 'B' or 'C'"``)."""
    if not isinstance(expected, str):
        return None
    values = []
    for quoted in _QUOTED.findall(expected):
        try:
            values.append(str(ast.literal_eval(quoted)))
        except (ValueError, SyntaxError):
            return None
    return tuple(values) or None


def issue_of(error: Any, prefix: str = "", root: str = "body") -> Issue:
    rule = rule_of(str(error["type"]))
    message = str(error["msg"]).removeprefix("Value error, ")
    accepted = None
    if rule == "enum":
        accepted = _accepted((error.get("ctx") or {}).get("expected"))
        if accepted is not None:
            message = "must be one of " + ", ".join(accepted)
    message = _MESSAGES.get(rule, message)
    return Issue(field_path(error["loc"], prefix, root), message, rule, accepted)


def issues_of(exc: ValidationError, prefix: str = "", root: str = "body") -> list[Issue]:
    errors = exc.errors(include_url=False, include_input=False)
    return [issue_of(error, prefix, root) for error in errors]


def _root_of(where: str) -> str:
    return {"query": "query", "seed file": "file"}.get(where, "body")


def invalid_from(exc: ValidationError, prefix: str = "", where: str = "body") -> InvalidField:
    return InvalidField.of(issues_of(exc, prefix, _root_of(where)), error=f"Invalid {where}")


def cross_field_issues(model: type[BaseModel], data: Any, prefix: str = "", root: str = "body") -> list[Issue]:
    """The model's own rules over several fields (``cross_field_issues``), their paths after ``prefix``."""
    check = getattr(model, "cross_field_issues", None)
    if check is None or not isinstance(data, dict):
        return []
    found = []
    for issue in check(data):
        path = field_path((issue.path,) if issue.path else (), prefix, root)
        found.append(Issue(path, issue.message, issue.type, issue.accepted))
    return found


def one_of_required(data: dict[str, Any], names: Sequence[str]) -> list[Issue]:
    """The issue of a query or body that gives none of ``names`` (an empty value counts as not given); its
    path is the root, its ``accepted`` the names. For ``cross_field_issues``."""
    if any(data.get(name) not in (None, "") for name in names):
        return []
    listed = ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]
    return [Issue("", f"at least one of {listed} is required", "one_of_required", tuple(names))]


@functools.cache
def _judged_apart(model: type[BaseModel]) -> frozenset[str]:
    """The fields a model takes as ``Any`` or ``list[Any]``: their items are validated on their own later (a
    migrated customer, a bulk request's event), so that one bad item fails alone."""
    return frozenset(name for name, info in model.model_fields.items() if info.annotation in (Any, list[Any]))


def _own_parts(model: type[BaseModel], data: Any) -> Any:
    apart = _judged_apart(model)
    if apart and isinstance(data, dict):
        return {key: value for key, value in data.items() if key not in apart}
    return data


def validate(model: type[M], data: Any, prefix: str = "", where: str = "body") -> M:
    """``data`` as ``model``, or :class:`InvalidField` naming every problem: the fields' and the model's
    cross-field rules together."""
    root = _root_of(where)
    issues = Issues()
    item: M | None = None
    try:
        item = model.model_validate(data)
    except ValidationError as exc:
        issues.extend(issues_of(exc, prefix, root))
    for issue in cross_field_issues(model, data, prefix, root):
        if not issues.covers(issue.path) or issue.path in (root, prefix):
            issues.add(issue.path, issue.message, issue.type, issue.accepted)
    own = _own_parts(model, data)
    if holds_nul(own):
        for issue in nul_issues(own, prefix, root=root):
            if not issues.covers(issue.path):
                issues.add(issue.path, issue.message, issue.type)
    if issues or item is None:
        issues.raise_if_any(f"Invalid {where}")
    assert item is not None
    return item


NUL_MESSAGE = "may not contain the character U+0000"


def holds_nul(value: Any) -> bool:
    """Whether any string or key of a JSON document holds U+0000: orjson writes that character as ``\\u0000``
    and nothing else does, so one C-level search of the document's bytes answers it (under a microsecond for an
    event, where walking it in Python takes several)."""
    try:
        return b"\\u0000" in orjson.dumps(value)
    except TypeError:  # not a JSON document (models, dates): walk it
        return bool(nul_issues(value))


def nul_issues(value: Any, prefix: str = "", loc: tuple[int | str, ...] = (), root: str = "body") -> list[Issue]:
    """Every string (or key) of a document that holds U+0000, named by its path. No text the service is given
    may hold it, on either store: PostgreSQL's ``text`` and ``jsonb`` cannot, and the same input must get the
    same answer from both (docs/decisions.md, "Where the two stores differ")."""
    found: list[Issue] = []
    if isinstance(value, str):
        if "\x00" in value:
            found.append(Issue(field_path(loc, prefix, root), NUL_MESSAGE, "format"))
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and "\x00" in key:
                found.append(Issue(field_path((*loc, key), prefix, root), NUL_MESSAGE, "format"))
            else:
                found.extend(nul_issues(item, prefix, (*loc, key), root))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found.extend(nul_issues(item, prefix, (*loc, index), root))
    return found
