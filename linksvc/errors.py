"""The service's exception tree; the API renders every one as ``{error, details}``.

    ServiceError              status 500 unless a subclass says otherwise
    ├── BadRequest            400  invalid query, body or header
    │   └── InvalidField      400  fields are wrong; details name every one (``issues``)
    ├── Unauthorized          401  missing, malformed, unknown, expired or revoked credentials
    ├── Forbidden             403  the credentials may not do this
    ├── NotFound              404
    ├── Conflict              409
    ├── PayloadTooLarge       413
    ├── UnsupportedEncoding   415  a Content-Encoding the service does not decode (answers Accept-Encoding)
    └── RateLimited           429  carries ``retry_after`` (whole seconds)

Services raise these; they never import aiohttp. ``error`` is a short human sentence, ``details`` a string
or an object that says exactly what was wrong.

Validation names every problem at once: checks add an :class:`Issue` (field path, message, rule code) to an
:class:`Issues` collector and raise one :class:`InvalidField` holding them all. The rule codes are
:data:`RULES` (also listed in docs/decisions.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

# The rule codes an issue's ``type`` takes, and what each means.
RULES: dict[str, str] = {
    "missing": "a required field is absent or null",
    "unknown_field": "the object has no such field (a typo is refused, not dropped)",
    "type": "the JSON type is wrong: a number where text is expected, a list where an object is",
    "format": "the text does not read as what the field holds: a date-time, a date, a UUID, an e-mail, a number",
    "enum": "not one of a closed set of values; the issue's ``accepted`` lists them",
    "pattern": "the text does not have the field's shape (a link code, an ISO 4217 currency, a package name)",
    "string_too_short": "the text is shorter than the field allows (an empty name)",
    "string_too_long": "the text is longer than the field allows",
    "too_few_items": "the list holds fewer items than it must",
    "too_many_items": "the list holds more items than it may",
    "range": "a number or a time outside its bounds (negative, too large, too far in the future)",
    "url": "not a URL the field accepts (scheme, host, private address, credentials, characters)",
    "one_of_required": "none of a set of fields was given; ``accepted`` lists them",
    "not_allowed": "a field this object may not carry (for its type, or next to another field)",
    "duplicate": "a value given twice where it must be unique (a query parameter, a coupon code)",
    "unknown_reference": "an id that names nothing of that kind in the account",
    "reserved": "a value the service keeps for itself (a link code shadowing its own paths)",
    "insufficient_balance": "a redeem of more than the customer holds of that reward",
    "too_deep": "JSON nested deeper than 64 levels",
    "invalid": "any other rule; the message says which",
}


@dataclass(frozen=True)
class Issue:
    """One problem: where (``a.b[0].c``), what a person reads, which rule; ``accepted`` for closed sets."""

    path: str
    message: str
    type: str = "invalid"
    accepted: tuple[str, ...] | None = None

    def as_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {"path": self.path, "message": self.message, "type": self.type}
        if self.accepted is not None:
            found["accepted"] = list(self.accepted)
        return found

    def text(self) -> str:
        return f"{self.path}: {self.message}"


def _overlaps(a: str, b: str) -> bool:
    """Whether one path is the other or inside it (``config`` and ``config.endpoint_url``)."""
    if a == b:
        return True
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return long.startswith(short) and long[len(short)] in ".["


class ServiceError(Exception):
    status = 500
    default_error = "Internal server error"

    def __init__(self, error: str | None = None, details: Any = None) -> None:
        self.error = error or self.default_error
        self.details = details if details is not None else self.error
        super().__init__(self.error)

    def body(self) -> dict[str, Any]:
        return {"error": self.error, "details": self.details}

    def as_text(self) -> str:
        """The details as one line: ``"field: message"`` for a field error (every issue, ``; ``-separated)."""
        if isinstance(self.details, str):
            return self.details
        if isinstance(self.details, dict) and "field" in self.details:
            return f"{self.details['field']}: {self.details.get('message', self.error)}"
        return self.error


class BadRequest(ServiceError):
    status = 400
    default_error = "Bad request"


class InvalidField(BadRequest):
    """Fields are wrong: ``details`` is ``{field, message, issues}``, ``field`` and ``message`` those of the
    first issue (what clients read before issues existed), ``issues`` every one."""

    def __init__(self, path: str, message: str, error: str = "Validation failed", *, rule: str = "invalid",
                 accepted: Sequence[str] | None = None) -> None:
        self._set(error, [Issue(path, message, rule, None if accepted is None else tuple(accepted))])

    def _set(self, error: str, issues: Sequence[Issue]) -> None:
        self.issues = list(issues)
        first = self.issues[0]
        ServiceError.__init__(self, error, {"field": first.path, "message": first.message,
                                            "issues": [issue.as_dict() for issue in self.issues]})

    @classmethod
    def of(cls, issues: Sequence[Issue], error: str = "Validation failed") -> InvalidField:
        if not issues:
            raise ValueError("an InvalidField needs at least one issue")
        invalid = cls.__new__(cls)
        invalid._set(error, issues)
        return invalid

    @property
    def path(self) -> str:
        return self.issues[0].path

    @property
    def message(self) -> str:
        return self.issues[0].message

    def as_text(self) -> str:
        return "; ".join(issue.text() for issue in self.issues)


class Issues:
    """Collects the issues of one request (or one item of a bulk request) so that it is refused once, naming
    every problem."""

    def __init__(self) -> None:
        self.items: list[Issue] = []

    def __bool__(self) -> bool:
        return bool(self.items)

    def __iter__(self) -> Iterator[Issue]:
        return iter(self.items)

    def add(self, path: str, message: str, rule: str = "invalid", accepted: Sequence[str] | None = None) -> None:
        issue = Issue(path, message, rule, None if accepted is None else tuple(accepted))
        if not any(i.path == issue.path and i.message == issue.message for i in self.items):
            self.items.append(issue)

    def extend(self, found: InvalidField | Iterable[Issue]) -> None:
        for issue in found.issues if isinstance(found, InvalidField) else found:
            self.add(issue.path, issue.message, issue.type, issue.accepted)

    def covers(self, path: str) -> bool:
        """Whether an issue is already about ``path``, a field inside it or an object holding it: a check of a
        field that failed its own validation would only repeat the problem."""
        return any(_overlaps(issue.path, path) for issue in self.items)

    @contextmanager
    def collect(self) -> Iterator[None]:
        """Runs a check that raises :class:`InvalidField` and keeps its issues instead."""
        try:
            yield
        except InvalidField as exc:
            self.extend(exc)

    def raise_if_any(self, error: str = "Validation failed") -> None:
        if self.items:
            raise InvalidField.of(self.items, error)


class Unauthorized(ServiceError):
    status = 401
    default_error = "Unauthorized"


class Forbidden(ServiceError):
    status = 403
    default_error = "Forbidden"


class NotFound(ServiceError):
    status = 404
    default_error = "Not found"


class Conflict(ServiceError):
    status = 409
    default_error = "Conflict"


class PayloadTooLarge(ServiceError):
    status = 413
    default_error = "Payload too large"


class UnsupportedEncoding(ServiceError):
    status = 415
    default_error = "Unsupported content encoding"
    accepted = "gzip, deflate"


class RateLimited(ServiceError):
    status = 429
    default_error = "Too many requests"

    def __init__(self, retry_after: int, details: Any = None) -> None:
        super().__init__(self.default_error, details or f"Retry after {retry_after} seconds")
        self.retry_after = max(1, int(retry_after))
