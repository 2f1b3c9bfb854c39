"""Behavior events under load (issue 5): ``.venv/bin/python -m bench.events``.

Accepted events per second of ``POST /api/storefront/v1/behavior/events`` (one PURCHASE per request) and of
``.../events/bulk`` (PURCHASE and custom events), with wrk on 127.0.0.1 over the demo data (its customers,
its active custom event type, the stores and products its BEHAVIOR campaigns name, so that purchases earn
rewards), beside the bare aiohttp handler (``GET /bare`` of ``bench/baseline.py``) in the same run.

Each service row is a fresh ``linksvc serve`` over a fresh copy of a SQLite file seeded once per run with the
demo's resources (``linksvc seed``; without its week of activity and with its connections off: ingest is
measured, not forwarding), with ``LINKSVC_DB_SYNCHRONOUS=FULL``. With ``--postgresql ADMIN_URL`` every service
row runs again on PostgreSQL: the seeded file's copy moved by ``linksvc db copy`` into a new database per
service run (``bench/postgres.py``, a few seconds each, outside the measurement), dropped after it. Every
order_id is new (run, wrk thread, per-thread counter). The Lua script (``bench/events_lua.py``) counts 202
answers and the ``accepted`` of bulk 200 answers; after the measured phase wrk sends nothing (``delay()``)
for a tail, then each run is settled: one more event is posted and answered, so everything queued before it
on the write queue is committed. After SIGTERM the rows of ``events`` are compared with the events answered
as accepted. Rounds of A B (A: the bare handler, B:
each service row, with 1 and 2 workers by default), figures the medians of the rounds. Rewrites its section
of docs/benchmarks.md unless ``--no-docs``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench import data, events_lua, load, postgres
from linksvc.settings import REPO_ROOT

COMMAND = ".venv/bin/python -m bench.events"
API = load.API
# Every service run starts from a copy of the seeded file (:func:`seeded`): nothing to load at start.
SERVICE_ENV = {**load.DEFAULTS, "LINKSVC_LOAD_DEMO": "0", "LINKSVC_DB_SYNCHRONOUS": "FULL"}
ORDER = "@ORDER@"  # where a body template's order_id goes
SINGLE_SHARE = 0.25  # events/s of one PURCHASE a request, over the bare handler's requests/s (issue 33)
BULK_SHARE = 0.08  # events/s of 500 events a request, over the bare handler's requests/s (issue 33)
BULK_GOAL = 17_000  # events/s, whatever the machine (issue 5)
SETTLE_S = 900  # at most this long for the backlog of a run to be committed


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    method: str
    path: str
    expect: int  # the status of an accepted answer
    per_request: int  # events per request
    variants: list[str]  # request bodies, ORDER where each order_id goes (none for GET)
    connections: int = 0  # 0: the load's


@dataclass(frozen=True)
class Result:
    p50_us: int
    p99_us: int
    socket_errors: int
    timeouts: int
    sent: int
    answered: int
    answered_window: int  # answers received within the measured phase
    events: int  # events answered as accepted, whenever the answer came
    events_window: int  # of those, answered within the measured phase
    events_first: int  # ... within its first half
    short: int  # accepted answers with fewer events than sent
    other: int  # any other answer
    measure_s: int
    per_request: int
    cpu_s: float = 0.0  # server CPU (user + system) from the start of the run to the end of its settling

    def per_s(self, n: float) -> float:
        return n / self.measure_s

    @property
    def cpu_per_event(self) -> str:
        """Over every event of the run: answered, or still unanswered when wrk stopped (committed by settling)."""
        processed = self.events + (self.sent - self.answered) * self.per_request
        return f"{self.cpu_s * 1e6 / processed:,.0f} µs" if processed else "-"


@dataclass(frozen=True)
class Accounting:
    label: str
    answered: int  # events answered as accepted: probes, settles and every wrk run
    in_flight: int  # requests wrk sent and saw no answer to (stored all the same when accepted)
    per_request: int
    stored: int  # rows of events after SIGTERM
    purchases: int
    earned: int  # events that issued at least one reward
    issues: int  # ledger entries of kind issue
    most_purchases: int  # of one customer
    most_lines: int  # wallet lines of one customer
    exit_code: int
    committed: int = 0  # on PostgreSQL, transactions of the database committed ...
    rolled_back: int = 0  # ... and rolled back (a serializable unit refused is run again)

    def verdict(self) -> str:
        if self.stored == self.answered and self.in_flight == 0:
            return "equal"
        explained = self.stored == self.answered + self.in_flight * self.per_request
        return (f"**not equal**: {self.stored - self.answered:,} more stored, "
                f"{'exactly' if explained else '**not**'} the events of the {self.in_flight} requests still "
                "unanswered when wrk stopped")


def _event(rng: random.Random, account: dict[str, Any], kind: str, i: int) -> dict[str, Any]:
    """A PURCHASE or a custom event of demo customer ``i`` (by id or by document number)."""
    customers = account["customers"]
    customer, by_id = customers[i % len(customers)], (i // len(customers)) % 2 == 0
    who = {"customer_id": customer["id"]} if by_id else {"document_number": customer["document_number"]}
    attribution = {"utm_source": rng.choice(["newsletter", "instagram", "google"]), "utm_medium": "cpc",
                   "utm_campaign": f"bench-{rng.randint(1, 9)}", "tracking_id": f"trk-{rng.randint(1, 10**6)}"}
    if kind != "PURCHASE":
        return {"type": kind, **who, "properties": {"screen": rng.choice(["home", "menu"])}, "attribution": attribution}
    behavior = [c for c in account["campaigns"] if c["type"] == "BEHAVIOR"]
    skus = sorted({p for c in account["campaigns"] for p in c.get("products") or []})
    products = [{"sku": sku, "quantity": rng.randint(1, 2), "price": rng.choice([4.5, 5.5, 7.0, 12.0])}
                for sku in rng.sample(skus, rng.randint(1, 3))]
    return {"type": "PURCHASE", "order_id": ORDER, **who, "currency": "COP",
            "value": sum(p["quantity"] * p["price"] for p in products),
            "store_id": rng.choice(sorted({s for c in behavior for s in c.get("stores") or []})),
            "channel_id": rng.choice(sorted({s for c in behavior for s in c.get("channels") or []})),
            "products": products, "attribution": attribution}


def scenarios(batch: int, bulk_connections: int) -> tuple[Scenario, Scenario, Scenario, str]:
    """(bare, single, bulk, the custom event type), from the demo fixture."""
    account = data.demo_account()
    custom = next(t["name"] for t in account["custom_event_types"] if t["active"])
    rng = random.Random(5)
    single = [json.dumps(_event(rng, account, "PURCHASE", i), separators=(",", ":")) for i in range(24)]
    # Bulk: 3 purchases for every 2 custom events, customers in turn; one of 4 batches per request.
    bulk = [json.dumps({"events": [_event(rng, account, "PURCHASE" if i % 5 < 3 else custom, i)
                                   for i in range(batch)]}, separators=(",", ":")) for _ in range(4)]
    return (Scenario("bare", "bare aiohttp handler, GET /bare", "GET", "/bare", 200, 1, []),
            Scenario("single", "POST /behavior/events, one PURCHASE", "POST", f"{API}/behavior/events", 202, 1,
                     single),
            Scenario("bulk", f"POST /behavior/events/bulk, {batch} events", "POST",
                     f"{API}/behavior/events/bulk", 200, batch, bulk, bulk_connections), custom)


def post_json(server: load.Server, path: str, body: str, token: str) -> tuple[int, Any]:
    return load.post_json(server.url(path), body, {"Authorization": f"Bearer {token}"}, SETTLE_S)


def _cpu(server: load.Server) -> float:
    """CPU seconds (user + system) of the server and of its worker processes (with ``--workers N`` the server
    only supervises them)."""
    return server.cpu_seconds() + sum(load.proc_cpu(pid) for pid in load.children(server.process.pid))


class Runner:
    """wrk runs; each script has a new run number, so order_ids never repeat."""

    def __init__(self, directory: Path, settings: load.Load, tail: int) -> None:
        self.directory, self.load, self.tail, self.runs = directory, settings, tail, 0
        self.odd = directory / "odd.txt"
        self.copies: list[postgres.Copy] = []  # the databases of the service runs on PostgreSQL

    def wrk(self, server: load.Server, s: Scenario, headers: dict[str, str], seconds: int) -> Result:
        self.runs += 1
        script = self.directory / f"run{self.runs}.lua"
        script.write_text(events_lua.script([v.split(ORDER) for v in s.variants], s.method, s.path, s.expect,
                                            s.per_request, seconds, f"bench-{self.runs}-", self.odd, self.runs,
                                            headers))
        total = seconds + (self.tail if s.method == "POST" else 0)
        found = load.run_wrk(server.url(""), script, total, events_lua.MARK, s.connections or self.load.connections,
                             self.load.threads, self.load.timeout)
        return Result(**found, measure_s=seconds, per_request=s.per_request)

    def measure(self, server: load.Server, s: Scenario, headers: dict[str, str],
                settle: Callable[[load.Server], object] = load.drain) -> list[Result]:
        """The warm-up run (if any) and the measured run (last), each followed by ``settle(server)``."""
        made = []
        for seconds in [self.load.warmup] * (self.load.warmup > 0) + [self.load.duration]:
            cpu = _cpu(server)
            result = self.wrk(server, s, headers, seconds)
            settle(server)
            made.append(replace(result, cpu_s=_cpu(server) - cpu))
        return made


# An event that issued a reward: a non-empty ``issued`` list in its effects (TEXT on SQLite, jsonb on PostgreSQL).
ISSUED = {"sqlite": "json_array_length(effects, '$.issued') > 0",
          "postgresql": "CASE jsonb_typeof(effects -> 'issued') WHEN 'array' "
                        "THEN jsonb_array_length(effects -> 'issued') ELSE 0 END > 0"}


def stored(db: Path, url: str | None = None) -> dict[str, int]:
    """Of the demo account: events, purchases, events that issued a reward, ledger issue entries, and the
    most purchases and wallet lines one customer has; in the SQLite file ``db``, or on PostgreSQL at ``url``."""
    events = "SELECT count(*) FROM events WHERE account_id = ?"
    most = ("SELECT max(n) FROM (SELECT count(*) AS n FROM {} WHERE account_id = ? {} GROUP BY customer_id) "
            "AS per_customer")
    queries = {"stored": events, "purchases": events + " AND type = 'PURCHASE'",
               "earned": f"{events} AND {ISSUED['postgresql' if url else 'sqlite']}",
               "issues": "SELECT count(*) FROM ledger_entries WHERE account_id = ? AND kind = 'issue'",
               "most_purchases": most.format("events", "AND type = 'PURCHASE'"),
               "most_lines": most.format("wallet_lines", "")}
    if url:
        found = {name: postgres.count(url, sql.replace("?", "$1"), data.DEMO_ACCOUNT) for name, sql in queries.items()}
        transactions = "SELECT xact_{} FROM pg_stat_database WHERE datname = current_database()"
        return found | {"committed": postgres.count(url, transactions.format("commit")),
                        "rolled_back": postgres.count(url, transactions.format("rollback"))}
    with data.readonly(db) as conn:
        return {name: data.count(conn, sql, data.DEMO_ACCOUNT) for name, sql in queries.items()}


def seeded(directory: Path) -> Path:
    """A SQLite file holding the demo's resources (``data.ingest_only_demo``, loaded by ``linksvc seed``): every
    service run starts from a copy of it, on SQLite or on PostgreSQL."""
    path = directory / "seeded.db"
    done = subprocess.run([sys.executable, "-m", "linksvc", "seed", str(data.ingest_only_demo(directory)), "--db",
                           str(path)], cwd=REPO_ROOT, env={**os.environ, **load.DEFAULTS}, capture_output=True,
                          text=True)
    if done.returncode != 0:
        raise SystemExit(f"linksvc seed failed: {done.stderr[-2000:]}")
    return path


def row_label(s: Scenario, workers: int, admin: str | None = None) -> str:
    """The label of a service row, ``on PostgreSQL`` when measured there."""
    label = f"{s.name}, {workers} worker{'s' if workers > 1 else ''}"
    return postgres.label(label) if admin else label


def service_row(runner: Runner, s: Scenario, single: Scenario, seed: Path, workers: int = 1, round_: int = 1,
                admin: str | None = None) -> tuple[Result, Accounting]:
    """A fresh service (``workers`` processes) on a fresh copy of ``seed`` (on PostgreSQL through ``admin``, when
    given, in a database dropped afterwards): a request of ``s`` checked, warm-up and measured runs each settled
    by an event posted after it and awaited (the write queue is first in, first out: what was queued before is
    committed)."""
    db = data.copy_database(seed, runner.directory / f"events-{s.name}-w{workers}-r{round_}.db")
    with postgres.copied(admin, db) as pg:
        runner.copies += [pg] if pg else []
        return _service_row(runner, s, single, db, workers, round_, pg.url if pg else None)


def _service_row(runner: Runner, s: Scenario, single: Scenario, db: Path, workers: int, round_: int,
                 url: str | None) -> tuple[Result, Accounting]:
    probes = 0
    env = {**SERVICE_ENV, **postgres.environment(url)}
    with load.service(f"linksvc ({s.name})", db, env, "--workers", str(workers)) as service:
        token = load.authorize(service, data.DEMO_SERVER_KEY)

        def probe(scenario: Scenario, server: load.Server = service) -> None:
            nonlocal probes
            probes += 1
            pieces = scenario.variants[probes % len(scenario.variants)].split(ORDER)
            body = "".join(f"{p}bench-probe-{probes}-{i}" for i, p in enumerate(pieces[:-1])) + pieces[-1]
            status, answer = post_json(server, scenario.path, body, token)
            if (answer["data"].get("accepted", 1) if status == scenario.expect else 0) != scenario.per_request:
                raise SystemExit(f"{scenario.method} {scenario.path} answered {status}: {json.dumps(answer)[:3000]}")
            load.drain(server)

        probe(s)
        print(f"measuring {s.title} ...")
        made = runner.measure(service, s, {"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
                              settle=lambda server: probe(single, server))
        exit_code = load.stop(service)
    answered = s.per_request + (probes - 1) + sum(r.events for r in made)
    label = f"{s.title}, {row_label(s, workers, url)[len(s.name) + 2:]}, round {round_}"
    return made[-1], Accounting(label=label, answered=answered, in_flight=sum(r.sent - r.answered for r in made),
                                per_request=s.per_request, exit_code=exit_code, **stored(db, url))


def _n(x: float) -> str:
    return f"{x:,.1f}" if x < 10 else f"{x:,.0f}"


def _ms(us: float, answered: int = 1) -> str:
    return "-" if not answered else f"{us / 1000:.1f} ms" if us >= 1000 else f"{us / 1000:.2f} ms"


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


@dataclass(frozen=True)
class Row:
    """One row of the table: the same measurement in every round (A B A B: bare, service, bare, service)."""

    label: str
    rounds: list[Result]

    def rps(self) -> float:
        return _median([r.per_s(r.answered_window) for r in self.rounds])

    def eps(self) -> float:
        return _median([r.per_s(r.events_window) for r in self.rounds])

    def cells(self, bare: float) -> list[str]:
        rounds = self.rounds
        cpu = [r.cpu_per_event for r in rounds]
        return [self.label, _n(self.rps()), _n(self.eps()),
                " / ".join(_n(r.per_s(r.events_window)) for r in rounds), f"{self.eps() / bare:.2%}",
                _ms(_median([r.p50_us for r in rounds]), sum(r.answered for r in rounds)),
                _ms(_median([r.p99_us for r in rounds]), sum(r.answered for r in rounds)),
                " / ".join(cpu), str(sum(r.timeouts for r in rounds))]


def goals(rows: list[Row], bare: float) -> list[str]:
    """Each goal against each worker count."""
    lines = []
    for row in rows:
        if row.label.startswith("single"):
            share = row.rps() / bare
            lines.append(f"{row.label}: {share:.2%} of the bare handler's requests/s, goal {SINGLE_SHARE:.0%}: "
                         f"{'met' if share >= SINGLE_SHARE else '**not met**'}")
        elif row.label.startswith("bulk"):
            share = row.eps() / bare
            lines.append(f"{row.label}: {share:.2%} of the bare handler's requests/s in events/s, goal "
                         f"{BULK_SHARE:.0%}: {'met' if share >= BULK_SHARE else '**not met**'}; {row.eps():,.0f} "
                         f"events/s, goal {BULK_GOAL:,}: {'met' if row.eps() >= BULK_GOAL else '**not met**'}")
    return lines


def section(rows: list[Row], accounts: list[Accounting], settings: load.Load, args: argparse.Namespace,
            custom: str, pg: postgres.Copy | None = None) -> tuple[str, list[str]]:
    """(the docs section, the summary lines); ``pg``: a database of the rows on PostgreSQL, if any."""
    bare = next(row for row in rows if row.label.startswith("bare")).rps()
    table = [row.cells(bare) for row in rows]
    lines = goals(rows, bare)
    lines += [f"{row.label}: **{sum(r.other for r in row.rounds):,} answers other than accepted** (the first of "
              "each wrk thread and run are printed with the run's output)"
              for row in rows if any(r.other for r in row.rounds)]
    lines += [f"{a.label}: {a.answered:,} events answered as accepted, {a.stored:,} stored ({a.verdict()}); "
              f"{a.purchases:,} purchases, {a.earned:,} events issued a reward ({a.issues:,} ledger issue entries); "
              f"at the end one customer had up to {a.most_purchases:,} purchases and {a.most_lines:,} wallet lines; "
              + (f"PostgreSQL committed {a.committed:,} transactions and rolled back {a.rolled_back:,} (serializable "
                 "units refused and run again, among others); " if a.committed else "") +
              f"exit code {a.exit_code}" for a in accounts]
    workers = " and ".join(str(w) for w in args.workers)
    text = "\n".join([
        "## Behavior events (issue 5)", "",
        f"Command: `{COMMAND}` (options: `--help`; {load.revision()}).", "",
        f"Machine: {load.machine().line()}.", "",
        f"Load: wrk on 127.0.0.1, {settings.connections} connections ({args.bulk_connections} for bulk: "
        f"{args.bulk_connections} × {args.batch} events in flight), {settings.threads} threads, {settings.warmup} s "
        f"warm-up then {settings.duration} s measured per run, in {args.rounds} rounds of A B (A: the bare handler, "
        f"B: every service row), A B A B, each figure the median of its rounds (the events/s of each round "
        f"shown too). For the service each run ends with a {args.tail} s tail "
        "where wrk "
        "sends nothing (Lua `delay()`) so that what is in flight is answered and counted, then one more event is "
        "posted and awaited, so that the run's backlog is committed before the next. Each service run is a fresh "
        f"`linksvc serve --workers N` (N = {workers}) over a fresh copy of a SQLite file where the demo's resources "
        "(`fixtures/demo.json`) were loaded once for the run (`linksvc seed`), with the default settings "
        "(the access log on, written to a file) and "
        "`LINKSVC_DB_SYNCHRONOUS=FULL` (the default): every event is committed and synced to disk before its "
        "answer. Reference: the bare aiohttp "
        "handler (`bench/baseline.py`, one process, no middleware), `GET /bare` answering a fixed small JSON body "
        "(the baseline has no POST route, so the reference is a GET without a body); share of bare = events/s "
        "over the bare handler's median requests/s (for single events the same as requests/s; a bulk request "
        "carries 500 events, so its share is of the events it stores, as issue 33 sets the bulk bar).", "",
        "Data: the demo account's SERVER key. Single: one PURCHASE per request, one of 24 bodies at random, a new "
        "`order_id` per request (run, wrk thread, per-thread counter), one of the 6 demo customers by "
        "`customer_id` or `document_number`, 1-3 of the demo campaigns' SKUs, a store and a channel its BEHAVIOR "
        f"campaigns name, currency COP, attribution (utm_*, tracking_id). Bulk: {args.batch} events per request, "
        f"3 PURCHASE for every 2 `{custom}` (the demo's active custom event type), the customers in turn, one of "
        "4 batches at random with new order_ids. Events/s = events answered as accepted (202s; the `accepted` of "
        "each bulk 200) within the measured phase / its length; latency is wrk's per "
        "request; server CPU (user+system, every process of the service) is from the start of a run to the end of "
        "its settling, per event of the run (answered, or unanswered when wrk stopped and committed while "
        "settling), per round. Each service run starts with one "
        "request of its kind through the real server, checked (202, or 200 with every event accepted).", "",
        load.table(["row", "requests/s", "events/s", "events/s per round", "share of bare", "p50", "p99",
                    "server CPU per event", "timeouts"], table), "",
        *([pg.note(" (a new database for each service run, as each SQLite row has a new copy of the seeded file); "
                   "server CPU counts the service's processes only, not the PostgreSQL server's, which commits the "
                   "events there."), ""] if pg else []),
        "Goals, and per service process the events answered as accepted (the Lua `response()` and the probes) "
        "against the rows of `events` counted after SIGTERM:", "", *[f"- {x}." for x in lines],
    ])
    return text, lines


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.events", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    load.wrk_options(parser, duration=15, warmup=3, connections=64,
                     connections_help="connections of the single and bare rows")
    parser.add_argument("--tail", type=int, default=5, help="seconds wrk waits for answers after a service run [5]")
    parser.add_argument("--bulk-connections", type=int, default=8, help="connections of the bulk row [8]")
    parser.add_argument("--timeout", type=int, default=30, help="seconds before wrk counts a timeout [30]")
    parser.add_argument("--batch", type=int, default=500, help="events per bulk request, at most 1000 [500]")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2],
                        help="worker counts of the service, a row each [1 2]")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of A B (bare, then the service rows) [2]")
    postgres.add_argument(parser)
    load.output_options(parser, "1 s per row, 10 events per bulk request, one round, 1 worker")
    args = parser.parse_args(argv)
    if args.smoke:
        args.duration, args.warmup, args.tail, args.batch, args.rounds, args.workers = 1, 0, 1, 10, 1, [1]
    if not (0 < args.duration <= 120 and 0 <= args.warmup <= 60 and 1 <= args.tail <= 60 and 1 <= args.batch <= 1000
            and 1 <= args.rounds <= 5 and all(1 <= w <= 8 for w in args.workers)):
        parser.error("--duration must be 1-120 s, --warmup 0-60 s, --tail 1-60 s, --batch 1-1000, --rounds 1-5, "
                     "--workers 1-8")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    load.wrk_binary()
    settings = load.Load(args.connections, args.threads, args.duration, args.warmup, args.timeout)
    bare, single, bulk, custom = scenarios(args.batch, args.bulk_connections)
    stores = [None, args.postgresql] if args.postgresql else [None]
    labels = ["bare"] + [row_label(s, w, admin) for w in args.workers for admin in stores for s in (single, bulk)]
    found: dict[str, list[Result]] = {label: [] for label in labels}
    accounts: list[Accounting] = []
    with tempfile.TemporaryDirectory(prefix="bench-events-") as tmp:
        runner = Runner(Path(tmp), settings, args.tail)
        seed = seeded(runner.directory)
        for round_ in range(1, args.rounds + 1):
            with load.running("bare handler", load.BASELINE) as server:  # A
                print(f"round {round_}: measuring the bare handler ...")
                found["bare"].append(runner.measure(server, bare, {})[-1])
            for workers in args.workers:  # B
                for admin in stores:
                    for s in (single, bulk):
                        print(f"round {round_}: {workers} worker(s){postgres.SUFFIX if admin else ''}")
                        result, acc = service_row(runner, s, single, seed, workers, round_, admin)
                        found[row_label(s, workers, admin)].append(result)
                        accounts.append(acc)
        odd = runner.odd.read_text().strip() if runner.odd.is_file() else ""
    rows = [Row(label, found[label]) for label in labels]
    text, lines = section(rows, accounts, settings, args, custom, runner.copies[0] if runner.copies else None)
    for row in rows:
        for n, r in enumerate(row.rounds, 1):
            print(f"  {row.label:18} r{n} {r.per_s(r.answered_window):9,.0f} req/s {r.per_s(r.events_window):9,.0f} "
                  f"events/s p50 {_ms(r.p50_us, r.answered)} p99 {_ms(r.p99_us, r.answered)} sent {r.sent} "
                  f"answered {r.answered} timeouts {r.timeouts} other {r.other} short {r.short} "
                  f"socket errors {r.socket_errors} cpu/event {r.cpu_per_event}")
    print("\n".join(lines))
    if odd:
        print(f"unexpected answers (the first of each wrk thread and run):\n{odd[:6000]}")
    load.publish("events", text, args)
    return 0 if all(a.verdict() == "equal" for a in accounts) and not odd else 1


if __name__ == "__main__":
    raise SystemExit(main())
