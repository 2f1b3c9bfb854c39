"""The HTTP middleware (request ids, error bodies, metrics); the access log is :mod:`api.access_log`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import time
from bisect import bisect_left
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from itertools import accumulate
from pathlib import Path
from typing import Any

from aiohttp import web
from prometheus_client import CollectorRegistry
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric

from api import errors
from api.routing import STREAMING_HANDLERS
from linksvc.errors import ServiceError
from linksvc.jsoncodec import dumpb, loads
from linksvc.logs import request_id_var
from linksvc.random_ids import new_request_id
from linksvc.store import WouldWait, at_once

SAFE_ID = re.compile(r"^[A-Za-z0-9._\-]{1,64}$")
UNMATCHED = "unmatched"
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
"""The methods a request is labelled with; any other (the HTTP parser passes WebDAV's, RTSP's and more, and
any token without its C extension) is ``OTHER``, so clients cannot multiply the series (issue 32)."""
OTHER_METHOD = "OTHER"
REQUEST_ID: web.RequestKey[str] = web.RequestKey("request_id", str)
log = logging.getLogger("linksvc.metrics")


BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)


class Metrics:
    """Request counts and latencies by method, route and status, exposed in Prometheus' format.

    Counted in plain dicts (one ``bisect`` and three additions per request) rather than with
    ``prometheus_client``'s metric objects, whose lock and per-bucket loop cost more than the redirect
    itself; the figures are turned into metric families only when ``/metrics`` is scraped.

    With several worker processes each worker keeps its own figures and writes them every
    ``SNAPSHOT_SECONDS`` to ``<shared_dir>/<pid>.json``; a scrape, whichever worker answers it, adds the
    other workers' latest snapshots to its own live figures. Counters stay monotonic across a worker's
    restart because a dead worker's last snapshot stays in the folder.

    Other events are counted the same way, by one label, under a name made known with
    :meth:`describe_counter` (the failed and throttled credential attempts: ``linksvc_auth_*_total{kind}``).
    """

    SNAPSHOT_SECONDS = 1.0

    def __init__(self, shared_dir: str | None = None) -> None:
        self.shared_dir = Path(shared_dir) if shared_dir else None
        self._requests: dict[tuple[str, str, int], int] = {}
        # Per (method, route): a count per bucket (the last one is +Inf), then the sum of seconds.
        self._latency: dict[tuple[str, str], list[float]] = {}
        # Per (counter name, label value): a count; and per name: its documentation, label and known values.
        self._counts: dict[tuple[str, str], int] = {}
        self._counters: dict[str, tuple[str, str, tuple[str, ...]]] = {}
        self.registry = CollectorRegistry()
        self.store_gauges: list[StoreGauge] = []  # read from the store at scrape time (see StoreGauge)
        self.registry.register(self)

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        key = (method, route, status)
        self._requests[key] = self._requests.get(key, 0) + 1
        counts = self._latency.get((method, route))
        if counts is None:
            counts = self._latency[(method, route)] = [0] * (len(BUCKETS) + 2)
        counts[bisect_left(BUCKETS, seconds)] += 1
        counts[-1] += seconds

    def describe_counter(self, name: str, documentation: str, label: str, values: tuple[str, ...]) -> None:
        """A counter ``<name>_total{<label>}`` on /metrics, shown at 0 for each of ``values`` until counted."""
        self._counters[name] = (documentation, label, values)

    def count(self, name: str, value: str) -> None:
        self._counts[(name, value)] = self._counts.get((name, value), 0) + 1

    def snapshot(self) -> dict[str, list[list[Any]]]:
        return {
            "requests": [[*key, n] for key, n in self._requests.items()],
            "latency": [[*key, counts] for key, counts in self._latency.items()],
            "counts": [[*key, n] for key, n in self._counts.items()],
        }

    def write_snapshot(self) -> None:
        if self.shared_dir is None:
            return
        path = self.shared_dir / f"{os.getpid()}.json"
        scratch = path.with_suffix(".tmp")
        scratch.write_bytes(dumpb(self.snapshot()))
        scratch.replace(path)

    def _merged(self) -> tuple[dict[tuple[str, str, int], int], dict[tuple[str, str], list[float]],
                               dict[tuple[str, str], int]]:
        requests = dict(self._requests)
        latency = {key: list(counts) for key, counts in self._latency.items()}
        events = dict(self._counts)
        if self.shared_dir is not None:
            own = f"{os.getpid()}.json"
            for path in self.shared_dir.glob("*.json"):
                if path.name == own:
                    continue
                try:
                    other = loads(path.read_bytes())
                except (OSError, ValueError):  # a worker's file being replaced: skipped this scrape
                    continue
                for method, route, status, n in other["requests"]:
                    requests[(method, route, status)] = requests.get((method, route, status), 0) + n
                for method, route, counts in other["latency"]:
                    mine = latency.setdefault((method, route), [0] * len(counts))
                    for i, value in enumerate(counts):
                        mine[i] += value
                for name, label_value, n in other.get("counts", ()):
                    events[(name, label_value)] = events.get((name, label_value), 0) + n
        return requests, latency, events

    def collect(self) -> Iterator[Metric]:
        requests, latency, events = self._merged()
        counter = CounterMetricFamily("linksvc_http_requests", "HTTP requests answered, by method, route and status",
                                      labels=("method", "route", "status"))
        for (method, route, status), n in sorted(requests.items()):
            counter.add_metric((method, route, str(status)), n)
        yield counter
        histogram = HistogramMetricFamily("linksvc_http_request_duration_seconds",
                                          "Time to answer an HTTP request, by route", labels=("method", "route"))
        for (method, route), counts in sorted(latency.items()):
            cumulative = list(accumulate(counts[:-1]))
            buckets = [(str(float(bound)), cumulative[i]) for i, bound in enumerate(BUCKETS)]
            buckets.append(("+Inf", cumulative[-1]))
            histogram.add_metric((method, route), buckets, counts[-1])
        yield histogram
        for name, (documentation, label, values) in sorted(self._counters.items()):
            family = CounterMetricFamily(name, documentation, labels=(label,))
            for value in sorted({*values, *(v for n, v in events if n == name)}):
                family.add_metric((value,), events.get((name, value), 0))
            yield family


class StoreGauge:
    """A gauge read from the store at scrape time (the same for every worker: the store is shared), e.g.
    deliveries by destination and state. A store that cannot answer yields no samples, not a failed scrape."""

    def __init__(self, name: str, documentation: str, labels: tuple[str, ...],
                 read: Callable[[], Coroutine[Any, Any, list[tuple[Any, ...]]]]) -> None:
        self.name, self.documentation, self.labels, self.read = name, documentation, labels, read
        self.cached: list[tuple[Any, ...]] = []  # the last figures read by refresh(), for a store that waits
        # The store answers only by awaiting (PostgreSQL): collect() shows what refresh() read, and never starts
        # a read it would have to abandon half way (that leaves the pool's connection in the middle of a query).
        self.waits = False

    async def refresh(self) -> None:
        """Reads the figures (:func:`refresh_gauges` calls it every few seconds); a scrape shows them when the
        store cannot answer without waiting (PostgreSQL)."""
        self.cached = await self.read()

    def collect(self) -> Iterator[Metric]:
        gauge = GaugeMetricFamily(self.name, self.documentation, labels=self.labels)
        try:
            if self.waits:
                raise WouldWait()
            rows = at_once(self.read())  # SQLite's reader answers without waiting: fresh figures
        except WouldWait:
            rows = self.cached
        except Exception:  # the database is closed or busy: nothing to report this time
            rows = []
        for *values, count in rows:
            gauge.add_metric([str(v) for v in values], count)
        yield gauge


GAUGE_REFRESH_SECONDS = 10.0


async def refresh_waiting(gauges: list[StoreGauge]) -> None:
    """Reads the gauges of a store whose reads wait (PostgreSQL) now: a scrape calls it before it renders, so
    it shows the outbox as it is, as on SQLite. A store that cannot answer keeps the last figures."""
    for gauge in gauges:
        if gauge.waits:
            try:
                await gauge.refresh()
            except Exception:
                log.debug("gauge %s not refreshed", gauge.name, exc_info=True)


def refresh_gauges(gauges: list[StoreGauge]) -> Callable[[web.Application], AsyncIterator[None]]:
    """A ``cleanup_ctx`` that reads the store's gauges every :data:`GAUGE_REFRESH_SECONDS` for a store whose
    reads wait (PostgreSQL): a scrape then shows figures at most that old."""
    for gauge in gauges:
        gauge.waits = True
    async def refreshing(app: web.Application) -> AsyncIterator[None]:
        async def loop() -> None:
            while True:
                for gauge in gauges:
                    try:
                        await gauge.refresh()
                    except Exception:  # the store is away: the last figures stay
                        log.debug("gauge %s not refreshed", gauge.name, exc_info=True)
                await asyncio.sleep(GAUGE_REFRESH_SECONDS)
        task = asyncio.get_running_loop().create_task(loop())
        yield
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    return refreshing


async def snapshot_metrics(app: web.Application) -> AsyncIterator[None]:
    """Writes this worker's figures for the others to read (only when several workers share them)."""
    metrics = app[METRICS_KEY]
    if metrics.shared_dir is None:
        yield
        return

    async def loop() -> None:
        while True:
            await asyncio.sleep(metrics.SNAPSHOT_SECONDS)
            try:
                metrics.write_snapshot()
            except OSError:
                log.exception("could not write the metrics snapshot")

    task = asyncio.create_task(loop())
    yield
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    metrics.write_snapshot()


METRICS_KEY: web.AppKey[Metrics] = web.AppKey("metrics", Metrics)
LANE_ANSWERS = "linksvc_fast_lane_answers"  # a counter by lane: the requests each fast lane answered
LANES = ("redirects", "customer_lookup")
# A counter by answer: the customer lookups' 200s on the lane, given again from the worker's held answers or read
# from the store (linksvc.customers.held).
HELD_LOOKUPS = "linksvc_customer_lookups"
REQUEST_TIMEOUT_KEY: web.AppKey[float] = web.AppKey("request_timeout", float)


def method_label(method: str) -> str:
    return method if method in METHODS else OTHER_METHOD


def route_label(request: web.Request) -> str:
    """The route template (never the raw path, whose values would explode the label set)."""
    info = request.match_info
    if info.http_exception is not None:
        return UNMATCHED
    resource = info.route.resource
    if resource is None:
        return UNMATCHED
    return resource.canonical


def streams(request: web.Request) -> bool:
    """Whether the request's route is a stream (the live feed), answered for as long as its client stays."""
    return request.match_info.http_exception is None and request.match_info.handler in STREAMING_HANDLERS


@web.middleware
async def http_middleware(request: web.Request, handler: Any) -> web.StreamResponse:
    """The one middleware: a request id, ``{error, details}`` for every failure under /api/, metrics."""
    incoming = request.headers.get("X-Request-Id", "")
    request_id = incoming if SAFE_ID.match(incoming) else new_request_id()
    request[REQUEST_ID] = request_id
    request_id_var.set(request_id)
    started = time.perf_counter()
    response: web.StreamResponse | None = None
    status = 500
    try:
        try:
            if request.path.startswith(("/api/", "/dashboard/")) and not streams(request):
                # A client that sends its body slowly (or a request stuck on the store) is answered 408 instead
                # of holding a connection and a handler forever. Redirects read no body: no deadline to pay.
                # (Headers have their own deadline, before the request exists: see api.server.)
                async with asyncio.timeout(request.app[REQUEST_TIMEOUT_KEY]):
                    response = await handler(request)
            else:
                response = await handler(request)
        except TimeoutError:
            end = getattr(request.protocol, "end_after_response", None)
            if end is not None:  # a body still trickling in is not waited for (see api.server)
                end()
            response = errors.error_response(
                408, "Request timeout", f"the request took longer than {request.app[REQUEST_TIMEOUT_KEY]:g} seconds "
                "to arrive and be answered; what was complete before is kept, retry the rest", {"Connection": "close"})
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
        request.app[METRICS_KEY].observe(method_label(request.method), route_label(request), status,
                                         time.perf_counter() - started)
