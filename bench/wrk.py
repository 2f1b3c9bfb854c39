"""Load generation with wrk (Debian package ``wrk``): one bounded run, its figures read from a Lua hook.

Every run uses a generated Lua script: it sets the headers, picks each request's path from a list (one
path for fixed parameters, many to vary them, chosen at random per request with a per-thread seed), and
prints the summary as one JSON line from ``done()``, so nothing is scraped from wrk's human output.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from bench.servers import Server, drain

MARK = "BENCH_RESULT "
INSTALL_HINT = "wrk is not installed: install it with `apt-get install -y wrk` (Debian package wrk)"

_LUA = """
local paths = {
%(paths)s
}
local count = #paths
%(headers)s
local threads = 0
function setup(thread)
  thread:set("thread_id", threads)
  threads = threads + 1
end
function init(args)
  math.randomseed(7919 * (thread_id + 1))
end
function request()
  return wrk.format("GET", paths[math.random(count)])
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '%(mark)s{"requests": %%d, "duration_us": %%d, "bytes": %%d, "p50_us": %%d, "p90_us": %%d, ' ..
    '"p99_us": %%d, "mean_us": %%.1f, "max_us": %%d, "connect_errors": %%d, "read_errors": %%d, ' ..
    '"write_errors": %%d, "status_errors": %%d, "timeouts": %%d}\\n',
    summary.requests, summary.duration, summary.bytes, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.mean, latency.max, e.connect, e.read, e.write, e.status, e.timeout))
end
"""


@dataclass(frozen=True)
class Load:
    """Load settings, the same for every measurement of a run."""

    connections: int = 64
    threads: int = 2
    duration: int = 20  # seconds measured
    warmup: int = 5  # seconds of the same load before, not measured
    timeout: int = 10  # seconds before wrk counts a request as timed out


@dataclass(frozen=True)
class Result:
    requests: int
    duration_us: int
    bytes: int
    p50_us: int
    p90_us: int
    p99_us: int
    mean_us: float
    max_us: int
    connect_errors: int
    read_errors: int
    write_errors: int
    status_errors: int
    timeouts: int
    server_cpu_s: float = 0.0  # CPU time the server process used during the measured run

    @property
    def cpu_us_per_request(self) -> float:
        return self.server_cpu_s * 1e6 / self.requests if self.requests else 0.0

    @property
    def rps(self) -> float:
        return self.requests / (self.duration_us / 1e6)

    @property
    def errors(self) -> int:
        return self.connect_errors + self.read_errors + self.write_errors + self.status_errors + self.timeouts


def wrk_binary() -> str:
    found = shutil.which("wrk")
    if found is None:
        raise SystemExit(INSTALL_HINT)
    return found


def _lua_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def lua_script(paths: Sequence[str], headers: Mapping[str, str]) -> str:
    if not paths:
        raise ValueError("wrk needs at least one path")
    return _LUA % {
        "paths": ",\n".join(_lua_string(p) for p in paths),
        "headers": "\n".join(f"wrk.headers[{_lua_string(k)}] = {_lua_string(v)}" for k, v in headers.items()),
        "mark": MARK,
    }


def run(base_url: str, paths: Sequence[str], headers: Mapping[str, str], load: Load, seconds: int) -> Result:
    """One wrk run of ``seconds`` against ``base_url`` (loopback only)."""
    if not base_url.startswith("http://127.0.0.1:"):
        raise ValueError(f"benchmarks talk only to 127.0.0.1: {base_url}")
    with tempfile.TemporaryDirectory(prefix="bench-wrk-") as tmp:
        script = Path(tmp) / "load.lua"
        script.write_text(lua_script(paths, headers))
        command = [wrk_binary(), f"-t{load.threads}", f"-c{load.connections}", f"-d{seconds}s",
                   f"--timeout={load.timeout}s", "-s", str(script), base_url]
        done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + load.timeout + 60)
    if done.returncode != 0:
        raise RuntimeError(f"wrk failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}")
    for line in done.stdout.splitlines():
        if line.startswith(MARK):
            return Result(**json.loads(line[len(MARK):]))
    raise RuntimeError(f"wrk printed no result line:\n{done.stdout}")


def measure(server: Server, paths: Sequence[str], headers: Mapping[str, str], load: Load,
            on_drained: Callable[[float], object] = lambda seconds: None) -> Result:
    """A warm-up run (discarded), then the measured run, each followed by a wait until ``server`` has answered
    the requests still queued (``on_drained`` hears how long that took). The server's CPU time is read around
    the measured run. A run with wrong answers (non-2xx/3xx) or socket errors measures nothing useful and is
    refused; timeouts are kept and reported with the figures."""
    base_url = server.url("")
    if load.warmup > 0:
        run(base_url, paths, headers, load, load.warmup)
        on_drained(drain(server))
    cpu_before = server.cpu_seconds()
    result = run(base_url, paths, headers, load, load.duration)
    result = replace(result, server_cpu_s=server.cpu_seconds() - cpu_before)
    on_drained(drain(server))
    if result.status_errors or result.connect_errors or result.read_errors or result.write_errors:
        raise RuntimeError(f"wrk saw non-2xx/3xx answers or socket errors: {result}")
    return result
