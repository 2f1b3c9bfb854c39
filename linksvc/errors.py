"""The service's exception tree; the API renders every one as ``{error, details}``.

    ServiceError              status 500 unless a subclass says otherwise
    ├── BadRequest            400  invalid query, body or header
    │   └── InvalidField      400  one field is wrong; details name it
    ├── Unauthorized          401  missing, malformed, unknown, expired or revoked credentials
    ├── Forbidden             403  the credentials may not do this
    ├── NotFound              404
    ├── Conflict              409
    ├── PayloadTooLarge       413
    ├── UnsupportedEncoding   415  a Content-Encoding the service does not decode (answers Accept-Encoding)
    └── RateLimited           429  carries ``retry_after`` (whole seconds)

Services raise these; they never import aiohttp. ``error`` is a short human sentence, ``details`` a string
or an object that says exactly what was wrong.
"""

from __future__ import annotations

from typing import Any


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
        """The details as one line: ``"field: message"`` for a field error."""
        if isinstance(self.details, str):
            return self.details
        if isinstance(self.details, dict) and "field" in self.details:
            return f"{self.details['field']}: {self.details.get('message', self.error)}"
        return self.error


class BadRequest(ServiceError):
    status = 400
    default_error = "Bad request"


class InvalidField(BadRequest):
    """One field is wrong: ``details`` carries its location and the reason."""

    def __init__(self, path: str, message: str, error: str = "Validation failed") -> None:
        super().__init__(error, {"field": path, "message": message})
        self.path = path
        self.message = message


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
