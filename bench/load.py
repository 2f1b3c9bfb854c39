"""The one load driver of the benchmarks: servers, wrk, the A B A pairing beside the baseline, the figures'
section of docs/benchmarks.md.

Servers under test run each in its own process on 127.0.0.1 (:func:`running` starts ``python args...`` with
``{port}`` replaced by a free port, waits, bounded, until ``/healthz`` answers, and on exit stops that process
only). :func:`run_wrk` runs wrk (Debian package ``wrk``) with a Lua script that prints its figures as one JSON
line after a marker, so nothing is scraped from wrk's human output; :func:`measure` is a warm-up run then the
measured run with the server's CPU time read around it. :func:`beside_baseline` measures the bare baseline
(``bench/baseline.py``) before and after the service rows. :func:`publish` rewrites only the benchmark's own
``<!-- bench:NAME -->`` section (of docs/benchmarks.md, or of ``--output``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
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
from typing import Any, TypeVar

from linksvc.settings import REPO_ROOT

T = TypeVar("T")
HOST = "127.0.0.1"
API = "/api/storefront/v1"
ADMIN = {"Authorization": "Bearer bench-admin-token"}
QUIET = {"LINKSVC_LOG_LEVEL": "WARNING", "LINKSVC_ADMIN_TOKEN": "bench-admin-token"}  # of every service started
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

    def url(self, path: str) -> str:
        return f"http://{HOST}:{self.port}{path}"

    def cpu_seconds(self) -> float:
        """User plus system CPU time the server process has used so far (Linux /proc)."""
        return proc_cpu(self.process.pid)


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
    process = subprocess.Popen(command, cwd=REPO_ROOT, env={**os.environ, **(env or {})},
                               stdout=subprocess.DEVNULL, stderr=None)
    server = Server(name, port, process)
    try:
        _wait_ready(server, time.monotonic() + ready_timeout)
        yield server
    finally:
        (stop or _interrupt)(server)


def serve(db: Path | str, *extra: str) -> list[str]:
    """The arguments of ``linksvc serve`` on ``db`` at ``{port}``."""
    return ["-m", "linksvc", "serve", "--port", "{port}", "--db", str(db), *extra]


def service(name: str, db: Path | str, env: Mapping[str, str], *extra: str) -> Any:
    """The service on ``db``, stopped with SIGTERM (a clean shutdown) at the end of the block."""
    return running(name, serve(db, *extra), env=env, stop=stop)


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
    """``handler (api/resolver.py:42)`` -> ``handler (api/resolver.py)``, paths shortened."""
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
