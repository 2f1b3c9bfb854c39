"""Soak (issue 8): ``.venv/bin/python -m bench.soak``.

A bounded run (``--duration``, 180 s) of a steady mix at fixed rates, open loop (``bench/load.py``):
redirects ``GET /{code}`` over the demo's enabled, unexpired link codes with a realistic mix of user agents,
customer lookups ``GET /api/storefront/v1/customers?phone=`` or ``?document_number=`` of the demo
customers, and behavior events ``POST /api/storefront/v1/behavior/events`` (PURCHASE with a new order_id
each, and the custom ``app_open``) with the demo SERVER key's token. The service is a fresh ``linksvc serve``
over an empty temporary database (the demo loads). Per 15-second window: requests due and answered per
kind, errors, latency p50/p99 from each request's due time, the service's RSS (summed over its worker
processes) and CPU. After SIGTERM: the exit code, the events and clicks stored against the answers, and the
demo account's ledger. Rewrites its section of docs/benchmarks.md unless ``--no-docs``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import secrets
import statistics
import sys
import tempfile
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import uvloop

from bench import data
from bench import load as driver
from bench.data import DEMO, DEMO_ACCOUNT, demo_account
from bench.events import API, ORDER, SERVICE_ENV, _event, post_json
from bench.load import Kind, OpenLoop, Profile, Request, Tally, own_code, profiling, read_profile
from bench.redirects import get_raw, weighted_agents
from linksvc.clock import parse_iso
from storage.db import connect_reader
from storage.wallet import ledger_mismatches

COMMAND = ".venv/bin/python -m bench.soak"
CUSTOM = "app_open"
# From bench.events: the demo account, its SERVER key, the service's environment (the demo loads, FULL sync).
TITLES = {"redirect": "redirects", "lookup": "lookups", "event": "events"}
PHASES = {"pool": "waiting for a free connection of the pool", "connect": "opening a new connection",
          "connected": "connected, not yet written"}


def live_codes(until: datetime) -> list[str]:
    """Codes of the demo's links that are enabled and do not expire before ``until`` (every account)."""
    return [link["code"] for account in json.loads(DEMO.read_text())["accounts"] for link in account["links"]
            if not link.get("disabled") and (not link.get("expires_at") or parse_iso(link["expires_at"]) > until)]


def revision() -> str:
    """:func:`driver.revision`, its list of changed files cut short (other work leaves files about)."""
    text = driver.revision()
    head, sep, files = text.partition(", with uncommitted changes to ")
    names = files.split(", ")
    if len(names) <= 4:
        return text
    groups = Counter(n.split("/", 1)[0] + "/" if "/" in n else n for n in names)
    return head + sep + ", ".join(f"{g} ({k} files)" if k > 1 else g for g, k in groups.items())


def soak_customers(count: int) -> list[dict[str, Any]]:
    """``count`` customers for the load, migrated before it starts: phones written with brackets and dots,
    and an opening balance of the demo's points."""
    reward = next(r["id"] for r in demo_account()["rewards"])
    return [{"external_id": f"soak-{n}", "document_number": f"SK{n:06d}", "name": f"Soak {n}",
             "phone": f"+57 (310) {n // 10000:03d}.{n % 10000:04d}",
             "wallet": {"lines": [{"amount": 100, "reward_id": reward}]}} for n in range(count)]


def migrate(service: driver.Server, token: str, customers: list[dict[str, Any]]) -> None:
    for start in range(0, len(customers), 500):
        batch = json.dumps({"customers": customers[start:start + 500]})
        status, answer = post_json(service, f"{API}/customers/migrate", batch, token)
        if status != 200 or answer["data"]["failed"]:
            raise SystemExit(f"migrating the soak's customers: {status} {json.dumps(answer)[:500]}")


def makers(token: str, codes: list[str], seed: int, customers: list[dict[str, Any]]
           ) -> dict[str, Callable[[int], Request]]:
    """Request number -> request, per kind. Lookups and events go to one of ``customers`` at random 9 times in
    10, and to one of the demo's customers otherwise (their wallets grow all through the run)."""
    account = demo_account()
    if not any(t["name"] == CUSTOM and t["active"] for t in account["custom_event_types"]):
        raise SystemExit(f"{DEMO}: no active custom event type {CUSTOM}")
    agents = weighted_agents()
    rng = random.Random(seed)
    auth = {"Authorization": f"Bearer {token}"}
    demo = account["customers"]

    def who(i: int) -> dict[str, Any]:
        return demo[i % len(demo)] if i % 10 == 9 else rng.choice(customers)

    # The demo's phones are written with brackets and dots, as the soak's are.
    def lookup_request(customer: dict[str, Any], key: str) -> tuple[str, bytes]:
        check = customer["id"] if "id" in customer else customer["document_number"]
        return f"{API}/customers?{urllib.parse.urlencode({key: customer[key]})}", check.encode()

    # 3 PURCHASE (new order_id each) for every 2 app_open, by document number.
    def event_body(i: int) -> str:
        event = _event(rng, account, "PURCHASE" if i % 5 < 3 else CUSTOM, i)
        event.pop("customer_id", None)
        event["document_number"] = who(i)["document_number"]
        return json.dumps(event, separators=(",", ":")).replace(ORDER, f"soak-{tag}-{i}")

    tag = secrets.token_hex(3)

    def redirect(i: int) -> Request:
        return Request("GET", f"/{rng.choice(codes)}", {"User-Agent": rng.choice(agents)}, None, 302, b":",
                       "clicks")

    def lookup(i: int) -> Request:
        path, check = lookup_request(who(i), "phone" if i % 2 else "document_number")
        return Request("GET", path, auth, None, 200, check)

    def event(i: int) -> Request:
        return Request("POST", f"{API}/behavior/events", {**auth, "Content-Type": "application/json"},
                       event_body(i).encode(), 202, b'"accepted"', "PURCHASE" if i % 5 < 3 else CUSTOM)

    return {"redirect": redirect, "lookup": lookup, "event": event}


def probe(service: driver.Server, make: dict[str, Callable[[int], Request]], token: str) -> dict[str, int]:
    """One request of each kind through the real server, checked; what it added (clicks, events)."""
    redirect = make["redirect"](0)
    status, location = get_raw(service, redirect.path, redirect.headers["User-Agent"])
    lookup = make["lookup"](0)
    got = driver.get_json(service.url(lookup.path), lookup.headers)
    purchase, custom = make["event"](10**9), make["event"](10**9 + 3)
    assert (purchase.label, custom.label) == ("PURCHASE", CUSTOM)
    answers = [post_json(service, e.path, (e.body or b"").decode(), token) for e in (purchase, custom)]
    if status != 302 or not location or got[0] != 200 or lookup.check.decode() not in json.dumps(got[1]) \
            or any(a[0] != 202 for a in answers):
        raise SystemExit(f"probe failed: redirect {status} {location!r}; lookup {got}; events {answers}")
    return {"clicks": 1, "PURCHASE": 1, CUSTOM: 1}


def stored(db: Path) -> dict[str, int]:
    """Rows of clicks, and of events per type, now."""
    with data.readonly(db, timeout=30) as conn:
        found = {"clicks": data.count(conn, "SELECT count(*) FROM clicks")}
        found.update((t, n) for t, n in conn.execute("SELECT type, count(*) FROM events GROUP BY type"))
        return found


@dataclass(frozen=True)
class Checks:
    exit_code: int
    stop_s: float
    answered: dict[str, int]  # 302 redirects, 202 events per type, probes included
    unanswered: dict[str, int]  # sent, no answer (timeout, socket error): may be stored all the same
    added: dict[str, int]  # rows added to clicks / events per type
    mismatches: list[dict[str, Any]]

    def lines(self) -> list[str]:
        out = [f"exit code after SIGTERM: {self.exit_code} ({'as expected' if self.exit_code == 0 else '**not 0**'}), "
               f"stopped {self.stop_s:.1f} s after the signal"]
        for key, what in (("clicks", "redirects answered 302"), ("PURCHASE", "PURCHASE events answered 202"),
                          (CUSTOM, f"`{CUSTOM}` events answered 202")):
            table = "clicks" if key == "clicks" else "events"
            a, s, u = self.answered[key], self.added.get(key, 0), self.unanswered.get(key, 0)
            verdict = ("equal" if a == s else f"{s - a:+,}: within the {u:,} sent and not answered, finished after "
                       "the client gave up" if 0 < s - a <= u else f"**{s - a:+,}: not explained** ({u:,} sent and "
                       "not answered)")
            out.append(f"{what} (probes included): {a:,}; rows added to `{table}`: {s:,} ({verdict})")
        extra = {k: n for k, n in self.added.items() if k not in self.answered and n}
        if extra:
            out.append(f"**other rows added**: {extra}")
        out.append("ledger of the demo account (`storage.wallet.ledger_mismatches`): "
                   + ("[] (consistent)" if not self.mismatches else f"**{len(self.mismatches)} mismatches**: "
                      f"{json.dumps(self.mismatches[:3])[:600]}"))
        return out

    @property
    def ok(self) -> bool:
        """Nothing answered as accepted is missing, nothing unknown was added, the ledger holds, exit code 0."""
        return (self.exit_code == 0 and not self.mismatches and all(
            0 <= self.added.get(k, 0) - n <= self.unanswered.get(k, 0) for k, n in self.answered.items())
            and not any(n for k, n in self.added.items() if k not in self.answered))


# ---------------------------------------------------------------------------------------------------------
# Figures per window and verdicts.


def _ms(seconds: float) -> str:
    ms = seconds * 1000
    return f"{ms:.0f}" if ms >= 100 else f"{ms:.1f}" if ms >= 1 else f"{ms:.2f}"


def _mb(kb: float) -> str:
    return f"{kb / 1024:.1f}"


@dataclass
class Run:
    args: argparse.Namespace
    load: OpenLoop
    kinds: dict[str, Kind]
    checks: Checks
    codes: list[str]
    workers_seen: list[tuple[int, ...]]
    profile: Profile | None  # py-spy on the service's event loop during the last window

    def span(self, w: int) -> tuple[float, float]:
        return self.load.span(w)

    def label(self, w: int) -> str:
        a, b = self.span(w)
        return f"{a:.0f}-{b:.0f} s" + (" (warm-up)" if w < self.first else "")

    @property
    def first(self) -> int:
        """The first window after the warm-up."""
        return min(self.load.windows - 1, int(-(-self.args.warmup // self.load.window)))

    def rss(self, w: int) -> int:
        return self.load.window_samples(w)[1].rss_kb

    def cpu(self, w: int) -> tuple[float, float]:
        return self.load.cpu(w)

    def per_request_us(self, w: int) -> float:
        """Service CPU per request due in window ``w``, in µs."""
        a, b = self.span(w)
        sent = sum(k.tallies[w].sent for k in self.kinds.values())
        return self.cpu(w)[0] * (b - a) * 1e6 / sent if sent else 0.0

    def total(self, name: str) -> Tally:
        return Tally.sum(self.kinds[name].tallies)

    def memory(self) -> tuple[str, bool]:
        first, last = self.rss(self.first), self.rss(self.load.windows - 1)
        growth = (last - first) / 1024
        flat = growth <= self.args.rss_growth_mb
        after = range(self.first, self.load.windows)
        trend = ""
        if len(after) >= 3:
            fit = statistics.linear_regression([self.span(w)[1] for w in after], [self.rss(w) / 1024 for w in after])
            trend = f"; least-squares trend over those windows {fit.slope * 60:+.1f} MB/min"
        peak = max(s.rss_kb for s in self.load.samples)
        a, b = self.load.window_samples(self.first)[1], self.load.window_samples(self.load.windows - 1)[1]
        trend += (f"; meanwhile anonymous memory {(b.anon_kb - a.anon_kb) / 1024:+.1f} MB, file-backed "
                  f"{(b.file_kb - a.file_kb) / 1024:+.1f} MB, while the database and WAL grew "
                  f"{(b.db_bytes - a.db_bytes) / 2**20:+.1f} MB (to {b.db_bytes / 2**20:.1f} MB; each SQLite "
                  f"connection of a worker, 3 of them, may cache up to {self.args.db_cache_mb} MiB of pages, the "
                  "reader maps the file)")
        text = (f"{'flat' if flat else '**grew**'}: RSS at the end of the first window after the warm-up "
                f"({self.label(self.first)}) {_mb(first)} MB, at the end of the last "
                f"({self.label(self.load.windows - 1)}) {_mb(last)} MB: {growth:+.1f} MB "
                f"({growth * 1024 / first:+.1%}; allowed "
                f"{self.args.rss_growth_mb:g} MB){trend}; highest sample {_mb(peak)} MB")
        return text, flat

    def latency(self) -> tuple[list[str], bool]:
        lines, ok = [], True
        for name, kind in self.kinds.items():
            bound = self.args.bounds[name]
            judged = range(self.first, self.load.windows)
            worst = max(judged, key=lambda w: kind.tallies[w].pct(0.99))
            p99 = kind.tallies[worst].pct(0.99)
            overall = max(range(self.load.windows), key=lambda w: kind.tallies[w].pct(0.99))
            within = p99 * 1000 <= bound
            ok = ok and within
            note = "" if overall == worst else (f" (warm-up window {self.label(overall)}: "
                                                f"{_ms(kind.tallies[overall].pct(0.99))} ms)")
            lines.append(f"{TITLES[name]}: worst p99 {_ms(p99)} ms in window {self.label(worst)}, bound {bound:g} ms: "
                         f"{'within' if within else '**exceeded**'}; whole run p50 "
                         f"{_ms(self.total(name).pct(0.5))} ms, p99 {_ms(self.total(name).pct(0.99))} ms{note}")
        return lines, ok

    def errors(self) -> tuple[list[str], bool]:
        lines = []
        for name in self.kinds:
            t = self.total(name)
            statuses = ", ".join(f"{n:,}× {s}" for s, n in sorted(t.statuses.items()))
            kinds = "".join(f", {n:,}× {k}" for k, n in t.error_kinds.most_common())
            lines.append(f"{TITLES[name]}: {t.sent:,} due, {t.answered:,} answered ({statuses}); {t.wrong:,} wrong "
                         f"answers, {t.timeouts:,} timeouts after sending, {t.unsent.total():,} timed out unsent"
                         + "".join(f"{', ' if i else ' ('}{n:,} {PHASES[k]}" for i, (k, n) in
                                   enumerate(t.unsent.most_common())) + (")" if t.unsent else "")
                         + f", {t.socket_errors:,} socket errors{kinds}")
        return lines, not any(self.total(n).errors or self.total(n).sent != self.total(n).answered for n in self.kinds)


def request_rows(run: Run, step: int) -> list[list[str]]:
    rows = []
    for w in range(0, run.load.windows, step):
        row = [run.label(w)]
        for kind in run.kinds.values():
            t = kind.tallies[w]
            err = f"**{t.errors}**" if t.errors else "0"
            row += [f"{t.sent:,} / {t.answered:,} / {err}", f"{_ms(t.pct(0.5))} / {_ms(t.pct(0.99))}"]
        rows.append(row)
    return rows


def service_rows(run: Run, step: int) -> list[list[str]]:
    rows = []
    for w in range(0, run.load.windows, step):
        _, end = run.load.window_samples(w)
        cpu, client = run.cpu(w)
        lag = max(k.tallies[w].lag_max for k in run.kinds.values())
        rows.append([run.label(w), _mb(end.rss_kb), f"{_mb(end.anon_kb)} / {_mb(end.file_kb)}",
                     f"{cpu:.0%} / {run.per_request_us(w):,.0f} µs",
                     f"{end.threads} / {end.fds}", f"{end.db_bytes / 2**20:.1f} / {end.wal_bytes / 2**20:.1f}",
                     f"{run.load.wallet[w]:,}", f"{_ms(run.load.fsync_max(w))} ms", f"{client:.0%} / {_ms(lag)} ms"])
    return rows


def profile_lines(run: Run) -> list[str]:
    p = run.profile
    if p is None:
        return []
    if not p.samples:
        return ["", f"Profile of the last window: none ({p.error or 'py-spy took no samples'})."]
    rows = [[f"`{name}`", f"{n / p.samples:.0%}", f"{p.own[name] / p.samples:.0%}"]
            for name, n in Counter({k: v for k, v in p.inclusive.items() if own_code(k)}).most_common(8)]
    top = ", ".join(f"`{name}` {n / p.samples:.0%}" for name, n in p.own.most_common(4))
    return ["", f"Where the service's event loop went in the last window: py-spy (`--nonblocking --threads`), "
            f"{p.samples:,} samples of its main thread over the first {run.args.profile} s of that window (py-spy "
            "shares the 2 cores meanwhile); the "
            f"service's own functions by inclusive share (self share beside). Most self time: {top} (`run_app` "
            "self is uvloop's loop itself, waiting included).", "",
            driver.table(["function", "inclusive", "self"], rows)]


def section(run: Run) -> tuple[str, bool]:
    args, load = run.args, run.load
    memory, flat = run.memory()
    latency, bounded = run.latency()
    errors, clean = run.errors()
    step = 1 if load.windows <= 24 else 2
    every = "" if step == 1 else " (every other window)"
    restarted = len({p[1:] for p in run.workers_seen}) > 1
    rates = ", ".join(f"{kind.rate:g} {TITLES[n]}/s" for n, kind in run.kinds.items())
    workers = f"{args.workers} worker process{'es' if args.workers > 1 else ''}"
    text = "\n".join([
        "## Soak (issue 8)", "",
        f"Command: `{' '.join([COMMAND, *args.given])}` (options: "
        f"`--help`; {revision()}).", "",
        f"Machine: {driver.machine().line()}.", "",
        f"Setup: a fresh `linksvc serve --workers {args.workers}` ({workers}) over an empty temporary database "
        "where the demo (`fixtures/demo.json`) loads, with the default settings "
        "(the access log on, written to a file) but `LINKSVC_ADMIN_TOKEN`, "
        "`LINKSVC_DB_SYNCHRONOUS=FULL` (the default: every event is synced to disk before its 202) and "
        f"`LINKSVC_DB_CACHE_MB={args.db_cache_mb}` (default 64): SQLite's page caches, which grow with the database "
        "up to that size per connection, are full before the warm-up ends, so growth after it is not theirs (with "
        "the default they grow for minutes, to at most 3 × 64 MiB per worker). Before the load "
        "one request of each kind is checked through the real server.", "",
        f"Load, {args.duration:g} s at fixed rates, open loop: **{rates}**, from one Python process (aiohttp "
        f"client on uvloop, keep-alive connections, one pool of at most {args.connections} per kind; a request "
        "whose time runs out while it waits for a free connection or for a new one to be accepted counts as "
        "*timed out unsent*; a timed-out request's connection is closed). Request *i* of a kind is due at start + "
        "*i* / rate and sent then whatever the earlier ones are doing; its latency runs from that due time to the "
        "last byte of the answer (no coordinated omission: a stall shows as latency, not as fewer requests), "
        f"timeout {args.timeout:g} s. Redirects: `GET /{{code}}` over the {len(run.codes)} enabled, unexpired "
        f"codes of the demo ({', '.join(run.codes)}), at random, with the weighted user-agent mix of "
        "`bench/redirects.py` (mobile Chrome and Safari, desktop Chrome, in-app browsers, 4% bots), redirects "
        "not followed; right answer = 302 with a Location. "
        f"Customers: {args.customers:,} migrated before the load (`POST /customers/migrate`, "
        "500 a request, phones written like `+57 (310) 000.0042`, an opening line of 100 points each); 9 in 10 "
        "lookups and events go to one of them at random, the 10th to the 6 demo customers in turn, whose wallets "
        "grow all through the run. Lookups: `GET /api/storefront/v1/customers?phone=` or `?document_number=` "
        "(phones as stored, brackets and dots included), with the demo SERVER key's token; right answer = 200 "
        "naming that customer. Events: `POST "
        f"/api/storefront/v1/behavior/events`, 3 PURCHASE (a new `order_id` each, demo SKUs, stores and channels) "
        f"for every 2 `{CUSTOM}`, by document number; right answer = 202. An "
        "error is a wrong answer (any other status), a timeout or a socket error.", "",
        f"Per {load.window:g}-second window{every} (requests counted in the window they were due in): due / "
        "answered / errors, and latency p50 / p99 in ms:", "",
        driver.table(["window", *[x for n in run.kinds for x in (TITLES[n], "p50 / p99")]], request_rows(run, step)),
        "",
        "The service at the end of each window: RSS (VmRSS from /proc, summed over the server and its workers), "
        "of which anonymous / file-backed (SQLite maps the database: file pages grow with it), CPU (user+system, "
        "share of one core over the window, and per request due in it), threads / open file descriptors, "
        "database / WAL file size, the most wallet lines one customer has (every PURCHASE issues points "
        "lines; a lookup answers the unexpired ones), the longest of the load generator's own 4 KiB write + fsync "
        "beside the database, once a second (the disk as the service's group commit meets it; other work on the "
        "machine writes too), and the load generator's own CPU / the longest it sent a request after its due "
        "time:", "",
        driver.table(["window", "RSS MB", "anon / file MB", "CPU / per request", "threads / fds", "DB / WAL MB",
                      "wallet lines", "fsync max", "client CPU / lag"], service_rows(run, step)), "",
        "Verdicts:", "",
        f"- Memory {memory}.",
        f"- Latency (p99 per kind per window after the warm-up, bounds from `--bounds`): "
        f"{'within bounds' if bounded else '**out of bounds**'}.", *[f"  - {x}." for x in latency],
        f"- Errors: {'none' if clean else '**some**'}.", *[f"  - {x}." for x in errors],
        f"- Cost at the same load: service CPU per request {run.per_request_us(run.first):,.0f} µs in window "
        f"{run.label(run.first)}, {run.per_request_us(load.windows - 1):,.0f} µs in the last "
        f"({run.per_request_us(load.windows - 1) / max(run.per_request_us(run.first), 1e-9):.1f}×); the largest "
        f"wallet went from {load.wallet[run.first]:,} to {load.wallet[-1]:,} lines.",
        *(["- **A worker process was replaced during the run**: " + ", ".join(map(str, sorted(set(run.workers_seen))))
           + "."] if restarted else []), "",
        "End checks (after SIGTERM, on the database file):", "", *[f"- {x}." for x in run.checks.lines()],
        *profile_lines(run),
    ])
    return text, flat and bounded and clean and run.checks.ok and not restarted


# ---------------------------------------------------------------------------------------------------------


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=180, help="seconds of load [180]")
    parser.add_argument("--window", type=float, default=15, help="seconds per reported window [15]")
    parser.add_argument("--warmup", type=float, default=15,
                        help="seconds at the start left out of the memory and latency verdicts [15]")
    parser.add_argument("--redirects", type=float, default=300, help="redirects per second [300]")
    parser.add_argument("--lookups", type=float, default=100, help="customer lookups per second [100]")
    parser.add_argument("--events", type=float, default=50, help="events per second [50]")
    parser.add_argument("--customers", type=int, default=1000,
                        help="customers migrated before the load; 9 in 10 lookups and events go to them [1000]")
    parser.add_argument("--db-cache-mb", type=int, default=4,
                        help="LINKSVC_DB_CACHE_MB of the service: small, so that SQLite's page caches are full "
                             "before the warm-up ends and do not pass for growth [4; the service's default is 64]")
    parser.add_argument("--workers", type=int, default=1, help="worker processes of the service [1]")
    parser.add_argument("--timeout", type=float, default=10, help="seconds before a request times out [10]")
    parser.add_argument("--connections", type=int, default=256, help="client connections per kind, at most [256]")
    parser.add_argument("--bounds", default="50,50,250",
                        help="p99 bounds in ms of redirects, lookups, events per window [50,50,250]")
    parser.add_argument("--rss-growth-mb", type=float, default=10,
                        help="RSS growth allowed from the first window after the warm-up to the last [10]")
    parser.add_argument("--profile", type=int, default=10,
                        help="seconds py-spy samples the service at the start of the last window; 0: none [10]")
    parser.add_argument("--seed", type=int, default=8)
    driver.output_options(parser, "10 s of load at 20, 10 and 5 requests/s in 5 s windows, p99 bounds of 1 s, "
                          "no profile")
    args = parser.parse_args(argv)
    args.given = [a for a in (sys.argv[1:] if argv is None else argv) if a != "--no-docs"]
    if args.smoke:
        args.duration, args.window, args.warmup, args.profile, args.customers = 10, 5, 5, 0, 20
        args.redirects, args.lookups, args.events, args.bounds = 20, 10, 5, "1000,1000,1000"
    args.profile = min(args.profile, int(args.window))
    try:
        args.bounds = dict(zip(TITLES, (float(x) for x in args.bounds.split(",")), strict=True))
    except ValueError:
        parser.error("--bounds takes three numbers (ms): redirects,lookups,events")
    if not (5 <= args.window <= args.duration <= 3600 and 0 <= args.warmup < args.duration and 1 <= args.workers <= 8
            and min(args.redirects, args.lookups, args.events, args.timeout, args.connections, args.customers,
                    args.db_cache_mb) > 0):
        parser.error("need 5 <= --window <= --duration <= 3600, --warmup < --duration, 1-8 workers, positive rates")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    codes = live_codes(datetime.now(UTC) + timedelta(seconds=args.duration + 600))
    with tempfile.TemporaryDirectory(prefix="bench-soak-") as tmp:
        db = Path(tmp) / "soak.db"
        env = {**SERVICE_ENV, "LINKSVC_DB_CACHE_MB": str(args.db_cache_mb),
               "LINKSVC_DEMO_FILE": str(data.ingest_only_demo(Path(tmp)))}  # the load alone, no demo week or deliveries
        with driver.service("linksvc (soak)", db, env, "--workers", str(args.workers)) as service:
            token = driver.authorize(service, data.DEMO_SERVER_KEY)
            before = stored(db)
            customers = soak_customers(args.customers)
            migrate(service, token, customers)
            make = makers(token, codes, args.seed, customers)
            probes = probe(service, make, token)
            rates = {"redirect": args.redirects, "lookup": args.lookups, "event": args.events}
            kinds = {name: Kind(name, rates[name], make[name]) for name in TITLES}
            load = OpenLoop(service.url(""), list(kinds.values()), args.duration, args.window, args.timeout,
                        service.process.pid, db, DEMO_ACCOUNT, args.connections)
            print(f"soak: {args.duration:g} s, " + ", ".join(f"{k.rate:g} {TITLES[n]}/s" for n, k in kinds.items())
                  + f", {args.workers} worker(s), database {db}")

            spy = ExitStack()
            raw = Path(tmp) / "profile.txt"
            profile_s = args.profile if args.workers == 1 else 0

            def progress(w: int) -> None:
                if w == load.windows - 2 and profile_s:
                    spy.enter_context(profiling(service, profile_s, raw))
                s = load.samples[-1]
                parts = [f"{TITLES[n]} {k.tallies[w].sent}/{k.tallies[w].answered}/{k.tallies[w].errors} "
                         f"p99 {_ms(k.tallies[w].pct(0.99))} ms" for n, k in kinds.items()]
                print(f"  window {w + 1}/{load.windows}: {'; '.join(parts)}; RSS {_mb(s.rss_kb)} MB", flush=True)

            uvloop.run(load.run(progress))
            spy.close()
            profile = None
            if profile_s:
                profile = read_profile(raw) if raw.is_file() else Profile()
                err = raw.with_suffix(".err")
                profile.error = err.read_text().strip()[:300] if err.is_file() else ""
            signalled = time.monotonic()
            exit_code = driver.stop(service)
            stop_s = time.monotonic() - signalled
        after = stored(db)
        reader = connect_reader(str(db))
        try:
            mismatches = asyncio.run(ledger_mismatches(reader, DEMO_ACCOUNT))
        finally:
            reader.close()
    answered, unanswered = Counter(probes), Counter[str]()
    for t in (*kinds["redirect"].tallies, *kinds["event"].tallies):
        answered.update(t.ok_by)
        unanswered.update(t.lost_by)
    added = {k: after.get(k, 0) - before.get(k, 0) for k in set(after) | set(before)}
    checks = Checks(exit_code, stop_s, dict(answered), dict(unanswered), added, mismatches)
    run = Run(args, load, kinds, checks, codes, [s.pids for s in load.samples], profile)
    text, ok = section(run)
    print(text)
    driver.publish("soak", text, args)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
