"""The one load driver of the benchmarks: servers, wrk, the A B A pairing beside the baseline, the figures'
section of docs/benchmarks.md.

Servers under test run each in its own process on 127.0.0.1 (:func:`running` starts ``python args...`` with
``{port}`` replaced by a free port, waits, bounded, until ``/healthz`` answers, and on exit stops that process
only). :func:`run_wrk` runs wrk (Debian package ``wrk``) with a Lua script that prints its figures as one JSON
line after a marker, so nothing is scraped from wrk's human output; :func:`measure` is a warm-up run then the
measured run with the server's CPU time read around it; :class:`OpenLoop` is the Python open-loop load where
wrk is not used (``bench.soak``). :func:`beside_baseline` measures the bare baseline
(``bench/baseline.py``) before and after the service rows. :func:`publish` rewrites only the benchmark's own
``<!-- bench:NAME -->`` section (of docs/benchmarks.md, or of ``--output``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TypeVar

import aiohttp

from bench import data
from linksvc.settings import REPO_ROOT

T = TypeVar("T")
HOST = "127.0.0.1"
API = "/api/storefront/v1"
ADMIN = {"Authorization": "Bearer bench-admin-token"}
# Of every service started: its default settings (the log at INFO, the access log on: the README's service is the
# benchmarked one), with the admin token the benchmarks use. Its log goes to a file (see running()).
DEFAULTS = {"LINKSVC_ADMIN_TOKEN": "bench-admin-token"}
CLOCK_TICK = os.sysconf("SC_CLK_TCK")
BASELINE = ["-m", "bench.baseline", "--port", "{port}"]

# ---------------------------------------------------------------------------------------------------------
# Server processes.


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def proc_cpu(pid: int | str, task: Path | None = None) -> float:
    """User plus system CPU seconds of a process (or one of its threads, ``task``) so far, from Linux /proc."""
    fields = ((task or Path(f"/proc/{pid}")) / "stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICK


def children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


@dataclass
class Server:
    name: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path | None = None  # the server's log file, while it runs

    def url(self, path: str) -> str:
        return f"http://{HOST}:{self.port}{path}"

    def cpu_seconds(self) -> float:
        """User plus system CPU time the server process and its worker processes (``--workers``) have used
        so far (Linux /proc)."""
        total = proc_cpu(self.process.pid)
        for child in children(self.process.pid):
            try:
                total += proc_cpu(child)
            except OSError:  # a worker that just ended
                continue
        return total


def thread_cpu(server: Server) -> tuple[float, float]:
    """CPU seconds (user + system) used so far by the main threads of the server and of its worker
    processes (their event loops) and by their other threads (aiosqlite's worker threads), from Linux
    /proc. A supervisor's own main thread only waits; it is counted with the event loops."""
    main = other = 0.0
    for pid in [server.process.pid, *children(server.process.pid)]:
        try:
            tasks = list(Path(f"/proc/{pid}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                seconds = proc_cpu(pid, task)
            except OSError:  # a thread that just ended
                continue
            if task.name == str(pid):
                main += seconds
            else:
                other += seconds
    return main, other


def _loopback(url: str) -> None:
    if not url.startswith(f"http://{HOST}:"):
        raise ValueError(f"benchmarks talk only to {HOST}: {url}")


def get_json(url: str, headers: Mapping[str, str] | None = None, timeout: float = 30.0) -> tuple[int, Any]:
    """GET ``url``; returns (status, parsed JSON body). Only loopback URLs are allowed."""
    _loopback(url)
    request = urllib.request.Request(url, headers=dict(headers or {}))
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def post_json(url: str, body: Any, headers: Mapping[str, str] | None = None, timeout: float = 300.0
              ) -> tuple[int, Any]:
    """POST ``body`` (JSON text, or a value to encode; GET when None): (status, parsed answer, or the text of
    an error answer; status 0 when no answer came within ``timeout``)."""
    _loopback(url)
    data = None if body is None else (body if isinstance(body, str) else json.dumps(body)).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")
    except TimeoutError:
        return 0, f"no answer within {timeout:.0f} s"


def authorize(server: Server, key: str) -> str:
    """The bearer token the API key ``key`` is given."""
    status, answer = get_json(server.url(f"{API}/auth/authorize"), {"x-api-key": key})
    if status != 200 or not isinstance(answer, dict) or not isinstance(answer.get("data"), str):
        raise SystemExit(f"verification failed: authorize answered {status}: {answer}")
    return str(answer["data"])


def _wait_ready(server: Server, deadline: float) -> None:
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"{server.name} exited with {server.process.returncode} before it was ready")
        try:
            if get_json(server.url("/healthz"), timeout=2.0)[0] == 200:
                return
        except (OSError, ValueError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{server.name} was not ready on port {server.port} in time")


def drain(server: Server, quick: float = 0.1, deadline_s: float = 300.0) -> float:
    """Wait until ``/healthz`` answers within ``quick`` seconds: requests of a finished load run that are
    still queued (aiohttp does not cancel a handler when its client goes away) must not eat into the next
    run. Bounded by ``deadline_s``; returns the seconds waited."""
    started = time.monotonic()
    while time.monotonic() - started < deadline_s:
        asked = time.monotonic()
        status, _ = get_json(server.url("/healthz"), timeout=deadline_s)
        if status == 200 and time.monotonic() - asked < quick:
            return time.monotonic() - started
        time.sleep(0.2)
    raise RuntimeError(f"{server.name} was still busy {deadline_s:.0f} s after the load stopped")


def stop(server: Server, grace: float = 60.0) -> int:
    """SIGTERM (the service's clean shutdown writes the buffered clicks), then SIGKILL after ``grace``."""
    process = server.process
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)
            raise RuntimeError(f"{server.name} did not stop within {grace:.0f} s of SIGTERM") from None
    return int(process.returncode)


def _interrupt(server: Server) -> None:
    process = server.process
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


@contextmanager
def running(name: str, args: list[str], env: Mapping[str, str] | None = None,
            ready_timeout: float = 120.0, stop: Callable[[Server], object] | None = None) -> Iterator[Server]:
    """Run ``python args...`` from the repository root with ``{port}`` in args replaced by a free port;
    ``stop`` ends it (default: SIGINT, then SIGKILL)."""
    port = free_port()
    command = [sys.executable, *(a.replace("{port}", str(port)) for a in args)]
    # The server's log (the service's access log: a line per request) goes to a file, as a served log does,
    # not to the terminal; its end is shown if the server does not start or stop cleanly.
    log = tempfile.NamedTemporaryFile(prefix="linksvc-bench-", suffix=".log", delete=False)  # noqa: SIM115
    process = subprocess.Popen(command, cwd=REPO_ROOT, env={**os.environ, **(env or {})},
                               stdout=subprocess.DEVNULL, stderr=log)
    log.close()
    server = Server(name, port, process, Path(log.name))
    clean = False
    try:
        _wait_ready(server, time.monotonic() + ready_timeout)
        yield server
        clean = True
    finally:
        try:
            (stop or _interrupt)(server)
        except BaseException:
            clean = False
            raise
        finally:
            if not clean:
                print(f"{name}'s log ends with:\n" + "\n".join(
                    Path(log.name).read_text(errors="replace").splitlines()[-20:]), file=sys.stderr)
            Path(log.name).unlink(missing_ok=True)


def serve(db: Path | str, *extra: str) -> list[str]:
    """The arguments of ``linksvc serve`` on ``db`` at ``{port}``."""
    return ["-m", "linksvc", "serve", "--port", "{port}", "--db", str(db), *extra]


HELD = "holding "  # the start of the line each worker logs once its links are held (linksvc.app)


@contextmanager
def service(name: str, db: Path | str, env: Mapping[str, str], *extra: str) -> Iterator[Server]:
    """The service on ``db``, stopped with SIGTERM (a clean shutdown) at the end of the block; yielded once
    every worker holds its links, so that no measured request is a link's first read."""
    workers = int(extra[extra.index("--workers") + 1]) if "--workers" in extra else 1
    with running(name, serve(db, *extra), env=env, stop=stop) as server:
        deadline = time.monotonic() + 120
        logged = env.get("LINKSVC_LOG_LEVEL", "INFO").upper() in ("DEBUG", "INFO")
        while logged and server.log is not None and server.log.read_text(errors="replace").count(HELD) < workers:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name}'s workers did not hold their links in time")
            time.sleep(0.2)
        yield server


def beside_baseline(name: str, bare: Callable[[Server, str], T], rows: Callable[[], object]) -> tuple[T, T]:
    """The pairing of every figure with its baseline, in the same run: ``bare(server, "before")`` on a fresh
    bare baseline process, then ``rows()`` (the service's), then ``bare(server, "after")`` on another."""
    found = []
    for when in ("before", "after"):
        if when == "after":
            rows()
        with running(name, BASELINE) as server:
            print(f"measuring the {name}{' again' if when == 'after' else ''} ...")
            found.append(bare(server, when))
    return found[0], found[1]

# ---------------------------------------------------------------------------------------------------------
# py-spy on a server: where its event loop spends its time.


@dataclass
class Profile:
    samples: int = 0
    own: Counter[str] = field(default_factory=Counter)  # self samples per function
    inclusive: Counter[str] = field(default_factory=Counter)
    error: str = ""


def _frame_name(frame: str) -> str:
    """``handler (api/links/resolver.py:42)`` -> ``handler (api/links/resolver.py)``, paths shortened."""
    name, _, where = frame.partition(" (")
    where = where.rstrip(")").rsplit(":", 1)[0]
    for marker in ("site-packages/", "/lib/python3", str(REPO_ROOT) + "/"):
        if marker in where:
            where = where.split(marker, 1)[1]
            if marker == "/lib/python3":
                where = "stdlib " + where.split("/", 1)[-1]
    return f"{name} ({where})" if where else name


def read_profile(path: Path) -> Profile:
    """Self and inclusive samples per function of the main thread (the event loop) from py-spy's raw
    output with ``--threads``; the other threads' cost is measured as CPU time instead."""
    profile = Profile()
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        head, _, rest = stack.partition(";")
        if not head.startswith("thread (") or not head.endswith(": MainThread"):
            continue
        frames = [_frame_name(f) for f in rest.split(";") if f]
        if not frames:
            continue
        n = int(count)
        profile.samples += n
        profile.own[frames[-1]] += n
        for name in set(frames):
            profile.inclusive[name] += n
    return profile


@contextmanager
def profiling(server: Server, seconds: int, out: Path) -> Iterator[None]:
    """py-spy on the server for ``seconds`` (raw, non-blocking) around the block."""
    spy = REPO_ROOT / ".venv" / "bin" / "py-spy"
    command = [str(spy), "record", "--pid", str(server.process.pid), "--duration", str(seconds),
               "--format", "raw", "-o", str(out), "--nonblocking", "--threads"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        yield
    finally:
        try:
            _, err = process.communicate(timeout=seconds + 60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            err = b"py-spy did not finish"
        if process.returncode != 0:
            out.with_suffix(".err").write_bytes(err or b"")


def own_code(name: str) -> bool:
    """A frame of the service's own code (its entry point excepted)."""
    return "linksvc/__main__.py" not in name and any(f"({p}" in name for p in ("api/", "linksvc/", "storage/"))


# ---------------------------------------------------------------------------------------------------------
# In-process benchmarks: how long work keeps the event loop from running.


async def loop_block(work: Callable[[], Awaitable[object]]) -> tuple[float, float]:
    """(wall seconds of ``work``, worst lateness in seconds of a 1 ms ticker on the loop meanwhile)."""
    late = 0.0
    running = True

    async def ticker() -> None:
        nonlocal late
        while running:
            due = time.perf_counter() + 0.001
            await asyncio.sleep(0.001)
            late = max(late, time.perf_counter() - due)

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0.01)
    started = time.perf_counter()
    await work()
    wall = time.perf_counter() - started
    running = False
    await task
    return wall, late


# ---------------------------------------------------------------------------------------------------------
# wrk: one bounded run with a Lua script whose done() prints the figures as one JSON line after a marker.

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


# The start of a Lua script that counts answers itself: a monotonic clock ``now()`` in seconds, and each
# thread registered in ``threads`` with its ``thread_id`` (``done()`` reads their counts). No ``%`` in it.
LUA_PRELUDE = r"""
local ffi = require("ffi")
ffi.cdef[[ typedef struct { long tv_sec; long tv_nsec; } bench_ts; int clock_gettime(int, bench_ts *); ]]
local ts = ffi.new("bench_ts")
local function now() ffi.C.clock_gettime(1, ts); return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9 end
local threads = {}
function setup(thread) thread:set("thread_id", #threads); threads[#threads + 1] = thread end
"""


def wrk_binary() -> str:
    found = shutil.which("wrk")
    if found is None:
        raise SystemExit(INSTALL_HINT)
    return found


def lua_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def lua_headers(headers: Mapping[str, str]) -> str:
    return "\n".join(f"wrk.headers[{lua_string(k)}] = {lua_string(v)}" for k, v in headers.items())


def lua_script(paths: Sequence[str], headers: Mapping[str, str]) -> str:
    if not paths:
        raise ValueError("wrk needs at least one path")
    return _LUA % {"paths": ",\n".join(lua_string(p) for p in paths), "headers": lua_headers(headers), "mark": MARK}


def run_wrk(url: str, script: Path, seconds: int, mark: str = MARK, connections: int = 64, threads: int = 2,
            timeout: int = 10) -> dict[str, Any]:
    """One wrk run of ``seconds`` against ``url`` (loopback only) with the Lua ``script``; the JSON its
    ``done()`` printed after ``mark``."""
    _loopback(url)
    command = [wrk_binary(), f"-t{threads}", f"-c{connections}", f"-d{seconds}s", f"--timeout={timeout}s",
               "-s", str(script), url]
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + timeout + 60)
    line = next((x for x in done.stdout.splitlines() if x.startswith(mark)), None)
    if done.returncode != 0 or line is None:
        raise RuntimeError(f"wrk failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    found: dict[str, Any] = json.loads(line[len(mark):])
    return found


def run(base_url: str, paths: Sequence[str], headers: Mapping[str, str], load: Load, seconds: int) -> Result:
    """One wrk run of ``seconds`` GETting ``paths`` (one at random per request) from ``base_url``."""
    with tempfile.TemporaryDirectory(prefix="bench-wrk-") as tmp:
        script = Path(tmp) / "load.lua"
        script.write_text(lua_script(paths, headers))
        return Result(**run_wrk(base_url, script, seconds, MARK, load.connections, load.threads, load.timeout))


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


# ---------------------------------------------------------------------------------------------------------
# docs/benchmarks.md: the machine, the revision measured, each benchmark's own section between markers.

DOC = REPO_ROOT / "docs" / "benchmarks.md"
INTRO = """# Benchmarks

Figures measured on the project's 2-core machines (each section names the CPU model, cores, Python
version and date of its run); each benchmark runs with one command; every figure has its baseline from the
same run: a bare aiohttp handler returning a fixed small JSON body, in its own process, under the same load
settings, since these machines are noisy. Benchmarks live in `bench/`, talk only to 127.0.0.1, stop by
themselves, and are not part of the test suite. Each rewrites only its own section of this file.
"""


@dataclass(frozen=True)
class Machine:
    cpu: str
    cores: int
    python: str
    system: str
    sqlite: str
    aiohttp: str
    wrk: str
    date: str

    def line(self) -> str:
        return (f"{self.cpu}, {self.cores} cores; {self.system}; Python {self.python}, SQLite {self.sqlite}, "
                f"aiohttp {self.aiohttp}, wrk {self.wrk}; {self.date}")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _wrk_version() -> str:
    try:
        out = subprocess.run(["wrk", "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "not installed"
    match = re.search(r"wrk (\S+)", out.stdout + out.stderr)
    return match.group(1) if match else "unknown"


def machine() -> Machine:
    return Machine(
        cpu=_cpu_model(), cores=os.cpu_count() or 0, python=platform.python_version(),
        system=f"{platform.system()} {platform.release()}", sqlite=sqlite3.sqlite_version,
        aiohttp=version("aiohttp"), wrk=_wrk_version(),
        date=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    )


def revision() -> str:
    """The commit measured, and the files of the work tree that differ from it (uncommitted work)."""
    def git(*args: str) -> str:
        try:
            out = subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return ""
        # Only trailing newlines go: `git status --porcelain` lines start with meaningful spaces.
        return out.stdout.rstrip("\n") if out.returncode == 0 else ""

    commit, subject = (git("log", "-1", "--format=%h%n%s") or "unknown\n").split("\n", 1)
    if len(subject) > 72:
        subject = subject[:72].rsplit(" ", 1)[0].rstrip(",;:") + " …"
    changed = [line[3:] for line in git("status", "--porcelain", "--untracked-files=all").splitlines()
               if not line[3:].startswith(("bench/", "docs/benchmarks.md", "tests/"))]
    return f"commit {commit} ({subject})" + (f", with uncommitted changes to {', '.join(changed)}" if changed else "")


def markers(name: str) -> tuple[str, str]:
    return f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"


def replace_section(text: str, name: str, body: str) -> str:
    """``text`` with section ``name`` set to ``body`` (appended when absent)."""
    start, end = markers(name)
    section = f"{start}\n{body.strip()}\n{end}"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    if pattern.search(text):
        return pattern.sub(lambda _: section, text, count=1)
    return text.rstrip("\n") + "\n\n" + section + "\n"


def write_section(name: str, body: str, doc: Path = DOC) -> Path:
    text = doc.read_text(encoding="utf-8") if doc.is_file() else INTRO
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(replace_section(text, name, body), encoding="utf-8")
    return doc


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def wrk_options(parser: argparse.ArgumentParser, duration: int, warmup: int, connections: int,
                connections_help: str = "wrk connections") -> None:
    """``--duration``, ``--warmup``, ``--connections`` and ``--threads`` of a wrk benchmark, with its defaults."""
    parser.add_argument("--duration", type=int, default=duration, help=f"seconds measured per row [{duration}]")
    parser.add_argument("--warmup", type=int, default=warmup, help=f"seconds of warm-up before each row [{warmup}]")
    parser.add_argument("--connections", type=int, default=connections, help=f"{connections_help} [{connections}]")
    parser.add_argument("--threads", type=int, default=2, help="wrk threads [2]")


def output_options(parser: argparse.ArgumentParser, smoke: str) -> None:
    """``--no-docs``, ``--output`` and ``--smoke`` (``smoke`` says what it runs), the same for every benchmark."""
    parser.add_argument("--no-docs", action="store_true", help="print only; leave docs/benchmarks.md alone")
    parser.add_argument("--output", type=Path, default=None,
                        help="write the section to this file instead of docs/benchmarks.md")
    parser.add_argument("--smoke", action="store_true",
                        help=f"a check that it works, in seconds: {smoke}; writes its section to --output, "
                        "by default a scratch file, never docs/benchmarks.md")


def publish(name: str, text: str, args: argparse.Namespace) -> None:
    """Rewrite section ``name`` (unless ``--no-docs``) of ``--output``, of a scratch file for ``--smoke``, or
    of docs/benchmarks.md."""
    if args.no_docs:
        return
    doc = args.output or (Path(tempfile.gettempdir()) / f"bench-{name}-smoke.md" if args.smoke else DOC)
    print(f"wrote {write_section(name, text, doc)}")

# ---------------------------------------------------------------------------------------------------------
# The Python open-loop load of bench.soak, where wrk is not used, and its sampler of the service's memory
# and CPU.
#
# Each kind of request has a fixed schedule: request ``i`` is due at ``start + i / rate``, sent then whatever
# happened to the ones before it (open loop, like wrk2), and its latency is measured from that due time, so a
# stall of the service (or of this client) shows as latency instead of as fewer requests (no coordinated
# omission). A request counts in the window its due time falls in. Another task reads /proc every second.
# Times come from ``time.monotonic()``: uvloop's ``loop.time()`` has millisecond steps, cached per iteration.


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes | None
    expect: int  # the status of a right answer
    check: bytes  # a right answer's body (or Location) holds this
    label: str = ""  # what the end checks count it as (an event's type)


@dataclass
class Tally:
    """One kind of request in one window: due, answered, wrong answers and failures, latencies."""

    sent: int = 0
    answered: int = 0  # any HTTP answer
    ok: int = 0  # the expected status with the expected content
    wrong: int = 0  # another status, or the expected one without the expected content
    timeouts: int = 0  # sent, no answer in time
    unsent: Counter[str] = field(default_factory=Counter)  # timed out before it was written, per phase
    socket_errors: int = 0
    error_kinds: Counter[str] = field(default_factory=Counter)  # exception class per socket error
    statuses: Counter[int] = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)  # seconds from due time to the whole answer read
    lag_max: float = 0.0  # the longest a request left after its due time (the client's own delay)
    ok_by: Counter[str] = field(default_factory=Counter)  # right answers per request label
    lost_by: Counter[str] = field(default_factory=Counter)  # sent, then no answer (timeout, socket error)

    @property
    def errors(self) -> int:
        return self.wrong + self.timeouts + self.unsent.total() + self.socket_errors

    @staticmethod
    def sum(tallies: list[Tally]) -> Tally:
        whole = Tally()
        for t in tallies:
            for attr in ("sent", "answered", "ok", "wrong", "timeouts", "socket_errors"):
                setattr(whole, attr, getattr(whole, attr) + getattr(t, attr))
            whole.unsent.update(t.unsent)
            whole.statuses.update(t.statuses)
            whole.error_kinds.update(t.error_kinds)
            whole.latencies += t.latencies
            whole.lag_max = max(whole.lag_max, t.lag_max)
        return whole

    def pct(self, q: float) -> float:
        """Percentile ``q`` (0-1) of the latencies, in seconds (nearest rank); 0 without answers."""
        if not self.latencies:
            return 0.0
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


@dataclass(frozen=True)
class Sample:
    """The service at one moment: its processes (the server and its workers) summed."""

    at: float  # seconds since the start of the load
    pids: tuple[int, ...]
    rss_kb: int
    anon_kb: int
    file_kb: int
    threads: int
    fds: int
    cpu_s: float  # user + system CPU seconds used so far, all processes
    client_cpu_s: float  # the same for this load generator
    db_bytes: int  # the database file and its WAL
    wal_bytes: int


@dataclass
class Kind:
    name: str
    rate: float  # requests per second
    make: Callable[[int], Request]  # request number -> request
    tallies: list[Tally] = field(default_factory=list)  # per window


def _phase(name: str) -> Callable[[aiohttp.ClientSession, SimpleNamespace, object], Awaitable[None]]:
    async def hook(session: aiohttp.ClientSession, context: SimpleNamespace, params: object) -> None:
        context.trace_request_ctx.phase = name

    return hook


def _status(pid: int) -> dict[str, int]:
    found: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile", "Threads"):
            found[key] = int(value.split()[0])
    return found


def sample(pid: int, at: float, db: Path) -> Sample:
    """The server ``pid`` and its child processes, from Linux /proc."""
    pids = (pid, *children(pid))
    rss = anon = file = threads = fds = 0
    cpu = 0.0
    for p in pids:
        try:
            status = _status(p)
            used = proc_cpu(p)
            fds += len(os.listdir(f"/proc/{p}/fd"))
        except OSError:  # a process that just ended
            continue
        rss, anon, file = rss + status["VmRSS"], anon + status["RssAnon"], file + status["RssFile"]
        threads += status["Threads"]
        cpu += used
    me = os.times()
    sizes = [p.stat().st_size if p.is_file() else 0 for p in (db, Path(f"{db}-wal"))]
    return Sample(at, pids, rss, anon, file, threads, fds, cpu, me.user + me.system, sum(sizes), sizes[1])


def fsync_seconds(path: Path) -> float:
    """Time to write 4 KiB to ``path`` and fsync it: the disk the database lives on, as another writer sees it."""
    started = time.monotonic()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        os.pwrite(fd, os.urandom(4096), 0)
        os.fsync(fd)
    finally:
        os.close(fd)
    return time.monotonic() - started


@dataclass
class OpenLoop:
    base_url: str
    kinds: list[Kind]
    duration: float
    window: float
    timeout: float
    pid: int
    db: Path
    account: str
    connections: int = 256  # per kind: more requests in flight wait for one in the client
    samples: list[Sample] = field(default_factory=list)
    wallet: list[int] = field(default_factory=list)  # wallet_lines_max at the end of each window
    fsyncs: list[tuple[float, float]] = field(default_factory=list)  # (at, seconds) of fsync_seconds, each second
    start: float = 0.0

    @property
    def windows(self) -> int:
        return int(-(-self.duration // self.window))

    def span(self, w: int) -> tuple[float, float]:
        """Start and end of window ``w``, in seconds since the start of the load."""
        return w * self.window, min((w + 1) * self.window, self.duration)

    def at(self, t: float) -> Sample:
        """The last sample taken by ``t`` (seconds since the start of the load)."""
        return [s for s in self.samples if s.at <= t + 0.25][-1]

    def window_samples(self, w: int) -> tuple[Sample, Sample]:
        a, b = self.span(w)
        return self.at(a), self.at(b)

    def cpu(self, w: int) -> tuple[float, float]:
        """(service CPU, load generator CPU) over window ``w``, each as a share of one core."""
        s, e = self.window_samples(w)
        wall = max(e.at - s.at, 1e-9)
        return (e.cpu_s - s.cpu_s) / wall, (e.client_cpu_s - s.client_cpu_s) / wall

    async def _one(self, session: aiohttp.ClientSession, kind: Kind, request: Request, due: float) -> None:
        tally = kind.tallies[min(len(kind.tallies) - 1, int((due - self.start) / self.window))]
        tally.sent += 1
        tally.lag_max = max(tally.lag_max, time.monotonic() - due)
        # Where the request is (trace hooks): "pool" waiting for a free connection of the pool, "connect"
        # opening one (the server accepts late when busy), "sent" on the wire.
        written = SimpleNamespace(phase="pool")
        try:
            async with session.request(request.method, self.base_url + request.path, headers=request.headers,
                                       data=request.body, allow_redirects=False,
                                       trace_request_ctx=written) as answer:
                body = await answer.read()
                latency = time.monotonic() - due
                tally.answered += 1
                tally.statuses[answer.status] += 1
                tally.latencies.append(latency)
                seen = answer.headers.get("Location", "").encode() if request.expect in (301, 302) else body
                if answer.status == request.expect and request.check in seen:
                    tally.ok += 1
                    tally.ok_by[request.label] += 1
                else:
                    tally.wrong += 1
        except TimeoutError:
            if written.phase != "sent":
                tally.unsent[written.phase] += 1
                return
            tally.timeouts += 1
            tally.lost_by[request.label] += 1
        except (aiohttp.ClientError, OSError) as exc:
            tally.socket_errors += 1
            tally.error_kinds[type(exc).__name__] += 1
            if written.phase == "sent":
                tally.lost_by[request.label] += 1

    async def _schedule(self, kind: Kind) -> None:
        loop = asyncio.get_running_loop()
        connector = aiohttp.TCPConnector(limit=self.connections)
        timeout = aiohttp.ClientTimeout(total=self.timeout)
        trace = aiohttp.TraceConfig()
        trace.on_connection_create_start.append(_phase("connect"))
        trace.on_connection_create_end.append(_phase("connected"))
        trace.on_connection_reuseconn.append(_phase("connected"))
        trace.on_request_headers_sent.append(_phase("sent"))
        async with aiohttp.ClientSession(connector=connector, timeout=timeout, auto_decompress=False,
                                         trace_configs=[trace]) as session:
            mine: set[asyncio.Task[None]] = set()
            i = 0
            while (due := self.start + i / kind.rate) < self.start + self.duration:
                if (wait := due - time.monotonic()) > 0:
                    await asyncio.sleep(wait)
                task = loop.create_task(self._one(session, kind, kind.make(i), due))
                mine.add(task)
                task.add_done_callback(mine.discard)
                i += 1
            if mine:
                await asyncio.wait(mine)  # bounded: each request times out after self.timeout

    async def _sampler(self) -> None:
        n = 0
        while True:
            self.samples.append(sample(self.pid, time.monotonic() - self.start, self.db))
            if n and n % round(self.window) == 0 and len(self.wallet) < self.windows:
                self.wallet.append(await asyncio.to_thread(data.wallet_lines_max, self.db, self.account))
            n += 1
            await asyncio.sleep(max(0.0, self.start + n - time.monotonic()))

    async def _disk(self) -> None:
        probe = self.db.with_name("fsync-probe")
        while True:
            at = time.monotonic() - self.start
            self.fsyncs.append((at, await asyncio.to_thread(fsync_seconds, probe)))
            await asyncio.sleep(max(0.0, 1.0 - (time.monotonic() - self.start - at)))

    def fsync_max(self, w: int) -> float:
        a, b = self.span(w)
        return max((s for at, s in self.fsyncs if a <= at < b), default=0.0)

    async def run(self, on_window: Callable[[int], object] = lambda w: None) -> None:
        loop = asyncio.get_running_loop()
        for kind in self.kinds:
            kind.tallies = [Tally() for _ in range(self.windows)]
        self.start = time.monotonic() + 0.5
        sampler, disk = loop.create_task(self._sampler()), loop.create_task(self._disk())
        schedules = [loop.create_task(self._schedule(kind)) for kind in self.kinds]
        for w in range(1, self.windows + 1):
            await asyncio.sleep(max(0.0, self.start + min(w * self.window, self.duration) - time.monotonic()))
            on_window(w - 1)
        await asyncio.gather(*schedules)
        await asyncio.sleep(max(0.0, self.start + self.duration + 1.0 - time.monotonic()))
        sampler.cancel()
        disk.cancel()
        self.samples.append(sample(self.pid, time.monotonic() - self.start, self.db))
        while len(self.wallet) < self.windows:
            self.wallet.append(await asyncio.to_thread(data.wallet_lines_max, self.db, self.account))
