"""Redirect latency at a rate the service holds (issue 33): ``.venv/bin/python -m bench.latency``.

Over ``bench.redirects``' 100,000 links, with its realistic mix of user agents and codes drawn at random over
all links: first each server's most (closed loop, 16 connections, ``--probe`` seconds), then a paced run of
``--duration`` seconds in which each of 16 connections waits between its requests so that together they ask
for ``--share`` of the service's most (or ``--rate`` requests/s): the service answers what it is asked, not
as fast as it can, and the latency percentiles (wrk's, from a request's first byte sent to its answer's last
byte) are those of a load it holds. The bare aiohttp handler answering a fixed 302 (``bench/baseline.py``) is
measured the same way at the same rate, in the same run. The service is ``linksvc serve`` with default
settings (``bench.load.DEFAULTS``: one worker, the access log on), measured once every worker holds its
links. Writes its section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench import data, load, redirects

COMMAND = ".venv/bin/python -m bench.latency"
MARK = "BENCH_LATENCY "
CONNECTIONS = 16
BAR_MS = 5.0

_LUA = load.LUA_PRELUDE + r"""
local codes = {}
for line in io.lines(%(codes_file)s) do codes[#codes + 1] = line end
local agents = {}
for line in io.lines(%(agents_file)s) do agents[#agents + 1] = line end
local pause_ms = %(pause_ms)f

function init(args)
  math.randomseed(104729 * (thread_id + 1))
  answered, other = 0, 0
end

function delay()
  return pause_ms
end

function request()
  return wrk.format("GET", "/" .. codes[math.random(#codes)], {["User-Agent"] = agents[math.random(#agents)]})
end

function response(status, headers, body)
  if status == 302 then answered = answered + 1 else other = other + 1 end
end

function done(summary, latency, requests)
  local a, o = 0, 0
  for _, thread in ipairs(threads) do a = a + thread:get("answered"); o = o + thread:get("other") end
  local e = summary.errors
  io.write(string.format(
    '%(mark)s{"requests": %%d, "duration_us": %%d, "p50_us": %%d, "p90_us": %%d, "p99_us": %%d, ' ..
    '"p999_us": %%d, "max_us": %%d, "errors": %%d, "timeouts": %%d, "answered": %%d, "other": %%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency:percentile(99.9), latency.max, e.connect + e.read + e.write + e.status, e.timeout, a, o))
end
"""


@dataclass(frozen=True)
class Run:
    requests: int
    duration_us: int
    p50_us: int
    p90_us: int
    p99_us: int
    p999_us: int
    max_us: int
    errors: int
    timeouts: int
    answered: int
    other: int

    @property
    def rps(self) -> float:
        return self.requests / (self.duration_us / 1e6)


def _script(directory: Path, codes: Path, agents: Path, pause_ms: float) -> Path:
    path = directory / f"paced-{pause_ms:.3f}.lua"
    path.write_text(_LUA % {"codes_file": load.lua_string(str(codes)), "agents_file": load.lua_string(str(agents)),
                            "pause_ms": pause_ms, "mark": MARK})
    return path


def _run(server: load.Server, script: Path, seconds: int) -> Run:
    found = Run(**load.run_wrk(server.url(""), script, seconds, MARK, CONNECTIONS, 2))
    load.drain(server)
    if found.other or found.errors:
        raise RuntimeError(f"{server.name}: answers other than 302 or socket errors: {found}")
    return found


def _row(name: str, run: Run) -> list[str]:
    def ms(us: int) -> str:
        return f"{us / 1000:.2f} ms"
    return [name, f"{run.rps:,.0f}", ms(run.p50_us), ms(run.p90_us), ms(run.p99_us), ms(run.p999_us),
            ms(run.max_us), str(run.timeouts)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.latency", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=int, default=20, help="seconds of each paced run [20]")
    parser.add_argument("--probe", type=int, default=5, help="seconds of each closed-loop run finding the most [5]")
    parser.add_argument("--share", type=float, default=0.5, help="the paced rate as a share of the service's most")
    parser.add_argument("--rate", type=float, default=0.0, help="the paced rate in requests/s (instead of --share)")
    parser.add_argument("--no-docs", dest="docs", action="store_false", help="print only")
    args = parser.parse_args(argv)
    links = data.ensure_links(100_000)
    machine = load.machine()
    with tempfile.TemporaryDirectory(prefix="bench-latency-") as tmp:
        directory = Path(tmp)
        db = directory / "links.db"
        shutil.copyfile(links.path, db)
        codes, agents = directory / "codes.txt", directory / "agents.txt"
        codes.write_text("\n".join(data.all_codes(db)) + "\n")
        agents.write_text("\n".join(redirects.weighted_agents()) + "\n")
        closed = _script(directory, codes, agents, 0.0)
        env = {**load.DEFAULTS, "LINKSVC_LOAD_DEMO": "0"}
        with load.service("linksvc", db, env) as service:
            _run(service, closed, args.probe)  # warm-up
            most = _run(service, closed, args.probe)
            rate = args.rate or most.rps * args.share
            # Each connection waits this long after each answer: 16 of them then ask for about ``rate``.
            pause_ms = CONNECTIONS / rate * 1000
            paced = _script(directory, codes, agents, pause_ms)
            served = _run(service, paced, args.duration)
        with load.running("bare", ["-m", "bench.baseline", "--port", "{port}"]) as bare:
            bare_most = _run(bare, closed, args.probe)
            bare_paced = _run(bare, paced, args.duration)
    verdict = "met" if served.p99_us / 1000 < BAR_MS else "NOT met"
    header = ["server, run", "requests/s", "p50", "p90", "p99", "p99.9", "max", "timeouts"]
    rows = [_row("service, closed loop (its most)", most), _row(f"service, paced ({pause_ms:.2f} ms between "
                                                                  "a connection's requests)", served),
            _row("bare, closed loop (its most)", bare_most), _row("bare, paced the same", bare_paced)]
    body = (f"Command: `{COMMAND}` ({load.revision()}).\n\nMachine: {machine.line()}.\n\n"
            f"Load: wrk, {CONNECTIONS} connections, 2 threads; codes at random over the 100,000 links of "
            f"`bench.redirects`, its mix of user agents. Closed loop: {args.probe} s each, the first discarded; "
            f"paced: {args.duration} s, each connection pausing {pause_ms:.2f} ms after each answer, asking "
            f"for about {rate:,.0f} requests/s ({'given' if args.rate else f'{args.share:.0%} of the service'}"
            f"'s most). The service: `linksvc serve`, default settings (one worker, the access log on).\n\n"
            + load.table(header, rows) +
            f"\n\np99 of redirects at {CONNECTIONS} connections at a rate the service holds: "
            f"{served.p99_us / 1000:.2f} ms (bar: under {BAR_MS:.0f} ms): **{verdict}**.\n")
    print(body)
    if args.docs:
        load.write_section("latency", "## Redirect latency at 16 connections (issue 33)\n\n" + body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
