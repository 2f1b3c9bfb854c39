"""Request ids, the access log and Prometheus metrics for every request."""

from __future__ import annotations

import re
import secrets
import time
from typing import Any

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger
from prometheus_client import CollectorRegistry, Counter, Histogram

from linksvc.logs import request_id_var

_SAFE_ID = re.compile(r"^[A-Za-z0-9._\-]{1,64}$")
UNMATCHED = "unmatched"
REQUEST_ID: web.RequestKey[str] = web.RequestKey("request_id", str)


class Metrics:
    def __init__(self) -> None:
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
async def observe_middleware(request: web.Request, handler: Any) -> web.StreamResponse:
    incoming = request.headers.get("X-Request-Id", "")
    request_id = incoming if _SAFE_ID.match(incoming) else secrets.token_hex(8)
    request[REQUEST_ID] = request_id
    request_id_var.set(request_id)
    metrics = request.app[METRICS_KEY]
    started = time.perf_counter()
    status = 500
    try:
        response = await handler(request)
        status = response.status
        response.headers["X-Request-Id"] = request_id
        return response
    except web.HTTPException as exc:
        status = exc.status
        exc.headers["X-Request-Id"] = request_id
        raise
    finally:
        route = route_label(request)
        metrics.requests.labels(request.method, route, str(status)).inc()
        metrics.latency.labels(request.method, route).observe(time.perf_counter() - started)


class AccessLogger(AbstractAccessLogger):
    """One structured line per request; secrets in headers are never logged."""

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
