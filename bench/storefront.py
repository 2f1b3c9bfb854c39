"""Storefront reads under load (issue 3): ``.venv/bin/python -m bench.storefront``.

With 100,000 campaigns and 1,000,000 customers in the store, measures requests/s, p50/p99 latency and server
CPU per answer of ``GET /customers?phone=...`` and ``GET /customers?document_number=...`` (a different
customer per request) with ``linksvc serve`` at 1 and 2 workers, and of
``GET /campaigns?from=0&to=49&store_id=...`` (1 worker), beside a bare aiohttp JSON handler measured in the
same run, all with wrk on 127.0.0.1. The rows are measured in rounds, bare A then service B, twice (A B A B),
and the medians of the rounds are reported. Before measuring it checks the generated rows against the
service's save path, verifies answers through the real API, and records the query plan and time of every
statement a request runs. Prints what it measured and rewrites its section of docs/benchmarks.md.

With ``--postgresql ADMIN_URL`` the lookup rows run again, in the same rounds, on PostgreSQL: the cached SQLite
database is moved by ``linksvc db copy`` (``bench/postgres.py``) into a database of the run's own, dropped at
the end. That copy is part of every such run: 2,094,429 rows (1,000,000 customers, 800,329 wallet lines,
100,000 campaigns, 194,091 restrictions) took 174 s on the 2-core development machine while other work ran on
it, about as long as building the SQLite file. Sampled with py-spy, the copying process was busy about a
quarter of the time: the PostgreSQL server's side of ``COPY`` (parsing the jsonb bodies, maintaining the six
indexes of ``customers`` and the four of ``wallet_lines``) is what it waits on, so ``storage/copy.py`` is kept
as it is. On PostgreSQL the service's lookup lane (``api.customers.lane.FastLookups``) declines and the
lookups go through the ordinary handler; the rows say so.
"""

from __future__ import annotations

import argparse
import random
import re
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from bench import data, load, plans, postgres, storefront_report
from bench import storefront_docs as docs
from linksvc.clock import iso, utcnow
from storage.campaigns import CampaignQuery, explain_list

API = load.API
CAMPAIGNS_PATH = f"{API}/campaigns?from=0&to=49&store_id={docs.BENCH_STORE}"
CODES = {country: code for country, code, _ in docs.COUNTRIES}
COMMAND = ".venv/bin/python -m bench.storefront"
ROUNDS = 2  # bare A, service B, bare A, service B


@dataclass(frozen=True)
class Sample:
    """A customer to look up: its id, phone digits, country, unexpired wallet lines and document number."""

    customer_id: str
    digits: str
    country: str
    live_lines: int
    document: str

    def query_phone(self, style: int) -> str:
        code = CODES[self.country]
        rest = self.digits[len(code):]
        return (f"+{self.digits}", self.digits, f"+{code} {rest[:3]} {rest[3:6]} {rest[6:]}",
                f"{code}-{rest[:3]}-{rest[3:]}")[style % 4]

    def path(self, style: int) -> str:
        return f"{API}/customers?phone={urllib.parse.quote(self.query_phone(style), safe='')}"

    def document_path(self) -> str:
        return f"{API}/customers?document_number={urllib.parse.quote(self.document, safe='')}"


def sample_customers(path: Path, count: int, seed: int = 3) -> list[Sample]:
    """``count`` customers with a phone and a document number, spread over the whole table (random rowids)."""
    with data.readonly(path) as conn:
        top = data.count(conn, "SELECT max(rowid) FROM customers")
        rowids = random.Random(seed).sample(range(1, top + 1), min(top, count * 2))
        now = iso(utcnow())
        found = []
        for start in range(0, len(rowids), 500):
            chunk = rowids[start:start + 500]
            found += conn.execute(
                "SELECT id, phone_digits, json_extract(body, '$.country'), (SELECT count(*) FROM wallet_lines w "
                "WHERE w.customer_id = c.id AND (w.expiration_date IS NULL OR w.expiration_date > ?)), document_number "
                f"FROM customers c WHERE rowid IN ({', '.join('?' for _ in chunk)}) AND phone_digits IS NOT NULL "
                "AND document_number IS NOT NULL",
                (now, *chunk)).fetchall()
    return [Sample(*row) for row in found[:count]]


# What a traced statement is, from its SQL (first match); the SQL itself is shown beside it.
KINDS = (("FROM access_tokens", "bearer token"), ("FROM campaign_versions", "campaign version (count cache)"),
         ("SELECT count(*) FROM campaigns", "campaign count"), ("FROM campaigns c WHERE", "campaign page"),
         ("FROM campaigns", "campaigns"), ("FROM customers", "customer lookup"),
         ("FROM wallet_lines", "wallet (unexpired lines, totals, rewards)"), ("FROM rewards", "reward of wallet lines"),
         ("FROM accounts", "account"))


def describe(sql: str) -> str:
    return next((name for marker, name in KINDS if marker in sql), "statement")


def query_plans(path: Path, sample: Sample) -> tuple[list[tuple[str, list[str]]], list[plans.Statement]]:
    """What real requests run and the plan and time of each statement: GET /campaigns twice (a cold, then
    a warm count cache, where the service has one) and GET /customers. The page query's plan comes from
    ``storage.campaigns.explain_list``; every other distinct statement is explained as traced."""
    requests = [("GET /campaigns, first", CAMPAIGNS_PATH), ("GET /campaigns, again", CAMPAIGNS_PATH),
                ("GET /customers?phone", sample.path(0)), ("GET /customers?document_number", sample.document_path())]
    traced = plans.traced(path, docs.SERVER_KEY, requests)
    conn = plans.reader(path)
    try:
        query = CampaignQuery(account_id=docs.ACCOUNT_ID, now=iso(utcnow()), store_id=docs.BENCH_STORE)
        page_sql, page_params = explain_list(query)
        found = [plans.explain(conn, "campaign page (storage.campaigns.explain_list)", page_sql, page_params)]
        seen: set[str] = set()
        for label, statements in traced:
            for sql in statements:
                if describe(sql) != "campaign page" and sql not in seen:
                    seen.add(sql)
                    found.append(plans.explain(conn, f"{describe(sql)} ({label})", sql))
        return [(label, [describe(sql) for sql in statements]) for label, statements in traced], found
    finally:
        conn.close()


def _expect(ok: bool, message: str) -> None:
    if not ok:
        raise SystemExit(f"verification failed: {message}")


def verify(server: load.Server, headers: dict[str, str], dataset: data.StoreSet,
           samples: list[Sample]) -> list[str]:
    """Check the answers through the real API before measuring; returns what was checked."""
    status, page = load.get_json(server.url(CAMPAIGNS_PATH), headers)
    _expect(status == 200, f"GET /campaigns answered {status}: {page}")
    items = page["data"]
    _expect(len(items) == 50, f"the page holds {len(items)} campaigns, not 50")
    _expect(page["count"] == dataset.store_matches, f"count {page['count']} != {dataset.store_matches}")
    _expect(all(c["stores"] is None or docs.BENCH_STORE in c["stores"] for c in items), "a campaign of another store")
    checked = [f"GET /campaigns: 50 items, count {page['count']:,} (= null stores + lists holding "
               f"{docs.BENCH_STORE}, counted directly), every item open to the store"]
    chosen = [s for s in samples if s.live_lines][:2] + [s for s in samples if not s.live_lines][:2]
    for style, sample in enumerate(chosen):
        status, body = load.get_json(server.url(sample.path(style)), headers)
        _expect(status == 200, f"lookup of {sample.query_phone(style)!r} answered {status}: {body}")
        found = body["data"]
        _expect(found["customer_id"] == sample.customer_id, f"{sample.query_phone(style)!r} found another customer")
        _expect(len(found["wallet"]["lines"]) == sample.live_lines, f"wallet of {sample.customer_id}")
        checked.append(f"GET /customers?phone={sample.query_phone(style)}: the expected customer, "
                       f"{sample.live_lines} unexpired wallet line(s)")
    for sample in chosen[:2]:
        status, body = load.get_json(server.url(sample.document_path()), headers)
        _expect(status == 200 and body["data"]["customer_id"] == sample.customer_id,
                f"lookup of document {sample.document!r} answered {status}: {body}")
        checked.append(f"GET /customers?document_number={sample.document}: the expected customer")
    status, _ = load.get_json(server.url(f"{API}/customers?phone=%2B999000111222"), headers)
    _expect(status == 404, f"an unknown phone answered {status}")
    checked.append("GET /customers?phone=+999000111222 (nobody's): 404")
    return checked


def held_counts(server: load.Server) -> dict[str, int]:
    """``linksvc_customer_lookups_total`` by answer (``held``, ``read``), summed over the workers: /metrics."""
    url = server.url("/metrics")
    with urllib.request.urlopen(url, timeout=30) as answer:
        text = answer.read().decode()
    counts = {"held": 0, "read": 0}
    for line in text.splitlines():
        match = re.match(r'linksvc_customer_lookups_total\{answer="(\w+)"\} ([0-9.e+]+)$', line)
        if match and match.group(1) in counts:
            counts[match.group(1)] = int(float(match.group(2)))
    return counts


def _drained(seconds: float) -> None:
    print(f"  the service answered the requests still queued in {seconds:.1f} s")


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.storefront", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--campaigns", type=int, default=100_000)
    parser.add_argument("--customers", type=int, default=1_000_000)
    load.wrk_options(parser, duration=20, warmup=5, connections=64)
    parser.add_argument("--phones", type=int, default=20_000, help="distinct phones the lookup load cycles through")
    parser.add_argument("--rebuild", action="store_true", help="build the database even when a cached one matches")
    parser.add_argument("--workers", type=int, nargs="+", choices=(1, 2), default=[1, 2],
                        help="the worker counts whose lookup rows are measured [1 2]")
    parser.add_argument("--lookups-only", action="store_true",
                        help="measure only the lookup rows (not GET /campaigns): for quick comparisons")
    postgres.add_argument(parser)
    load.output_options(parser, "300 campaigns, 2,000 customers, 1 s per row")
    args = parser.parse_args(argv)
    if args.smoke:
        args.campaigns, args.customers, args.phones, args.duration, args.warmup = 300, 2_000, 200, 1, 1
    if not 0 < args.duration <= 60 or not 0 <= args.warmup <= 30:
        parser.error("--duration must be 1-60 s and --warmup 0-30 s")
    return args


def warm_page_cache(path: Path) -> float:
    """Read the database file once, so that the measurement sees a served database (whose pages live in
    the operating system's cache), not the disk of a machine that evicted them."""
    started = time.perf_counter()
    with path.open("rb") as data:
        while data.read(16 * 1024 * 1024):
            pass
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    load.wrk_binary()  # fail early, with the install hint
    # Slow endpoints queue 64 requests deep: a long timeout keeps their latencies in the figures.
    settings = load.Load(args.connections, args.threads, args.duration, args.warmup, timeout=30)
    dataset = data.ensure_storefront(args.campaigns, args.customers, rebuild=args.rebuild)
    compared = data.check_storefront(dataset.path, args.campaigns)
    print(f"rows identical to the save path's: {compared} documents compared")
    samples = sample_customers(dataset.path, args.phones)
    print(f"database file read into the page cache in {warm_page_cache(dataset.path):.1f} s")
    started = time.perf_counter()
    per_request, statements = query_plans(dataset.path, next(s for s in samples if s.live_lines))
    print(f"query plans and statement timings (requests traced in-process): {time.perf_counter() - started:.1f} s")
    rounds: list[dict[str, load.Result]] = []
    held: dict[str, list[float]] = {}
    checked: list[str] = []
    phone_paths = [s.path(i) for i, s in enumerate(samples)]
    document_paths = [s.document_path() for s in samples]
    env = {**load.DEFAULTS, "LINKSVC_LOAD_DEMO": "0"}

    def service_rows(found: dict[str, load.Result], workers: int, first: bool, url: str | None = None) -> None:
        """The lookup rows of ``workers`` workers (on PostgreSQL at ``url``, if given: labelled so; the campaign
        row is measured on SQLite only)."""
        store = postgres.SUFFIX if url else ""
        with load.running(f"linksvc{store}", load.serve(dataset.path, "--workers", str(workers)),
                          env={**env, **postgres.environment(url)}) as service:
            token = load.authorize(service, docs.SERVER_KEY)
            headers = {"Authorization": f"Bearer {token}"}
            if first and workers == min(args.workers):
                found_ok = verify(service, headers, dataset, samples)
                checked.extend([f"PostgreSQL: the same {len(found_ok)} checks passed"] if url else found_ok)
                print(f"verified through the API{store}:\n  " + "\n  ".join(found_ok))
                if not args.lookups_only and not url:
                    print("measuring GET /campaigns ...")
                    found["campaigns"] = load.measure(service, [CAMPAIGNS_PATH], headers, settings, _drained)
            for kind, paths in (("phone", phone_paths), ("document", document_paths)):
                print(f"measuring GET /customers?{'phone' if kind == 'phone' else 'document_number'}=... with "
                      f"{workers} worker(s){store} ...")
                before = held_counts(service)
                found[f"{kind} {workers}{store}"] = load.measure(service, paths, headers, settings, _drained)
                after = held_counts(service)
                answered = sum(after.values()) - sum(before.values())
                if answered and not url:
                    held.setdefault(f"{kind} {workers}", []).append((after["held"] - before["held"]) / answered)
                    print(f"  {held[f'{kind} {workers}'][-1]:.0%} of its 200s given again from held answers")

    with postgres.copied(args.postgresql, dataset.path) as pg:  # dropped at the end, even when the run fails
        for number in range(ROUNDS):  # A B A B: the bare handler, then the service, twice
            found: dict[str, load.Result] = {}
            with load.running("bare aiohttp handler", load.BASELINE) as bare:
                print(f"round {number + 1}: measuring the bare aiohttp handler ...")
                found["bare"] = load.measure(bare, ["/bare"], {}, settings)
            for workers in sorted(set(args.workers)):
                service_rows(found, workers, number == 0)
                if pg:
                    service_rows(found, workers, number == 0, pg.url)
            rounds.append(found)
    run = storefront_report.Run(
        machine=load.machine(), command=COMMAND, load=settings, dataset=dataset, compared=compared,
        phones=len(samples), checked=checked, rounds=rounds, statements=statements, per_request=per_request,
        revision=load.revision(), postgresql=pg, held=held)
    print(storefront_report.summary(run))
    load.publish("storefront", storefront_report.section(run), args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
