"""Redirects under load (issue 4): ``.venv/bin/python -m bench.redirects``.

Over 100,000 links (:func:`bench.data.ensure_links`), measures redirects/s and p50/p99 latency of
``GET /{code}`` with wrk on 127.0.0.1, codes spread over all links, in two scenarios:

(a) ``mix``: a realistic mix of repeated user agents (``fixtures/user_agents.json``, weighted toward mobile
    Chrome and Safari and desktop Chrome, a few in-app browsers and bots);
(b) ``unique``: every request carries a user agent never seen before (a Chrome-on-Android string whose
    version holds the run, the wrk thread and a per-request counter).

Each beside a bare aiohttp handler answering a fixed 302 (``bench/baseline.py``), measured with the
same scripts in the same run, before and after the service.

No click lost: each service run gets a fresh process; the Lua script counts the 302 answers to its GETs in
``response()``. So that no GET is in flight when wrk stops (its answer would be recorded but never counted),
each wrk run ends with a short tail of ``HEAD /{code}?tracking_id=<marker>`` requests (same resolution,
records nothing; the marker in the ``Location`` tells their answers apart). After the load the service is
stopped with SIGTERM (a clean shutdown flushes the buffered clicks) and the clicks added to the database
are compared with the 302 answers counted.

Before measuring: the generated rows are checked against the save path, a few codes are resolved through
the real server (302 and the expected ``Location`` prefix per device), and the plan of the link lookup is
recorded. During each service run py-spy samples the service for a few seconds. Prints what it measured
and rewrites its section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import shutil
import statistics
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench import data, load, plans, postgres
from bench.floor import ACCOUNT as FLOOR_ACCOUNT
from bench.load import Profile
from linksvc.settings import REPO_ROOT
from storage.db import connect_reader
from storage.links import link_by_code

COMMAND = ".venv/bin/python -m bench.redirects"
MARK = "BENCH_REDIRECTS "
TAIL_MARKER = "benchtail"
TAIL_SECONDS = 2
FIXTURE = REPO_ROOT / "fixtures" / "user_agents.json"
UNIQUE_UA = ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
             "Chrome/%d.0.%d.%d Mobile Safari/537.36")
SERVICE_ENV = {**load.DEFAULTS, "LINKSVC_LOAD_DEMO": "0"}
# Share of requests (in %) per fixture user agent in scenario (a).
UA_MIX = {
    "Chrome on Android (reduced user agent)": 28, "Chrome on Android (full user agent, Pixel 7)": 4,
    "Samsung Internet on Android": 6, "Firefox on Android": 1, "Facebook in-app browser on Android": 2,
    "TikTok in-app browser on Android (trill)": 1, "Safari on iPhone": 22, "Chrome on iOS (CriOS)": 4,
    "Instagram in-app browser on iOS": 2, "Chrome on Windows": 14, "Chrome on macOS": 5, "Safari on macOS": 3,
    "Edge on Windows": 3, "Firefox on Windows": 1, "Googlebot smartphone": 1, "facebookexternalhit": 1,
    "WhatsApp link preview (Android)": 1, "Slackbot-LinkExpanding": 1,
}
SCENARIOS = {"mix": "(a) repeated user agents (realistic mix)", "unique": "(b) a never-seen user agent per request"}

# ---------------------------------------------------------------------------------------------------------
# wrk with a Lua script that counts 302 answers and ends with a tail of HEAD requests.

_LUA = load.LUA_PRELUDE + r"""
local codes = {}
for line in io.lines(%(codes_file)s) do codes[#codes + 1] = line end
local ncodes = #codes
local agents = {}
for line in io.lines(%(agents_file)s) do agents[#agents + 1] = line end
local nagents = #agents
local unique = %(unique)s
local run_number = %(run_number)d
local measure_s = %(measure_s)d
local marker = "%(marker)s"
local ua_format = %(ua_format)s

function init(args)
  math.randomseed(7919 * (thread_id + 1) + run_number)
  started = nil
  serial = 0
  -- wrk calls request() of thread 0 once before the run, to check the request it builds: not sent.
  check_call = thread_id == 0
  get_sent, get_302, get_302_window, tail_sent, tail_302, other = 0, 0, 0, 0, 0, 0
end

function request()
  if check_call then
    check_call = false
    return wrk.format("GET", "/" .. codes[1])
  end
  local t = now()
  if started == nil then started = t end
  local ua
  if unique then
    serial = serial + 1
    ua = string.format(ua_format, 100 + run_number, thread_id, serial)
  else
    ua = agents[math.random(nagents)]
  end
  local path = "/" .. codes[math.random(ncodes)]
  if t - started < measure_s then
    get_sent = get_sent + 1
    return wrk.format("GET", path, {["User-Agent"] = ua})
  end
  tail_sent = tail_sent + 1
  return wrk.format("HEAD", path .. "?tracking_id=" .. marker, {["User-Agent"] = ua})
end

function response(status, headers, body)
  if status == 302 then
    local location = headers["Location"] or ""
    if string.find(location, marker, 1, true) then
      tail_302 = tail_302 + 1
    else
      get_302 = get_302 + 1
      if now() - started < measure_s then get_302_window = get_302_window + 1 end
    end
  else
    other = other + 1
  end
end

function done(summary, latency, requests)
  local c = {get_sent = 0, get_302 = 0, get_302_window = 0, tail_sent = 0, tail_302 = 0, other = 0}
  for _, thread in ipairs(threads) do
    for name, _ in pairs(c) do c[name] = c[name] + thread:get(name) end
  end
  local e = summary.errors
  io.write(string.format(
    '%(mark)s{"requests": %%d, "duration_us": %%d, "p50_us": %%d, "p99_us": %%d, "mean_us": %%.1f, ' ..
    '"max_us": %%d, "socket_errors": %%d, "status_errors": %%d, "timeouts": %%d, "get_sent": %%d, ' ..
    '"get_302": %%d, "get_302_window": %%d, "tail_sent": %%d, "tail_302": %%d, "other": %%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.mean,
    latency.max, e.connect + e.read + e.write, e.status, e.timeout, c.get_sent, c.get_302,
    c.get_302_window, c.tail_sent, c.tail_302, c.other))
end
"""


@dataclass(frozen=True)
class Result:
    """One wrk run: its GET phase lasts ``measure_s`` seconds per thread, then ``TAIL_SECONDS`` of HEADs."""

    requests: int  # every answer wrk received (GETs and the HEAD tail)
    duration_us: int
    p50_us: int
    p99_us: int
    mean_us: float
    max_us: int
    socket_errors: int
    status_errors: int
    timeouts: int
    get_sent: int
    get_302: int  # 302 answers to GETs, whenever they arrived
    get_302_window: int  # of those, the ones that arrived within the GET phase
    tail_sent: int
    tail_302: int
    other: int  # answers other than 302
    measure_s: int = 0
    loop_cpu_s: float = 0.0  # CPU time of the server's main thread (the event loop) during the run
    other_cpu_s: float = 0.0  # CPU time of its other threads

    @property
    def rps(self) -> float:
        return self.get_302_window / self.measure_s

    def _per_request(self, seconds: float) -> float:
        return seconds * 1e6 / self.requests if self.requests else 0.0

    @property
    def cpu_us_per_request(self) -> float:
        return self._per_request(self.loop_cpu_s + self.other_cpu_s)

    @property
    def loop_us_per_request(self) -> float:
        return self._per_request(self.loop_cpu_s)

    @property
    def other_us_per_request(self) -> float:
        return self._per_request(self.other_cpu_s)


@dataclass
class Scripts:
    """The files the Lua script reads: every code, and the weighted user agents of scenario (a)."""

    directory: Path
    codes: Path
    agents: Path
    runs: int = 0

    def script(self, scenario: str, measure_s: int) -> Path:
        self.runs += 1
        path = self.directory / f"run{self.runs}.lua"
        path.write_text(_LUA % {
            "codes_file": load.lua_string(str(self.codes)), "agents_file": load.lua_string(str(self.agents)),
            "unique": "true" if scenario == "unique" else "false", "run_number": self.runs,
            "measure_s": measure_s, "marker": TAIL_MARKER, "ua_format": load.lua_string(UNIQUE_UA), "mark": MARK,
        })
        return path


def weighted_agents() -> list[str]:
    fixture = {item["name"]: item["user_agent"] for item in json.loads(FIXTURE.read_text())}
    missing = set(UA_MIX) - set(fixture)
    if missing:
        raise SystemExit(f"user agents missing from {FIXTURE}: {sorted(missing)}")
    return [fixture[name] for name, weight in UA_MIX.items() for _ in range(weight)]


def run_wrk(server: load.Server, script: Path, settings: load.Load, measure_s: int) -> Result:
    return Result(**load.run_wrk(server.url(""), script, measure_s + TAIL_SECONDS, MARK, settings.connections,
                                 settings.threads, settings.timeout), measure_s=measure_s)


def measure(server: load.Server, scripts: Scripts, scenario: str, settings: load.Load,
            seconds: int | None = None, warmup: bool = True) -> tuple[Result, list[Result]]:
    """(the measured run, every run made including it); the server's CPU time is read around the measured
    run. A run with answers other than 302 or socket errors is refused."""
    made = []
    if warmup and settings.warmup > 0:
        made.append(run_wrk(server, scripts.script(scenario, settings.warmup), settings, settings.warmup))
        load.drain(server)
    loop_before, other_before = load.thread_cpu(server)
    seconds = seconds or settings.duration
    result = run_wrk(server, scripts.script(scenario, seconds), settings, seconds)
    loop_after, other_after = load.thread_cpu(server)
    result = replace(result, loop_cpu_s=loop_after - loop_before, other_cpu_s=other_after - other_before)
    load.drain(server)
    made.append(result)
    for run in made:
        if run.other or run.status_errors or run.socket_errors:
            raise RuntimeError(f"{server.name}: answers other than 302 or socket errors: {run}")
    return result, made


# ---------------------------------------------------------------------------------------------------------
# Verification through the real server, the click count, the query plan, the profile.


def get_raw(server: load.Server, path: str, user_agent: str) -> tuple[int, str]:
    """GET without following redirects: (status, Location)."""
    conn = http.client.HTTPConnection(load.HOST, server.port, timeout=30)
    try:
        conn.request("GET", path, headers={"User-Agent": user_agent})
        answer = conn.getresponse()
        answer.read()
        return answer.status, answer.getheader("Location") or ""
    finally:
        conn.close()


def _base(url: str) -> str:
    return url.split("?", 1)[0].split("#", 1)[0]


def expected_prefix(link: Mapping[str, Any], device: str) -> str:
    """The start of the Location the product rules give (issue 4) for a device: desktop, android (Chrome),
    ios (Safari) or bot."""
    if device == "android" and link["android"]:
        return "intent://"
    if device == "ios" and link["ios"]:
        fallback = link["ios"]["fallback_url"] or link["fallback_url"]
        return _base(fallback) if fallback else f"https://apps.apple.com/app/id{link['ios']['app_store_id']}"
    return _base(link["destination_url"])


def verify(server: load.Server, links: Sequence[Mapping[str, Any]]) -> tuple[list[str], int]:
    """Resolve sample codes for each device kind; returns (what was checked, 302 answers to GETs)."""
    fixture = {item["name"]: item["user_agent"] for item in json.loads(FIXTURE.read_text())}
    devices = {"desktop": fixture["Chrome on Windows"], "android": fixture["Chrome on Android (reduced user agent)"],
               "ios": fixture["Safari on iPhone"], "bot": fixture["Googlebot smartphone"]}
    checked: list[str] = []
    answered = 0
    for i, link in enumerate(links):
        device = list(devices)[i % len(devices)]
        status, location = get_raw(server, f"/{link['code']}", devices[device])
        prefix = expected_prefix(link, device)
        if status != 302 or not location.startswith(prefix) or "tracking_id" not in location:
            raise SystemExit(f"verification failed: /{link['code']} ({device}) answered {status} {location!r}, "
                             f"expected 302 to {prefix}...")
        answered += 1
        apps = "with apps" if link["android"] else "no apps"
        checked.append(f"GET /{link['code']} ({link['kind']}, {apps}) as {device}: 302 to `{prefix}…`")
    status, _ = get_raw(server, "/zzzzzzzzz", devices["desktop"])
    if status != 404:
        raise SystemExit(f"verification failed: an unknown code answered {status}")
    checked.append("GET /zzzzzzzzz (no such code): 404")
    return checked, answered


def count_clicks(path: Path) -> int:
    with data.readonly(path) as conn:
        return data.count(conn, "SELECT count(*) FROM clicks WHERE account_id != ?", FLOOR_ACCOUNT)


@dataclass(frozen=True)
class Accounting:
    """One service process: GETs sent and answered 302 (wrk's Lua counts), clicks it added to the database."""

    label: str
    sent: int
    answered: int
    stored: int
    exit_code: int

    @property
    def equal(self) -> bool:
        return self.sent == self.answered == self.stored


def lookup_plan(path: Path, code: str) -> plans.Statement:
    """The statement ``storage.links.link_by_code`` runs (traced on the service's kind of reader)."""
    conn = connect_reader(str(path))
    try:
        statements: list[str] = []
        conn.set_trace_callback(statements.append)
        asyncio.run(link_by_code(conn, code))
        conn.set_trace_callback(None)
        sql = next(s for s in statements if s.lstrip().upper().startswith("SELECT"))
        return plans.explain(conn, "link by code (storage.links.link_by_code)", sql)
    finally:
        conn.close()


# What the heaviest leaf frames stand for.
NOTES = {
    "_SelectorSocketTransport.write": "send() of the response (syscall)",
    "fetch_one (storage/db.py)": "the link lookup inside SQLite (C), on the event loop",
    "BaseEventLoop._run_once": "the event loop (epoll)",
    "_read_ready__data_received": "recv() of the request (syscall)",
}


# ---------------------------------------------------------------------------------------------------------
# Report.


@dataclass
class Run:
    machine: load.Machine
    revision: str
    load: load.Load
    dataset: data.LinkSet
    compared: int
    checked: list[str]
    results: dict[tuple[str, str], list[Result]]  # (scenario, label) -> one result per round; labels bare/service
    accounts: list[Accounting]
    plan: plans.Statement
    profiles: dict[str, Profile]
    profile_s: int
    cpu_us: dict[str, float]  # scenario -> event-loop CPU µs per request (for the profile's per-request costs)
    workers: list[int]  # worker counts measured, one service row each
    rounds: int = 1
    postgresql: postgres.Copy | None = None  # the database of the rows on PostgreSQL, if any

    @property
    def labels(self) -> list[str]:
        return [service_label(n) for n in self.workers]

    @property
    def on_postgresql(self) -> list[str]:
        return [pg_label(n) for n in self.workers if (SCENARIO_FIRST, pg_label(n)) in self.results]

    @property
    def floors(self) -> list[str]:
        return [floor_label(n) for n in self.workers if (SCENARIO_FIRST, floor_label(n)) in self.results]

    @property
    def judged(self) -> str:
        """The row the targets are judged on: the most workers (the issue allows using both cores)."""
        return service_label(max(self.workers))

    def median(self, scenario: str, label: str, figure: Callable[[Result], float]) -> float:
        """The median over the rounds of one figure of a row."""
        return statistics.median(figure(r) for r in self.results[(scenario, label)])

    def rps(self, scenario: str, label: str) -> float:
        return self.median(scenario, label, lambda r: r.rps)

    def bare_rps(self, scenario: str) -> float:
        return self.rps(scenario, BARE)

    def bare_loop_us(self, scenario: str) -> float:
        return self.median(scenario, BARE, lambda r: r.loop_us_per_request)

    def ratio(self, scenario: str, label: str | None = None) -> float:
        return self.rps(scenario, label or self.judged) / self.bare_rps(scenario)


TARGETS = {"mix": 0.70, "unique": 0.50}
BARE = "bare"
SCENARIO_FIRST = "mix"


def _ms(us: float) -> str:
    return f"{us / 1000:.1f} ms" if us >= 1000 else f"{us / 1000:.2f} ms"


def summary(run: Run) -> str:
    lines = []
    for scenario, title in SCENARIOS.items():
        for label in run.labels:
            ratio = run.ratio(scenario, label)
            lines.append(f"{title}: {label} {run.rps(scenario, label):,.0f}/s, bare "
                         f"{run.bare_rps(scenario):,.0f}/s, ratio {ratio:.0%} (target {TARGETS[scenario]:.0%}: "
                         f"{'met' if ratio >= TARGETS[scenario] else 'NOT met'})")
    for acc in run.accounts:
        lines.append(f"clicks, {acc.label}: GET sent {acc.sent:,}, 302 answered {acc.answered:,}, stored "
                     f"{acc.stored:,} ({'equal' if acc.equal else 'DIFFERENT'}), exit code {acc.exit_code}")
    return "\n".join(lines)


def _profile_rows(profile: load.Profile, cpu_us: float, counter: Counter[str], top: int) -> list[list[str]]:
    rows = []
    for name, n in counter.most_common(top):
        share = n / profile.samples
        note = next((text for key, text in NOTES.items() if key in name), "")
        rows.append([f"`{name}`", f"{share:.0%}", f"{share * cpu_us:.0f} µs", note])
    return rows


def section(run: Run) -> str:
    settings = run.load
    ds = run.dataset
    kinds = ", ".join(f"{kind} {n:,}" for kind, n in ds.kinds.items())
    out = [
        "## Redirects (issue 4)", "",
        f"Command: `{COMMAND}` ({run.revision}).", "",
        f"Machine: {run.machine.line()}.", "",
        f"Data set: one account, {ds.links:,} links ({kinds}); https destinations on 4 hosts with utm_* and "
        f"other parameters (some with a fragment); {ds.with_apps:,} with Android (`package`) and iOS "
        f"(`app_store_id`) settings and a deeplink, some of those with fallbacks. Built with direct SQL inserts "
        f"in {ds.build_seconds} s and cached under `data/`; {run.compared} links saved through "
        "`linksvc.resources.service.save` into a scratch database gave identical rows.", "",
        "Verified through the real server before measuring:", "",
        *[f"- {line}" for line in run.checked], "",
        f"Load: wrk, {settings.connections} connections, {settings.threads} threads, {settings.warmup} s warm-up then "
        f"{settings.duration} s measured per row, then a {TAIL_SECONDS} s tail of `HEAD /{{code}}` (records nothing) "
        "so that no GET is in flight when wrk stops. Codes drawn at random over all links. Scenario (a): "
        f"{len(UA_MIX)} user agents of `fixtures/user_agents.json` weighted toward mobile Chrome and Safari and "
        "desktop Chrome (a few in-app browsers, 4% bots); (b): a Chrome-on-Android string with the run, the "
        "thread and a per-request counter in its version, so none repeats. Requests/s = 302 answers to GETs "
        "received during the GET phase / its length; latency percentiles are wrk's over the whole run (GETs and "
        "the tail). The bare handler answers a fixed 302 (aiohttp, no middleware, no access log; "
        f"`bench/baseline.py`, one process), with the same scripts, in {run.rounds} rounds of A B (A: the bare "
        "handler, B: every service row), A B A B; each figure is the median of its rounds (requests/s of each "
        "round shown too), and shares are of the bare handler's median. The floor rows (`bench/floor.py`, "
        "with 1 and 2 processes as the service's rows) are the bare handler plus the least a kept click costs: "
        "a row appended per redirect (a fresh random tracking id, the time, the user agent, the referer, the "
        "UTM) and written every 0.5 s by a thread into the same `clicks` table (same schema and indexes, "
        "WAL, `synchronous=FULL`), with no decision, link, metrics, journal or user-agent parse: aiohttp's own "
        "request path and the cheapest kept click, the reference the service's rows are closest to. Each "
        "service row "
        "is a fresh `linksvc serve --workers N` (`LINKSVC_LOAD_DEMO=0`, otherwise the default settings: the log "
        "at INFO, the access log on, written to a file), one per "
        "scenario; with 2 workers the service uses both cores (which it shares with wrk), the bare handler one. "
        "The targets are judged on the row with the most workers. CPU is the server's user+system time during "
        "the measured run per answer, summed over its worker processes and split into their main threads (the "
        "event loops, where every request is handled) and their other threads (aiosqlite's, which write the "
        "click batches), from /proc.", "",
    ]
    rows = []
    for scenario, title in SCENARIOS.items():
        bare = run.bare_rps(scenario)
        for label in (BARE, *run.floors, *run.labels, *run.on_postgresql):
            rps = run.rps(scenario, label)
            share = f"**{rps / bare:.0%}**" if label == run.judged else f"{rps / bare:.0%}"
            rounds = " / ".join(f"{r.rps:,.0f}" for r in run.results[(scenario, label)])

            def median(figure: Callable[[Result], float], scenario: str = scenario, label: str = label) -> float:
                return run.median(scenario, label, figure)
            rows.append([title if label == BARE else "", label, f"{rps:,.0f}", rounds, share,
                         _ms(median(lambda r: r.p50_us)), _ms(median(lambda r: r.p99_us)),
                         f"{median(lambda r: r.cpu_us_per_request):.0f} µs",
                         f"{median(lambda r: r.loop_us_per_request):.0f} µs",
                         f"{median(lambda r: r.other_us_per_request):.0f} µs",
                         str(sum(r.timeouts for r in run.results[(scenario, label)]))])
    out += [load.table(["scenario", "server", "redirects/s", "per round", "vs bare", "p50", "p99", "CPU/request",
                          "event loop", "other threads", "timeouts"], rows), ""]
    if run.postgresql and run.on_postgresql:
        out += [run.postgresql.note("; CPU counts the service's processes only, not the PostgreSQL server's (which "
                                    "writes the click batches there)."), ""]
    verdicts = []
    for scenario, title in SCENARIOS.items():
        ratio = run.ratio(scenario)
        met = "met" if ratio >= TARGETS[scenario] else "**not met**"
        floor = floor_label(max(run.workers))
        beside = (f" The floor with as many processes (the bare handler storing its clicks, nothing else) "
                  f"reached {run.ratio(scenario, floor):.0%}; the service reached "
                  f"{run.rps(scenario, run.judged) / run.rps(scenario, floor):.0%} of the floor."
                  if (scenario, floor) in run.results else "")
        verdicts.append(f"- {title}: {run.judged} {ratio:.0%} of the bare handler (target "
                        f"{TARGETS[scenario]:.0%}): {met}.{beside}")
    out += ["Targets:", "", *verdicts, ""]
    out += ["No click lost: per service process (warm-up, measured and profiled runs; the verification process "
            "alone), the GETs wrk sent, the 302 answers its Lua `response()` counted, and the clicks the "
            "process added to the database, counted after SIGTERM:", ""]
    out += [load.table(["process", "GETs sent", "302 answered", "clicks stored", "equal", "exit code"],
                         [[a.label, f"{a.sent:,}", f"{a.answered:,}", f"{a.stored:,}",
                           "yes" if a.equal else "**no**", str(a.exit_code)] for a in run.accounts]), ""]
    plan = run.plan
    out += ["Query plan of the link lookup (`storage.links.link_by_code`), median "
            f"{plan.median_ms * 1000:.0f} µs alone:", "", "```sql", plan.sql, "```", "", "```",
            *plan.plan, "```", ""]
    for scenario, title in SCENARIOS.items():
        profile = run.profiles.get(scenario)
        cpu = run.cpu_us[scenario]
        if profile is None or not profile.samples:
            reason = profile.error if profile else "not run"
            out += [f"Profile {title}: none ({reason}).", ""]
            continue
        own = Counter({k: v for k, v in profile.inclusive.items() if load.own_code(k)})
        out += [f"Profile {title}: py-spy (`--nonblocking --threads`), {profile.samples:,} samples of the "
                "service's event-loop thread while it was busy, during a further "
                f"{run.profile_s} s run of the same process; cost per request = share of samples × the "
                f"{cpu:.0f} µs of event-loop CPU per request measured above. For scale: the bare handler's "
                f"whole event loop costs {run.bare_loop_us(scenario):.0f} µs per request.", "",
                "Self time (top functions):", "",
                load.table(["function", "share", "per request", ""], _profile_rows(profile, cpu, profile.own, 12)),
                "", "Inclusive time of the service's own code (a lower bound: a non-blocking sample may catch "
                "a stack half unwound):", "",
                load.table(["function", "share", "per request", ""], _profile_rows(profile, cpu, own, 10)), ""]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------------------


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.redirects", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--links", type=int, default=100_000)
    load.wrk_options(parser, duration=20, warmup=5, connections=64)
    parser.add_argument("--profile", type=int, default=8, help="seconds py-spy samples each service run [8]")
    parser.add_argument("--rebuild", action="store_true", help="build the database even when a cached one matches")
    parser.add_argument("--rounds", type=int, default=2,
                        help="rounds of A B (the bare handler, then every service row), medians reported [2]")
    parser.add_argument("--workers", default="1,2",
                        help="worker process counts of the service, one service row each [1,2]")
    postgres.add_argument(parser)
    parser.add_argument("--no-floor", dest="floor", action="store_false",
                        help="skip the floor rows (the bare handler that also stores its clicks)")
    load.output_options(parser, "2,000 links, 1 worker, 1 s per row, no profile")
    args = parser.parse_args(argv)
    if args.smoke:
        args.links, args.duration, args.warmup, args.profile, args.workers, args.rounds = 2_000, 1, 1, 0, "1", 1
    try:
        args.workers = sorted({int(n) for n in args.workers.split(",")})
    except ValueError:
        parser.error("--workers takes numbers separated by commas, e.g. 1,2")
    if not args.workers or not all(1 <= n <= 8 for n in args.workers):
        parser.error("--workers takes counts from 1 to 8")
    if not 1 <= args.rounds <= 5:
        parser.error("--rounds takes 1 to 5")
    if not 0 < args.duration <= 60 or not 0 <= args.warmup <= 30 or not 0 <= args.profile <= 30:
        parser.error("--duration must be 1-60 s, --warmup 0-30 s, --profile 0-30 s")
    return args


def floor_label(processes: int) -> str:
    return f"floor, {processes} process" + ("es" if processes > 1 else "")


def floor_args(db: Path, processes: int) -> list[str]:
    return ["-m", "bench.floor", "--port", "{port}", "--db", str(db), "--processes", str(processes)]


def pg_label(workers: int) -> str:
    return postgres.label(service_label(workers))


def service_label(workers: int) -> str:
    return f"service, {workers} worker" + ("s" if workers > 1 else "")


def _service_run(label: str, db: Path, scripts: Scripts, scenario: str, settings: load.Load, profile_s: int,
                 out_dir: Path, workers: int, database_url: str | None = None
                 ) -> tuple[Result, Accounting, load.Profile]:
    def clicks() -> int:
        return (postgres.count(database_url, "SELECT count(*) FROM clicks WHERE account_id <> $1", FLOOR_ACCOUNT)
                if database_url else count_clicks(db))
    before = clicks()
    profile = load.Profile()
    env = {**SERVICE_ENV, **postgres.environment(database_url)}
    with load.service(f"linksvc ({label})", db, env, "--workers", str(workers)) as service:
        print(f"measuring the service, {SCENARIOS[scenario]} ...")
        result, made = measure(service, scripts, scenario, settings)
        if profile_s:
            raw = out_dir / f"profile-{scenario}.txt"
            with load.profiling(service, profile_s, raw):
                made += measure(service, scripts, scenario, settings, seconds=profile_s, warmup=False)[1]
            if raw.is_file():
                profile = load.read_profile(raw)
            else:
                err = raw.with_suffix(".err")
                profile.error = err.read_text().strip()[:300] if err.is_file() else "py-spy wrote nothing"
        exit_code = load.stop(service)
    acc = Accounting(label, sum(r.get_sent for r in made), sum(r.get_302 for r in made), clicks() - before,
                     exit_code)
    return result, acc, profile


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    load.wrk_binary()
    settings = load.Load(args.connections, args.threads, args.duration, args.warmup)
    dataset = data.ensure_links(args.links, rebuild=args.rebuild)
    compared = data.check_links(dataset.path, args.links)
    print(f"rows identical to the save path's: {compared} links compared")
    db = data.working_copy(dataset.path)
    plan = lookup_plan(db, data.all_codes(db)[args.links // 2])
    with postgres.copied(args.postgresql, db) as pg:  # dropped at the end, even when the run fails
        pg_url = pg.url if pg else None
        print("plan of the link lookup:\n  " + "\n  ".join(plan.plan))
        results: dict[tuple[str, str], list[Result]] = {}
        accounts: list[Accounting] = []
        profiles: dict[str, Profile] = {}
        cpu_us: dict[str, float] = {}
        with tempfile.TemporaryDirectory(prefix="bench-redirects-") as tmp:
            directory = Path(tmp)
            scripts = Scripts(directory, directory / "codes.txt", directory / "agents.txt")
            scripts.codes.write_text("\n".join(data.all_codes(db)) + "\n")
            scripts.agents.write_text("\n".join(weighted_agents()) + "\n")

            before = count_clicks(db)
            with load.service("linksvc (verification)", db, SERVICE_ENV) as service:
                checked, answered = verify(service, data.sample_links(db, 12))
                exit_code = load.stop(service)
            accounts.append(Accounting("verification", answered, answered, count_clicks(db) - before, exit_code))
            print("verified through the real server:\n  " + "\n  ".join(checked))

            def bare(round_: int) -> None:
                with load.running("bare 302 handler", load.BASELINE) as server:
                    print(f"measuring the bare 302 handler (round {round_}) ...")
                    for scenario in SCENARIOS:
                        print(f"  {SCENARIOS[scenario]} ...")
                        results.setdefault((scenario, BARE), []).append(measure(server, scripts, scenario, settings)[0])

            def floor_rows(round_: int) -> None:
                for processes in args.workers if args.floor else ():
                    label = floor_label(processes)
                    with load.running(label, floor_args(db, processes), stop=load.stop) as server:
                        for scenario in SCENARIOS:
                            print(f"measuring the {label} (round {round_}), {SCENARIOS[scenario]} ...")
                            results.setdefault((scenario, label), []).append(
                                measure(server, scripts, scenario, settings)[0])

            def service_rows(round_: int) -> None:
                for workers in args.workers:
                    label = service_label(workers)
                    for scenario in SCENARIOS:
                        # py-spy samples the single-process runs (one event loop to read), in the first round.
                        profile_s = args.profile if workers == 1 and round_ == 1 else 0
                        result, acc, profile = _service_run(f"{label}, {scenario}, round {round_}", db, scripts,
                                                            scenario, settings, profile_s, directory, workers)
                        results.setdefault((scenario, label), []).append(result)
                        accounts.append(acc)
                        if workers == 1 and round_ == 1:
                            profiles[scenario] = profile
                            cpu_us[scenario] = result.loop_us_per_request
                    if pg_url is None:
                        continue
                    label = pg_label(workers)
                    for scenario in SCENARIOS:
                        result, acc, _ = _service_run(f"{label}, {scenario}, round {round_}", db, scripts, scenario,
                                                      settings, 0, directory, workers, pg_url)
                        results.setdefault((scenario, label), []).append(result)
                        accounts.append(acc)

            for round_ in range(1, args.rounds + 1):  # A B A B: the bare handler, then the service's rows
                bare(round_)
                floor_rows(round_)
                service_rows(round_)
            for scenario in SCENARIOS:
                raw = directory / f"profile-{scenario}.txt"
                if raw.is_file():
                    shutil.copy(raw, REPO_ROOT / "data" / f"bench-redirects-profile-{scenario}.txt")
        run = Run(machine=load.machine(), revision=load.revision(), load=settings, dataset=dataset, compared=compared,
                  checked=checked, results=results, accounts=accounts, plan=plan, profiles=profiles,
                  profile_s=args.profile, cpu_us=cpu_us, workers=args.workers, rounds=args.rounds, postgresql=pg)
        print(summary(run))
        for (scenario, label), runs in results.items():
            for round_, r in enumerate(runs, 1):
                print(f"  {scenario:7} {label:18} round {round_} {r.rps:8,.0f}/s p50 {_ms(r.p50_us)} p99 "
                      f"{_ms(r.p99_us)} cpu {r.cpu_us_per_request:.0f} µs/req (loop {r.loop_us_per_request:.0f}, "
                      f"other {r.other_us_per_request:.0f}) timeouts {r.timeouts}")
        load.publish("redirects", section(run), args)
        return 0 if all(a.equal for a in accounts) else 1


if __name__ == "__main__":
    raise SystemExit(main())
