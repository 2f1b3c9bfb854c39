"""The conversion report at size (issue 21): ``.venv/bin/python -m bench.report``.

Builds, for one account, 10,000,000 clicks and 1,000,000 events over 90 days in a SQLite file, through the
real upkeep: the clicks through :func:`storage.clicks.insert_clicks` in batches of 20,000, each counted into
the rollups by the pass behind them (:func:`linksvc.reports.rollups.count_clicks`), the events' figures through
:func:`storage.conversions.add_events` and :func:`storage.conversions.add_purchases` in batches, as the event
batch calls them (the events rows themselves are not written: the report reads only the rollups). The file is
cached under ``data/`` keyed by :data:`VERSION` and its parameters, not by the schema: a cached file is reused
after a migration is added and simply migrated when the service opens it, as a real deployment is upgraded
(the migration fills what the new schema keeps from what the old one held). Raise :data:`VERSION` when the
data generated changes; ``--rebuild`` builds it again at the current schema. A file named by the older key
(which ended with the schema's digest) is renamed to the new key and reused the same way.

Then, against a running ``linksvc serve`` on that file and a bare aiohttp handler in the same run, measures
``GET /api/admin/v1/accounts/{id}/reports/conversions`` over the 90 days grouped by day, campaign,
utm_source+platform, link, utm_campaign, link+utm_source, link+platform and campaign+utm_medium (every one of
them read from the coarse level, the whole weeks from its weekly rows): one request at a time (a report is
asked by a person, not by a crowd), p50 and p99 latency per query; the goal is under 200 ms. The measurement
holds ``/tmp/bench.lock`` (flock). Writes its section to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import json
import random
import statistics
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from functools import partial
from pathlib import Path
from typing import Any

from bench import data, load
from bench import storefront_docs as docs
from linksvc.reports.rollups import count_clicks
from linksvc.seed import load_seed
from linksvc.settings import REPO_ROOT
from storage import clicks as click_repo
from storage import conversions
from storage.db import Database, Tx

COMMAND = ".venv/bin/python -m bench.report"
VERSION = 3  # 3: clicks carry countries, referrers (and their hosts), rules and variants (issue 34)
SEED = 2026_11_21
DAYS = 90
LINKS = 200
CAMPAIGNS = 4
CLICK_BATCH = 20_000
EVENT_BATCH = 5_000
LOCK = Path("/tmp/bench.lock")
GROUPS = ("day", "campaign", "utm_source,platform", "link", "utm_campaign", "link,utm_source", "link,platform",
          "campaign,utm_medium")
PLATFORMS = (("android", 45), ("ios", 30), ("desktop", 22), ("other", 3))
ANSWERS = {"android": ("intent", "play", "fallback"), "ios": ("app_store", "fallback", "deeplink"),
           "desktop": ("destination",), "other": ("destination",)}
SOURCES = ("newsletter", "instagram", "facebook", "sms", "google", "")
MEDIUMS = ("email", "social", "cpc", "push", "")
TYPES = (("PURCHASE", 30), ("app_open", 40), ("page_view", 25), ("add_to_cart", 5))


def _link_id(n: int) -> str:
    return f"5e000000-0000-4000-8000-{n:012d}"


def seed_document() -> dict[str, Any]:
    seed = data.links_seed_document()
    campaigns = [c["id"] for c in seed["accounts"][0]["campaigns"]]
    seed["accounts"][0]["links"] = [
        {"id": _link_id(n), "code": f"rep{n:05d}", "kind": "external", "campaign_id": campaigns[n % CAMPAIGNS],
         "destination_url": f"https://shop.benchcoffee.example/offers/{n}"} for n in range(LINKS)]
    return seed


def _first_day() -> datetime:
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return today - timedelta(days=DAYS - 1)


COUNTRIES = (("US", 30), ("BR", 12), ("MX", 10), ("CO", 9), ("ES", 7), ("DE", 6), ("GB", 6), ("FR", 5),
             ("AR", 4), ("IN", 4), ("CL", 3), ("PE", 2), (None, 2))
REFERRERS = ((None, 40), ("https://www.instagram.com/", 20), ("https://l.facebook.com/l.php?u=x", 15),
             ("https://www.google.com/", 12), ("https://t.co/abc", 8), ("android-app://com.google.android.gm/", 5))
RULE_LINKS, SPLIT_LINKS = 40, 20
"""The first links have rules (a third of their clicks match one of three), the next ones an A/B split."""


class Generator:
    """Clicks and events of one account: popular links and UTM combinations get more, visitors come back
    within a day, bots are 5 %."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.start = _first_day().timestamp()
        rng = self.rng
        self.utms = [[(rng.choice(SOURCES), rng.choice(MEDIUMS), rng.choice(("bf", "xmas", "spring", "")))
                      for _ in range(3)] for _ in range(LINKS)]
        self.link_weights = [1 / (n + 1) ** 0.8 for n in range(LINKS)]
        self.platforms = [p for p, _ in PLATFORMS]
        self.platform_weights = [w for _, w in PLATFORMS]
        self.places = random.Random(seed + 1)  # the issue 34 columns, drawn apart: the others stay as they were

    def clicks(self, count: int) -> Iterator[tuple[Any, ...]]:  # rows of storage.clicks.COLUMNS
        rng = self.rng
        links = rng.choices(range(LINKS), self.link_weights, k=count)
        platforms = rng.choices(self.platforms, self.platform_weights, k=count)
        for n in range(count):
            link, platform = links[n], platforms[n]
            at = self.start + rng.random() * DAYS * 86400
            source, medium, campaign = rng.choice(self.utms[link])
            utm = {k: v for k, v in (("utm_source", source), ("utm_medium", medium), ("utm_campaign", campaign)) if v}
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)) + f".{n % 1_000_000:06d}Z"
            visitor = f"{rng.randrange(300_000):016x}"
            country, referer, rule, variant = self._smart(link)
            yield (docs.ACCOUNT_ID, _link_id(link), f"{rng.getrandbits(64):016x}", stamp, platform,
                   int(rng.random() < 0.05), rng.choice(ANSWERS[platform]), "bench", referer, json.dumps(utm),
                   source or None, None, None, None, None, None, None, visitor,
                   json.dumps({k: "query" for k in utm}), country, None, None, rule, variant,
                   click_repo.referrer_host(referer))

    def _smart(self, link: int) -> tuple[str | None, str | None, str | None, str | None]:
        """A click's country, Referer, rule and variant (issue 34)."""
        draw = self.places
        country = draw.choices([c for c, _ in COUNTRIES], [w for _, w in COUNTRIES])[0]
        referer = draw.choices([r for r, _ in REFERRERS], [w for _, w in REFERRERS])[0]
        rule = draw.choice(("latam", "mobile-es", "newsletter", None, None, None)) if link < RULE_LINKS else None
        variant = draw.choice(("A", "B")) if RULE_LINKS <= link < RULE_LINKS + SPLIT_LINKS else None
        return country, referer, rule, variant

    def events(self, count: int) -> Iterator[tuple[list[Any], list[Any]]]:
        """(add_events row, add_purchases row or []) per event; 5 % have no click behind them."""
        rng = self.rng
        types = rng.choices([t for t, _ in TYPES], [w for _, w in TYPES], k=count)
        for n in range(count):
            at = self.start + rng.random() * DAYS * 86400
            day = time.strftime("%Y-%m-%d", time.gmtime(at))
            link = rng.choices(range(LINKS), self.link_weights)[0]
            source, medium, campaign = rng.choice(self.utms[link])
            attributed = rng.random() >= 0.05
            link_id, platform = (_link_id(link), rng.choice(self.platforms)) if attributed else ("", "")
            key = [docs.ACCOUNT_ID, day, link_id, source, medium, campaign, platform]
            purchase: list[Any] = []
            if types[n] == "PURCHASE":
                value = Decimal(rng.randrange(100, 20_000)) / 100
                purchase = [*key, rng.choice(("USD", "USD", "COP")), 1, value,
                            int(rng.expovariate(1 / 20_000)) if attributed else None]
            yield [*key, types[n], 1], purchase


async def _build(path: Path, clicks: int, events: int) -> None:
    db = Database(str(path), "OFF")
    await db.open()
    try:
        await load_seed(db, seed_document(), allow_private=True)
        generator = Generator(SEED)
        started, written = time.perf_counter(), 0
        while written < clicks:
            rows = list(generator.clicks(min(CLICK_BATCH, clicks - written)))
            await db.write(partial(click_repo.insert_clicks, rows=rows))
            await count_clicks(db)  # the rollups' pass, as the service runs it behind the click writer
            written += len(rows)
            if written % 500_000 < CLICK_BATCH:
                print(f"  {written:,} clicks in {time.perf_counter() - started:.0f} s")
        done = 0
        while done < events:
            pairs = list(generator.events(min(EVENT_BATCH, events - done)))

            async def unit(tx: Tx, pairs: list[tuple[list[Any], list[Any]]] = pairs) -> None:
                await conversions.add_events(tx, [tuple(e) for e, _ in pairs])  # type: ignore[misc]
                await conversions.add_purchases(tx, [tuple(p) for _, p in pairs if p])  # type: ignore[misc]
            await db.write(unit)
            done += len(pairs)
        print(f"  {events:,} events in {time.perf_counter() - started:.0f} s (with the clicks)")
    finally:
        await db.close()


async def _migrate(path: Path) -> None:
    """Applies the migrations ``path`` lacks (opening the store does): before the service opens it, so that a
    long upgrade is not taken for a slow start."""
    started = time.perf_counter()
    db = Database(str(path), "NORMAL")
    await db.open()
    await db.close()
    print(f"  opened (and migrated) in {time.perf_counter() - started:.0f} s")


def ensure(clicks: int, events: int, rebuild: bool) -> Path:
    directory = REPO_ROOT / "data"
    directory.mkdir(exist_ok=True)
    path = directory / f"bench-report-v{VERSION}-{clicks}-{events}-{SEED}.db"  # migrated when opened
    if not path.exists() and not rebuild:  # a file of the same data named by the older key (the schema's digest)
        for older in sorted(directory.glob(f"{path.stem}-*.db"))[:1]:
            for side in directory.glob(f"{older.name}*"):  # with its -wal, -shm, ... files
                side.rename(directory / (path.name + side.name[len(older.name):]))
    if path.exists() and not rebuild:
        print(f"using the cached {path.name} (migrated to the current schema if it is older)")
        asyncio.run(_migrate(path))
        return path
    for stale in directory.glob(f"{path.name}*"):
        stale.unlink()
    partial_path = path.with_name(path.name + ".building")
    partial_path.unlink(missing_ok=True)
    print(f"building {clicks:,} clicks and {events:,} events over {DAYS} days ...")
    asyncio.run(_build(partial_path, clicks, events))
    partial_path.rename(path)
    for leftover in directory.glob(f"{partial_path.name}-*"):  # the store's side files of the partial name
        leftover.unlink()
    return path


@contextmanager
def bench_lock() -> Iterator[None]:
    with LOCK.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _timed(url: str, headers: dict[str, str]) -> tuple[float, int, bytes]:
    request = urllib.request.Request(url, headers=headers)
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=60) as response:
        body = response.read()
        return time.perf_counter() - started, response.status, body


def latencies(server: load.Server, path: str, headers: dict[str, str], count: int) -> list[float]:
    _timed(server.url(path), headers)  # warm-up
    found = []
    for _ in range(count):
        seconds, status, _ = _timed(server.url(path), headers)
        if status != 200:
            raise SystemExit(f"{path} answered {status}")
        found.append(seconds * 1000)
    return found


def quantiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(round(0.99 * (len(ordered) - 1))))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.report", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clicks", type=int, default=10_000_000)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=50, help="requests measured per query [50]")
    parser.add_argument("--rebuild", action="store_true")
    load.output_options(parser, "20,000 clicks, 2,000 events, 5 requests per query")
    args = parser.parse_args(argv)
    if args.smoke:
        args.clicks, args.events, args.requests = 20_000, 2_000, 5
    path = ensure(args.clicks, args.events, args.rebuild)
    first = _first_day().date().isoformat()
    last = datetime.now(UTC).date().isoformat()
    env = {**load.DEFAULTS, "LINKSVC_LOAD_DEMO": "0"}
    results: dict[str, tuple[float, float, int]] = {}
    with bench_lock():
        with load.running("bare aiohttp handler", load.BASELINE) as bare:
            results["bare aiohttp handler (/bare)"] = (*quantiles(latencies(bare, "/bare", {}, args.requests)), 0)
        with load.service("linksvc", path, env) as server:
            for group in GROUPS:
                query = f"/api/admin/v1/accounts/{docs.ACCOUNT_ID}/reports/conversions?from={first}&to={last}" \
                        f"&group_by={group}"
                _, status, body = _timed(server.url(query), load.ADMIN)
                rows = len(json.loads(body)["data"]["rows"]) if status == 200 else 0
                print(f"measuring group_by={group} ({rows} rows) ...")
                results[f"group_by={group}"] = (*quantiles(latencies(server, query, load.ADMIN, args.requests)), rows)
    lines = [[name, str(rows) if rows else "", f"{p50:.1f}", f"{p99:.1f}",
              "" if name.startswith("bare") else ("yes" if p99 < 200 else "no")]
             for name, (p50, p99, rows) in results.items()]
    text = "\n".join([
        "## Conversion report (issue 21)", "",
        f"`{COMMAND}`: {args.clicks:,} clicks and {args.events:,} events of one account over {DAYS} days "
        f"({LINKS} links, {CAMPAIGNS} campaigns), built through the click writer's and the event batch's rollup "
        "upkeep; `GET /api/admin/v1/accounts/{id}/reports/conversions` over the 90 days, one request at a time, "
        f"{args.requests} requests per query after one warm-up, beside a bare aiohttp handler in the same run.", "",
        load.table(["query", "rows", "p50 ms", "p99 ms", "p99 < 200 ms"], lines), "",
        f"Machine: {load.machine().line()}. Measured at {load.revision()}.",
    ])
    print(text)
    load.publish("report", text, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
