"""The HTTP middleware (request ids, error bodies, metrics) and the access log."""

from __future__ import annotations

import logging
import re
import secrets
import time
from typing import Any

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger
from prometheus_client import CollectorRegistry, Counter, Histogram

from api import errors
from linksvc.errors import ServiceError
from linksvc.logs import request_id_var

_SAFE_ID = re.compile(r"^[A-Za-z0-9._\-]{1,64}$")
UNMATCHED = "unmatched"
REQUEST_ID: web.RequestKey[str] = web.RequestKey("request_id", str)


class Metrics:
    """Request counts and latencies. Label children are kept per label set: looking them up through
    ``labels()`` on every request costs more than the observation itself."""

    def __init__(self) -> None:
        self._children: dict[tuple[str, str, str], tuple[Any, Any]] = {}
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "linksvc_http_requests", "HTTP requests answered, by method, route and status",
            ("method", "route", "status"), registry=self.registry,
        )
        self.latency = Histogram(
            "linksvc_http_request_duration_seconds", "Time to answer an HTTP request, by route",
            ("method", "route"), registry=self.registry,
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
        )


    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        key = (method, route, str(status))
        children = self._children.get(key)
        if children is None:
            children = (self.requests.labels(*key), self.latency.labels(method, route))
            self._children[key] = children
        children[0].inc()
        children[1].observe(seconds)


METRICS_KEY: web.AppKey[Metrics] = web.AppKey("metrics", Metrics)


def route_label(request: web.Request) -> str:
    """The route template (never the raw path, whose values would explode the label set)."""
    info = request.match_info
    if info.http_exception is not None:
        return UNMATCHED
    resource = info.route.resource
    if resource is None:
        return UNMATCHED
    return resource.canonical


@web.middleware
async def http_middleware(request: web.Request, handler: Any) -> web.StreamResponse:
    """The one middleware: a request id, ``{error, details}`` for every failure under /api/, metrics."""
    incoming = request.headers.get("X-Request-Id", "")
    request_id = incoming if _SAFE_ID.match(incoming) else secrets.token_hex(8)
    request[REQUEST_ID] = request_id
    request_id_var.set(request_id)
    started = time.perf_counter()
    response: web.StreamResponse | None = None
    status = 500
    try:
        try:
            response = await handler(request)
        except ServiceError as exc:
            response = errors.from_service_error(exc)
        except web.HTTPException as exc:
            response = errors.from_http_exception(request, exc)
            if response is None:
                status = exc.status
                exc.headers["X-Request-Id"] = request_id
                raise
        except Exception:
            response = errors.from_unexpected(request, request_id)
        status = response.status
        response.headers["X-Request-Id"] = request_id
        return response
    finally:
        request.app[METRICS_KEY].observe(request.method, route_label(request), status, time.perf_counter() - started)


class AccessLogger(AbstractAccessLogger):
    """One structured line per request; secrets in headers are never logged."""

    @property
    def enabled(self) -> bool:
        # aiohttp skips log() when False: no work per request when the level hides access lines.
        return self.logger.isEnabledFor(logging.INFO)

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        self.logger.info(
            "%s %s %s",
            request.method,
            request.path,
            response.status,
            extra={
                "request_id": request.get(REQUEST_ID, "-"),
                "method": request.method,
                "path": request.path,
                "status": response.status,
                "duration_ms": round(time * 1000, 3),
                "remote": request.remote,
            },
        )
