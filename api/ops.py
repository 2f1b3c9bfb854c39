"""Operations endpoints: liveness, readiness (the database answers) and Prometheus metrics. The health checks
answer on every host (a load balancer or an orchestrator probes with whatever ``Host`` it is configured with,
and they tell nothing); the metrics only on the service's own hosts (:mod:`api.hosts`)."""

from __future__ import annotations

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from api.appkeys import DB
from api.hosts import on_every_host
from api.observability import METRICS_KEY, refresh_waiting
from api.routing import json_response


async def healthz(request: web.Request) -> web.Response:
    return json_response({"status": "ok"})


async def readyz(request: web.Request) -> web.Response:
    try:
        ready = await request.app[DB].ping()
    except Exception as exc:  # any failure to reach the store means "not ready"
        return json_response({"status": "unavailable", "details": str(exc)}, status=503)
    return json_response({"status": "ok" if ready else "unavailable"}, status=200 if ready else 503)


async def metrics(request: web.Request) -> web.Response:
    await refresh_waiting(request.app[METRICS_KEY].store_gauges)
    body = generate_latest(request.app[METRICS_KEY].registry)
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})


def add_ops_routes(app: web.Application) -> None:
    on_every_host(app, app.router.add_get("/healthz", healthz), app.router.add_get("/readyz", readyz))
    app.router.add_get("/metrics", metrics)
