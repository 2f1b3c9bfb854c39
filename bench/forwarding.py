"""Forwarding of accepted events to webhooks (issue 6): ``.venv/bin/python -m bench.forwarding``.

The receiver (``--receiver --port P``, its own aiohttp process) answers 200 to every POST at once (unless
held) and records arrival time, ``webhook-id`` and ``data.id``; its baseline is wrk POSTing ~1 KB to it.
Per number of webhook connections (1, 4): a fresh ``linksvc serve`` over an empty database; throughput =
a bulk-loaded backlog (receiver held meanwhile) drained, deliveries / (release to last arrival); delay =
single events at a steady rate, receiver arrival minus the event's ``received_at`` (and minus its 202).
After SIGTERM every delivery row is checked against the receiver's records. Rewrites its section of
docs/benchmarks.md unless ``--no-docs``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from bench import data, load

COMMAND = ".venv/bin/python -m bench.forwarding"
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
API = load.API
# A long delivery timeout: the first deliveries wait at the held receiver while the backlog is loaded.
SERVICE_ENV = {**load.DEFAULTS, "LINKSVC_LOAD_DEMO": "1", "LINKSVC_ALLOW_PRIVATE_DESTINATIONS": "1",
               "LINKSVC_DB_SYNCHRONOUS": "FULL", "LINKSVC_DELIVERY_TIMEOUT_SECONDS": "120"}
# ~1 KB, shaped like an event.accepted webhook: the receiver parses it as it parses the real ones.
BASELINE_BODY = json.dumps({"type": "event.accepted", "timestamp": "2025-01-01T00:00:00.000000Z", "data": {
    "id": "6c1f0b8e-5a2d-4e3b-9f47-b3c2d1e0a001", "type": "app_open", "customer_id": "bench-customer",
    "properties": {"screen": "home", "padding": "x" * 760},
    "attribution": {"utm_source": "bench", "utm_medium": "cpc", "utm_campaign": "forwarding"}}})
LUA = """wrk.method = "POST"
wrk.body = [==[%s]==]
wrk.headers["Content-Type"] = "application/json"
wrk.headers["webhook-id"] = "msg_wrk_baseline"
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('%s{"requests": %%d, "duration_us": %%d, "p50_us": %%d, "p99_us": %%d, "errors": %%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.status + e.timeout))
end
"""


RECORDS = web.AppKey("records", list)
GATE = web.AppKey("gate", asyncio.Event)


async def _hook(request: web.Request) -> web.Response:
    body = await request.read()
    await request.app[GATE].wait()
    arrived = time.time()
    try:
        event_id = json.loads(body)["data"]["id"]
    except (ValueError, KeyError, TypeError):
        event_id = None
    request.app[RECORDS].append((arrived, request.headers.get("webhook-id"), event_id))
    return web.Response(status=200)


async def _records(request: web.Request) -> web.Response:
    start = int(request.query.get("from", "0"))
    return web.json_response({"records": request.app[RECORDS][start:]})


async def _control(request: web.Request) -> web.Response:
    """/reset forgets the records, /hold keeps POSTs waiting, /release answers them (and all after); each
    answers the time and the number of records."""
    action = request.match_info["action"]
    if action == "reset":
        request.app[RECORDS].clear()
    getattr(request.app[GATE], "clear" if action == "hold" else "set")()
    return web.json_response({"at": time.time(), "count": len(request.app[RECORDS])})


def run_receiver(port: int) -> None:
    app = web.Application()
    app[RECORDS], app[GATE] = [], asyncio.Event()
    app[GATE].set()
    app.router.add_post("/hook", _hook)
    app.router.add_post("/{action:reset|hold|release}", _control)
    app.router.add_get("/records", _records)
    app.router.add_get("/healthz", _records)
    web.run_app(app, host=load.HOST, port=port, access_log=None, print=None)


def call(url: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    """POST ``body`` as JSON (GET when None); (status, parsed answer)."""
    return load.post_json(url, body, headers)


def expect(what: str, status: int, answer: Any, wanted: int) -> Any:
    if status != wanted:
        raise SystemExit(f"{what} answered {status}: {str(answer)[:2000]}")
    return answer


def records(receiver: load.Server, start: int = 0) -> list[tuple[float, str | None, str | None]]:
    status, answer = call(receiver.url(f"/records?from={start}"))
    return [(float(t), w, e) for t, w, e in expect("receiver /records", status, answer, 200)["records"]]


def baseline(receiver: load.Server, seconds: int, connections: int, directory: Path) -> dict[str, float]:
    """wrk POSTing to the receiver; requests/s, p50, p99, errors and the receiver's CPU share."""
    script = directory / "receiver.lua"
    script.write_text(LUA % (BASELINE_BODY, load.MARK))
    cpu = receiver.cpu_seconds()
    result = load.run_wrk(receiver.url("/hook"), script, seconds, load.MARK, connections)
    cpu = receiver.cpu_seconds() - cpu
    wall = result["duration_us"] / 1e6
    return {"rps": result["requests"] / wall, "p50_ms": result["p50_us"] / 1000, "p99_ms": result["p99_us"] / 1000,
            "errors": result["errors"], "cpu": cpu / wall}


def event(i: int, customers: int, tag: str) -> dict[str, Any]:
    return {"type": "app_open", "external_id": f"bench-{i % customers}", "properties": {"screen": "home", "n": i},
            "attribution": {"utm_source": "bench", "utm_medium": "cpc", "utm_campaign": tag}}


def setup(service: load.Server, receiver: load.Server, connections: int, customers: int) -> str:
    """``connections`` webhooks to the receiver and ``customers`` bench customers; the SERVER token."""
    admin = service.url(f"/api/admin/v1/accounts/{data.DEMO_ACCOUNT}/connections")
    for k in range(connections):
        expect("create connection", *call(admin, {
            "name": f"bench webhook {k}", "destination": "webhook", "enabled": True, "forward_events": True,
            "forward_purchases": True, "event_types": ["PURCHASE", "app_open"],
            "config": {"endpoint_url": receiver.url("/hook"), "secret": SECRET}}, load.ADMIN), 201)
    token = load.authorize(service, data.DEMO_SERVER_KEY)
    for first in range(0, customers, 500):
        people = [{"external_id": f"bench-{i}", "name": f"Bench customer {i}"}
                  for i in range(first, min(customers, first + 500))]
        answer = expect("migrate", *call(service.url(f"{API}/customers/migrate"), {"customers": people},
                                         {"Authorization": f"Bearer {token}"}), 200)
        if answer["data"]["created"] != len(people):
            raise SystemExit(f"migrate: {answer}")
    return token


def query(db: Path, sql: str) -> list[Any]:
    with data.readonly(db, timeout=30) as conn:
        return conn.execute(sql).fetchall()


def settle(db: Path, deadline_s: float) -> int:
    """Waits until no delivery is pending (outcomes are recorded after the POST arrived); the pending left."""
    deadline = time.monotonic() + deadline_s
    while (pending := query(db, "SELECT count(*) FROM deliveries WHERE state = 'pending'")[0][0]) and \
            time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)  # a late duplicate would arrive now
    return pending


@dataclass(frozen=True)
class Throughput:
    events: int
    deliveries: int  # received by the receiver
    load_s: float  # posting the events in bulk (receiver held)
    window_s: float  # release to last arrival
    service_cpu: float  # share of one core, release to settled
    receiver_cpu: float
    stuck: int  # still pending after the settle deadline

    @property
    def per_s(self) -> float:
        return self.deliveries / self.window_s if self.window_s > 0 else 0.0


def throughput(service: load.Server, receiver: load.Server, db: Path, token: str,
               args: argparse.Namespace) -> Throughput:
    start = int(call(receiver.url("/hold"), {})[1]["count"])
    began = time.time()
    for first in range(0, args.events, 1000):
        batch = [event(i, args.customers, "throughput") for i in range(first, min(args.events, first + 1000))]
        status, answer = call(service.url(f"{API}/behavior/events/bulk"), {"events": batch},
                              {"Authorization": f"Bearer {token}"})
        if status != 200 or answer["data"]["accepted"] != len(batch):
            raise SystemExit(f"bulk answered {status}: {str(answer)[:2000]}")
    loaded = time.time()
    cpu = service.cpu_seconds(), receiver.cpu_seconds()
    released = float(call(receiver.url("/release"), {})[1]["at"])
    stuck = settle(db, args.settle)
    wall = time.time() - released - 1.0  # settle() waits 1 s for late duplicates
    used = service.cpu_seconds() - cpu[0], receiver.cpu_seconds() - cpu[1]
    arrivals = [r[0] for r in records(receiver, start)]
    window = max(arrivals) - released if arrivals else 0.0
    return Throughput(args.events, len(arrivals), loaded - began, window, used[0] / wall, used[1] / wall, stuck)


@dataclass(frozen=True)
class Delay:
    events: int
    rate: float  # achieved
    deliveries: int
    accepted: list[float]  # seconds, per delivery: arrival - received_at
    answered: list[float]  # arrival - 202 at the client
    stuck: int


async def _steady(url: str, token: str, args: argparse.Namespace) -> list[tuple[str, float, float]]:
    """(event id, sent, 202 received) per event, sent open-loop at ``args.rate``."""
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"},
                                     connector=aiohttp.TCPConnector(limit=256)) as session:
        async def one(i: int) -> tuple[str, float, float]:
            sent = time.time()
            async with session.post(url, json=event(i, args.customers, "delay")) as answer:
                body = await answer.json()
                if answer.status != 202:
                    raise RuntimeError(f"event answered {answer.status}: {body}")
            return str(body["data"]["id"]), sent, time.time()

        loop = asyncio.get_running_loop()
        start, tasks = loop.time(), []
        for i in range(args.rate * args.seconds):
            await asyncio.sleep(max(0.0, start + i / args.rate - loop.time()))
            tasks.append(asyncio.create_task(one(i)))
        return list(await asyncio.gather(*tasks))


def delay(service: load.Server, receiver: load.Server, db: Path, token: str,
          args: argparse.Namespace) -> Delay:
    start = int(call(receiver.url("/release"), {})[1]["count"])
    sent = asyncio.run(_steady(service.url(f"{API}/behavior/events"), token, args))
    stuck = settle(db, args.settle)
    received_at = {i: datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp()
                   for i, t in query(db, "SELECT id, received_at FROM events")}
    answered = {event_id: done for event_id, _, done in sent}
    got = [r for r in records(receiver, start) if r[2] in answered]
    rate = (len(sent) - 1) / (sent[-1][1] - sent[0][1]) if len(sent) > 1 else 0.0
    return Delay(len(sent), rate, len(got), sorted(t - received_at[str(e)] for t, _, e in got),
                 sorted(t - answered[str(e)] for t, _, e in got), stuck)


@dataclass(frozen=True)
class Check:
    rows: int
    states: dict[str, int]
    received: int
    duplicates: int  # extra arrivals of a webhook-id already received
    missing: int  # delivered rows the receiver never saw
    unknown: int  # arrivals with a webhook-id that is no delivery
    wrong_event: int  # arrivals whose data.id is not the delivery's event
    retried: int  # rows with more than one try
    exit_code: int

    def ok(self) -> bool:
        return (self.states == {"delivered": self.rows} and not (self.duplicates or self.missing or self.unknown
                or self.wrong_event or self.retried) and self.exit_code == 0)

    def text(self) -> str:
        states = ", ".join(f"{n:,} {s}" for s, n in sorted(self.states.items()))
        return (f"{self.rows:,} delivery rows ({states}), {self.received:,} POSTs received, {self.duplicates} "
                f"duplicates, {self.missing} delivered but not received, {self.unknown} unknown, {self.wrong_event} "
                f"with another event id, {self.retried} retried; exit code {self.exit_code}")


def check(db: Path, arrivals: list[tuple[float, str | None, str | None]], exit_code: int) -> Check:
    rows = {i: (s, e, t) for i, s, e, t in query(db, "SELECT id, state, event_id, tries FROM deliveries")}
    seen = Counter(r[1] for r in arrivals)
    delivered = {i for i, (s, _, _) in rows.items() if s == "delivered"}
    return Check(len(rows), dict(Counter(s for s, _, _ in rows.values())), len(arrivals),
                 sum(n - 1 for n in seen.values()), len(delivered - set(seen)), sum(1 for i in seen if i not in rows),
                 sum(1 for _, i, e in arrivals if i in rows and rows[i][1] != e),
                 sum(1 for _, _, t in rows.values() if t > 1), exit_code)


def service_run(directory: Path, receiver: load.Server, connections: int, args: argparse.Namespace
                ) -> tuple[Throughput, Delay, Check]:
    db = directory / f"fwd-{connections}.db"
    env = {**SERVICE_ENV, "LINKSVC_DELIVERY_CONCURRENCY": str(args.concurrency),
           "LINKSVC_DEMO_FILE": str(data.ingest_only_demo(directory))}  # only the bench's connections deliver
    call(receiver.url("/reset"), {})
    with load.service(f"linksvc ({connections} connections)", db, env) as service:
        token = setup(service, receiver, connections, args.customers)
        print(f"{connections} connection(s): {args.events:,} events in bulk ...")
        made = throughput(service, receiver, db, token, args)
        print(f"  {made.deliveries:,} deliveries in {made.window_s:.2f} s: {made.per_s:,.0f}/s; "
              f"{args.rate}/s for {args.seconds} s ...")
        late = delay(service, receiver, db, token, args)
        exit_code = load.stop(service)
    return made, late, check(db, records(receiver), exit_code)


def pct(values: list[float], q: float) -> str:
    if not values:
        return "-"
    v = values[min(len(values) - 1, int(q * len(values)))] * 1000
    return f"{v:.1f} ms" if abs(v) >= 10 else f"{v:.2f} ms"


def section(base: dict[str, float], runs: list[tuple[int, Throughput, Delay, Check]],
            args: argparse.Namespace) -> str:
    rows = [[f"{k} webhook connection{'s' * (k > 1)}", f"{t.events:,}", f"{t.deliveries:,}", f"{t.load_s:.2f} s",
             f"{t.window_s:.2f} s", f"{t.per_s:,.0f}", f"{t.per_s / base['rps']:.1%}", f"{t.service_cpu:.0%}",
             f"{t.receiver_cpu:.0%}"] for k, t, _, _ in runs]
    delays = [[f"{k}", f"{d.events:,} at {d.rate:,.0f}/s", f"{d.deliveries:,}", pct(d.accepted, 0.5),
               pct(d.accepted, 0.99), pct(d.accepted, 1.0), pct(d.answered, 0.5), pct(d.answered, 0.99)]
              for k, _, d, _ in runs]
    checks = [f"- {k} connection{'s' * (k > 1)}: {c.text()}"
              + (f"; **{t.stuck + d.stuck} still pending** after the {args.settle} s settle deadline"
                 if t.stuck or d.stuck else "") + ("." if c.ok() else " (**not as expected**).")
              for k, t, d, c in runs]
    connections = " or ".join(map(str, args.connections))
    customers = f"{args.customers:,} customer{'s' * (args.customers > 1)}"
    return "\n".join([
        "## Forwarding (issue 6)", "",
        f"Command: `{COMMAND}` (options: `--help`; {load.revision()}).", "",
        f"Machine: {load.machine().line()}.", "",
        "Setup: per row a fresh `linksvc serve` (one process) over an empty temporary database where the demo "
        "loads, with the default settings (the access log on, written to a file) and "
        "`LINKSVC_DB_SYNCHRONOUS=FULL` (the default), "
        f"`LINKSVC_ALLOW_PRIVATE_DESTINATIONS=1`, `LINKSVC_DELIVERY_CONCURRENCY={args.concurrency}` (deliveries in "
        "flight; 16 is the default) and `LINKSVC_DELIVERY_TIMEOUT_SECONDS=120` (default 10: the deliveries held "
        f"while a backlog is loaded must not time out). Its webhook connections ({connections}, created with the "
        "admin API) all point at one receiver, a bare aiohttp process (`python -m bench.forwarding --receiver`) "
        "that answers 200 at once (unless held) and records each POST's arrival time, `webhook-id` and `data.id`. "
        f"Events: the demo's custom `app_open`, spread over {customers} created with `/customers/migrate` (the "
        "dispatcher sends one customer's deliveries to a connection one at a time, in order); each makes one "
        "`event.accepted` delivery per connection.", "",
        f"Baseline (same run): wrk POSTing a {len(BASELINE_BODY)}-byte JSON body straight to the receiver, "
        f"{args.wrk_connections} connections, 2 threads, {args.baseline_seconds} s: **{base['rps']:,.0f} POSTs/s**, "
        f"p50 {base['p50_ms']:.2f} ms, p99 {base['p99_ms']:.2f} ms, {base['errors']:.0f} errors, receiver CPU "
        f"{base['cpu']:.0%} of a core.", "",
        "Throughput: a backlog sent all at once. The receiver holds its answers while the events are posted with "
        "`/behavior/events/bulk` (1,000 per request), so the dispatcher has its first deliveries (at most "
        f"{args.concurrency}) in flight and claims no more; then it lets them go. Deliveries/s = deliveries "
        "received / time from the release to the last arrival (the service does nothing else meanwhile); CPU = "
        "share of one core over that time, until nothing is pending.", "",
        load.table(["row", "events", "deliveries", "loading (held)", "release to last", "deliveries/s",
                      "of receiver baseline", "service CPU", "receiver CPU"], rows), "",
        f"Delay: single `POST /behavior/events` sent open-loop by an aiohttp client at {args.rate}/s for "
        f"{args.seconds} s, after the throughput run on the same service; per delivery, the arrival at the receiver "
        "minus the event's `received_at` (the `events` table: the time the service took the request, before the "
        "group commit), and minus the 202 answer at the client (negative when the webhook arrives first).", "",
        load.table(["connections", "events", "deliveries", "p50", "p99", "max", "after 202: p50", "p99"], delays),
        "",
        "Checks after SIGTERM: every row of `deliveries` against the receiver's records (`webhook-id` = delivery "
        "id, `data.id` = its event):", "", *checks,
    ])


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.forwarding", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--receiver", action="store_true", help="run the webhook receiver only (with --port)")
    parser.add_argument("--port", type=int, default=0, help="the receiver's port")
    parser.add_argument("--events", type=int, default=5000, help="events posted in bulk per row [5000]")
    parser.add_argument("--connections", default="1,4", help="webhook connections per row [1,4]")
    parser.add_argument("--customers", type=int, default=200, help="customers the events are spread over [200]")
    parser.add_argument("--rate", type=int, default=200, help="events/s of the delay run [200]")
    parser.add_argument("--seconds", type=int, default=10, help="length of the delay run [10]")
    parser.add_argument("--concurrency", type=int, default=16, help="LINKSVC_DELIVERY_CONCURRENCY [16]")
    parser.add_argument("--baseline-seconds", type=int, default=10, help="wrk run against the receiver [10]")
    parser.add_argument("--wrk-connections", type=int, default=32, help="wrk connections of the baseline [32]")
    parser.add_argument("--settle", type=int, default=300, help="seconds to wait for pending deliveries [300]")
    load.output_options(parser, "200 events, 20 customers, a 2 s delay run, a 1 s baseline")
    args = parser.parse_args(argv)
    if args.smoke:
        args.events, args.customers, args.rate, args.seconds, args.baseline_seconds = 200, 20, 50, 2, 1
    args.connections = [int(k) for k in args.connections.split(",")]
    if args.receiver and not args.port:
        parser.error("--receiver needs --port")
    if not (args.events > 0 and args.customers > 0 and args.rate > 0 and args.seconds > 0 and args.concurrency > 0
            and all(k > 0 for k in args.connections)):
        parser.error("counts, rates and durations must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    if args.receiver:
        run_receiver(args.port)
        return 0
    runs = []
    with tempfile.TemporaryDirectory(prefix="bench-forwarding-") as tmp, \
            load.running("receiver", ["-m", "bench.forwarding", "--receiver", "--port", "{port}"]) as receiver:
        print("measuring the receiver with wrk ...")
        base = baseline(receiver, args.baseline_seconds, args.wrk_connections, Path(tmp))
        for k in args.connections:
            runs.append((k, *service_run(Path(tmp), receiver, k, args)))
    text = section(base, runs, args)
    print(text)
    load.publish("forwarding", text, args)
    return 0 if all(c.ok() and not t.stuck and not d.stuck for _, t, d, c in runs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
