"""``create_app(settings)``: the only place where the service is wired together."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import AsyncIterator
from datetime import date
from functools import partial
from pathlib import Path

from aiohttp import web

from api.admin import add_admin_routes
from api.appkeys import AUTH_THROTTLE, CAMPAIGN_COUNTS, CLICKS, DB, DISPATCHER, EXPORTS, FEED, RESOURCES, SETTINGS
from api.dashboard import add_dashboard_routes
from api.demo import add_demo_routes
from api.domains import add_domain_routes
from api.hosts import SHARED_HOSTS, host_middleware
from api.links.resolver import add_resolver_routes, warm_fast_lane
from api.observability import (
    HELD_LOOKUPS,
    LANE_ANSWERS,
    LANES,
    METRICS_KEY,
    REQUEST_TIMEOUT_KEY,
    Metrics,
    StoreGauge,
    http_middleware,
    refresh_gauges,
    snapshot_metrics,
)
from api.ops import add_ops_routes
from api.server import LISTENING, Listening
from api.storefront import add_storefront_routes
from linksvc import deadletters
from linksvc.accounts import service as accounts
from linksvc.accounts.sessions import delete_void_sessions
from linksvc.accounts.throttle import KINDS, AuthThrottle
from linksvc.campaigns.service import CampaignCounts
from linksvc.client_address import parse_networks
from linksvc.demo import setup as demo
from linksvc.demo.endpoints import endpoints_of
from linksvc.domains.hosts import SharedHosts
from linksvc.feed.hub import FeedHub
from linksvc.forwarding.deliveries import connections_near_sunset, state_gauge, version_gauge
from linksvc.forwarding.dispatcher import Dispatcher
from linksvc.forwarding.export import export_target_of, exports_of
from linksvc.forwarding.export_job import ExportJob
from linksvc.links.clicks import ClickRecorder
from linksvc.links.limits import CountCompaction
from linksvc.links.service import hold_links
from linksvc.links.visitors import Visitors
from linksvc.reports.rollups import ClickRollups
from linksvc.resources.service import Resources
from linksvc.rules.geo import Geo
from linksvc.seed import load_seed_file
from linksvc.settings import Settings
from linksvc.store import store_of
from storage.db import AnyDatabase
from storage.postgres import PostgresDatabase

log = logging.getLogger("linksvc")


async def load_demo_if_empty(db: AnyDatabase, settings: Settings) -> None:
    if settings.load_demo and await accounts.has_none(db):
        if Path(settings.demo_file).is_file():
            counts = await load_seed_file(db, settings.demo_file, settings.allow_private_destinations)
            log.info("empty database: loaded the demo data from %s", settings.demo_file, extra={"loaded": counts})
        else:
            log.warning("demo file %s not found; starting with an empty database", settings.demo_file)
    # Demo accounts loaded since the last start (now, or by `linksvc seed`) get their week of activity.
    await demo.add_activity(db, settings.public_url, settings.service_label)


async def warn_about_api_versions(db: AnyDatabase) -> None:
    for found in await connections_near_sunset(db, date.today()):
        log.warning("connection %s (%s, account %s) uses API version %s, which %s", found["id"],
                    found["destination"], found["account_id"], found["api_version"],
                    f"ends in {found['days_left']} days" if found["days_left"] >= 0
                    else f"ended {-found['days_left']} days ago", extra={"connection_id": found["id"]})


async def _database(db: AnyDatabase, app: web.Application) -> AsyncIterator[None]:
    """Opens the SQLite store the app holds as ``app[DB]`` (typed there only as a :class:`Store`), its write
    queue with it. First in ``cleanup_ctx``, it closes last: the click recorder, the dispatcher and the other
    jobs have written what they hold through the store by then, and the close commits what still waits."""
    await db.open()
    await load_demo_if_empty(db, app[SETTINGS])
    await warn_about_api_versions(db)
    # Sessions opened under another admin token (a rotation) or expired are deleted, not only refused.
    await delete_void_sessions(db, app[SETTINGS].admin_token)
    yield
    await db.close()


FREEZE_HELD: web.AppKey[bool] = web.AppKey("freeze_held", bool)
"""Set by ``linksvc serve``: once the links are held, the objects the worker has made so far are moved out of
the garbage collector's sight (``gc.freeze``). A full collection otherwise walks every held link again and
again, pausing every request for tens of milliseconds (docs/decisions.md, "Redirects on a fast lane"). The
collector's thresholds are then raised (:data:`GC_THRESHOLDS`)."""
GC_THRESHOLDS = (20_000, 50, 1_000)
"""The collector's thresholds in a serving worker (Python's are 700, 10, 10): a redirect allocates a few hundred
objects, nearly none of them in cycles, so the youngest generation was collected every few requests, 6% of
the event loop's time on redirects (docs/decisions.md, "The garbage collector's thresholds")."""


async def _hold(app: web.Application) -> None:
    started = time.perf_counter()
    held = await hold_links(app[DB])
    read = time.perf_counter() - started
    answers = await warm_fast_lane(app)  # before the freeze: the answers are kept as long as the links
    log.info("holding %d links for the fast lane (read in %.1f s; %d answers worked out ahead in %.1f s)", held,
             read, answers, time.perf_counter() - started - read)
    if app.get(FREEZE_HELD):
        gc.freeze()
        gc.set_threshold(*GC_THRESHOLDS)


async def _read_models(app: web.Application) -> AsyncIterator[None]:
    """Fills the worker's links in the background after the database opens (requests meanwhile read the
    store and fill it themselves); cancelled if the app stops first."""
    task = asyncio.create_task(_hold(app), name="linksvc-hold-links")
    yield
    if not task.done():
        task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task


async def _dispatcher(app: web.Application) -> AsyncIterator[None]:
    """Sends what the outbox holds, also what an earlier run left pending; stopped before the database."""
    dispatcher = app[DISPATCHER]
    dispatcher.start()
    yield
    await dispatcher.stop()


async def _export_job(app: web.Application) -> AsyncIterator[None]:
    """Started after the database opens and stopped before it closes; a running export may finish."""
    job = app[EXPORTS]
    job.start()
    yield
    await job.stop()


async def _auth_throttle(app: web.Application) -> AsyncIterator[None]:
    """Prunes the failed attempts that have aged out, from after the database opens until before it closes."""
    app[AUTH_THROTTLE].start()
    yield
    await app[AUTH_THROTTLE].stop()


async def _click_rollups(rollups: ClickRollups, app: web.Application) -> AsyncIterator[None]:
    """Counts stored clicks into the conversion rollups in the background, from after the database opens until
    before it closes (stopped before the click recorder's last write: the next start counts those)."""
    rollups.start()
    yield
    await rollups.stop()


async def _count_compaction(compaction: CountCompaction, app: web.Application) -> AsyncIterator[None]:
    """Sums each link's rows of clicks by people into one in the background, while the database is open."""
    compaction.start()
    yield
    await compaction.stop()


async def _feed(app: web.Application) -> AsyncIterator[None]:
    """The worker's reader of the live feed (it reads nothing while nobody follows a feed); its streams end when
    the server begins to stop (``on_shutdown``), before the server waits for its requests."""
    hub = app[FEED]
    hub.start()
    yield
    await hub.stop()


async def _end_feeds(app: web.Application) -> None:
    app[FEED].close_all()


async def _click_recorder(app: web.Application) -> AsyncIterator[None]:
    """Started after the database opens and stopped before it closes: the last clicks are written."""
    recorder = app[CLICKS]
    await recorder.load_salts()  # before the first click: the request path never reads them from the store
    recorder.start()
    yield
    await recorder.stop()


def create_app(settings: Settings, metrics_dir: str | None = None) -> web.Application:
    """The service. ``metrics_dir`` is given when several worker processes serve the same port: each
    writes its metrics there and ``/metrics`` adds them up (see ``api.observability.Metrics``)."""
    app = web.Application(
        middlewares=[http_middleware, host_middleware],
        client_max_size=max(settings.max_body_bytes, settings.max_bulk_body_bytes, settings.max_import_body_bytes),
    )
    db = store_of(settings)
    app[SETTINGS] = settings
    app[DB] = db
    app[SHARED_HOSTS] = SharedHosts.of(settings)
    app[RESOURCES] = Resources(db, settings.allow_private_destinations)
    app[CAMPAIGN_COUNTS] = CampaignCounts()
    app[METRICS_KEY] = Metrics(metrics_dir)
    app[REQUEST_TIMEOUT_KEY] = settings.request_timeout_seconds
    gauges = [
        StoreGauge("linksvc_deliveries", "Deliveries in the outbox, by destination and state",
                   ("destination", "state"), lambda: state_gauge(db)),
        StoreGauge("linksvc_connection_api_version_days_left",
                   "Days until the vendor retires the API version a connection uses (shown within 60 days of it; "
                   "negative once retired)", ("connection_id", "destination", "api_version"),
                   lambda: version_gauge(db)),
        StoreGauge("linksvc_dead_letters", "Writes set aside because they failed alone (a poison row), by kind",
                   ("kind",), lambda: deadletters.kind_gauge(db)),
    ]
    for gauge in gauges:
        app[METRICS_KEY].registry.register(gauge)
    app[METRICS_KEY].store_gauges.extend(gauges)
    # Failed and refused credential attempts, added up across workers like the request figures.
    metrics = app[METRICS_KEY]
    metrics.describe_counter("linksvc_auth_failures", "Failed admin-token, API-key and sign-in attempts, by kind",
                             "kind", KINDS)
    metrics.describe_counter("linksvc_auth_throttled", "Credential attempts refused with 429 (too many failures "
                             "from the address), by kind", "kind", KINDS)
    metrics.describe_counter(LANE_ANSWERS, "Requests answered on a fast lane (the rest of their route's requests took "
                             "the handler), by lane", "lane", LANES)
    metrics.describe_counter(HELD_LOOKUPS, "Customer lookups answered 200 on the fast lane, by answer: given again "
                             "from the worker's held answers, or read from the store", "answer", ("held", "read"))
    app[AUTH_THROTTLE] = AuthThrottle(db, settings.auth_failure_limit, settings.auth_failure_window_seconds,
                                      parse_networks(settings.trusted_proxies),
                                      observe=lambda event, kind: metrics.count(f"linksvc_auth_{event}", kind))
    app[CLICKS] = ClickRecorder(db, interval=settings.click_flush_seconds,
                                visitors=Visitors(parse_networks(settings.trusted_proxies)),
                                geo=Geo(settings.geo_mmdb or None))
    app[EXPORTS] = ExportJob(db, export_target_of(settings), interval=settings.export_interval_seconds,
                             what=exports_of(settings))
    app[DISPATCHER] = Dispatcher(db, settings.delivery_concurrency, settings.delivery_max_tries,
                                 settings.delivery_backoff_seconds, settings.delivery_timeout_seconds,
                                 settings.allow_private_destinations)
    app[LISTENING] = Listening()
    app[DISPATCHER].demo = endpoints_of(db, app[LISTENING].addresses, settings.host, settings.port)
    app.cleanup_ctx.append(partial(_database, db))
    app.cleanup_ctx.append(_read_models)
    app.cleanup_ctx.append(_auth_throttle)
    app.cleanup_ctx.append(_click_recorder)
    app.cleanup_ctx.append(partial(_click_rollups, ClickRollups(db, settings.click_rollup_seconds)))
    app.cleanup_ctx.append(partial(_count_compaction, CountCompaction(db)))
    app.cleanup_ctx.append(_dispatcher)
    app.cleanup_ctx.append(_export_job)
    app[FEED] = FeedHub(db, settings.feed_poll_seconds, settings.feed_event_settle_seconds)
    app.cleanup_ctx.append(_feed)
    app.on_shutdown.append(_end_feeds)
    app.cleanup_ctx.append(snapshot_metrics)
    if isinstance(db, PostgresDatabase):  # its reads wait: a scrape shows figures read every few seconds
        app.cleanup_ctx.append(refresh_gauges(gauges))
    add_ops_routes(app)
    add_storefront_routes(app)
    add_admin_routes(app)
    add_dashboard_routes(app)
    add_demo_routes(app)
    add_domain_routes(app)
    add_resolver_routes(app)  # last: a code never shadows the service's own paths
    return app
