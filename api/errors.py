"""How failures become responses: ``{error, details}`` with the right status (used by the middleware).

Under ``/api/`` every failure is JSON: the service's own errors, aiohttp's 404/405/413, and anything
unexpected (500, with the request id and no stack trace). Outside ``/api/`` aiohttp's own responses stand
(the link resolver renders its own HTML pages).
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from aiohttp import web

from api.routing import json_response
from linksvc.errors import RateLimited, ServiceError, UnsupportedEncoding
from linksvc.store import StoreOperationalError

log = logging.getLogger("linksvc.api")

_HTTP_ERRORS: dict[int, tuple[str, str]] = {
    404: ("Not found", "no route matches {method} {path}"),
    405: ("Method not allowed", "{method} is not allowed on {path}"),
    413: ("Payload too large", "the request body is too large"),
}


def error_response(status: int, error: str, details: Any, headers: dict[str, str] | None = None) -> web.Response:
    return json_response({"error": error, "details": details}, status=status, headers=headers)


def _from_http(request: web.Request, exc: web.HTTPException) -> web.Response:
    error, details = _HTTP_ERRORS.get(exc.status, (exc.reason, exc.text or exc.reason))
    details = details.format(method=request.method, path=request.path)
    headers = {"Allow": exc.headers["Allow"]} if "Allow" in exc.headers else None
    return error_response(exc.status, error, details, headers)


def no_route(request: web.Request, status: int) -> web.Response:
    """The answer to a path (404) or a method (405) no route serves, as the router's would be under /api/."""
    error, details = _HTTP_ERRORS[status]
    return error_response(status, error, details.format(method=request.method, path=request.path))


def from_service_error(exc: ServiceError) -> web.Response:
    headers = {"Retry-After": str(exc.retry_after)} if isinstance(exc, RateLimited) else None
    if isinstance(exc, UnsupportedEncoding):  # RFC 7694: say which encodings a body may have
        headers = {"Accept-Encoding": exc.accepted}
    if exc.status >= 500:
        log.error("service error: %s", exc.error)
    return error_response(exc.status, exc.error, exc.details, headers)


def from_http_exception(request: web.Request, exc: web.HTTPException) -> web.Response | None:
    """aiohttp's 404/405/413 (a path or a method no route serves) as ``{error, details}``, on every path: the
    resolver's own 404 page for an unknown code is a handler's answer and never reaches here. None below 400
    (a redirect stands as it is)."""
    if exc.status < 400:
        return None
    return _from_http(request, exc)


# SQLite's answers when the disk is full, the file cannot be written or the lock is held too long.
_STORAGE_TROUBLE = ("database is locked", "database or disk is full", "disk i/o error", "unable to open database",
                    "attempt to write a readonly database")


_PG_CONFLICT = frozenset({"40001", "40P01"})  # serialization_failure, deadlock_detected: after every retry
_PG_DISK_FULL = "53100"  # PostgreSQL's disk_full ("could not extend file ...: No space left on device")


def from_unexpected(request: web.Request, request_id: str) -> web.Response:
    exc = sys.exc_info()[1]
    if getattr(exc, "sqlstate", None) in _PG_CONFLICT:
        # PostgreSQL refused the unit every time it was run again (docs/decisions.md, "Serializable writes"):
        # requests at once kept changing the same rows. Nothing was stored; the client may send it again.
        log.warning("store busy on %s %s: %s", request.method, request.path, exc)
        return error_response(503, "Storage busy", "other requests kept changing the same data; nothing was "
                              f"stored, retry (request {request_id})", {"Retry-After": "1"})
    disk_full = getattr(exc, "sqlstate", None) == _PG_DISK_FULL
    if isinstance(exc, StoreOperationalError) and (disk_full or any(t in str(exc).lower() for t in _STORAGE_TROUBLE)):
        # Not a bug and not the caller's fault: the store cannot take the write now. Nothing was half
        # written (every write is one transaction); the client may retry.
        log.error("storage unavailable on %s %s: %s", request.method, request.path, exc)
        full = "the disk is full: " if disk_full else ""  # PostgreSQL's message says "No space left on device"
        return error_response(503, "Storage unavailable", f"the database cannot be written now ({full}{exc}); "
                              f"nothing was stored, retry later (request {request_id})", {"Retry-After": "5"})
    log.exception("unhandled error on %s %s", request.method, request.path)
    return error_response(500, "Internal server error", f"request {request_id} failed; see the logs")
