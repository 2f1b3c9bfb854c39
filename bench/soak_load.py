"""The soak's open-loop load generator and its sampler of the service's memory and CPU (``bench/soak.py``).

Each kind of request has a fixed schedule: request ``i`` is due at ``start + i / rate``, sent then whatever
happened to the ones before it (open loop, like wrk2), and its latency is measured from that due time, so a
stall of the service (or of this client) shows as latency instead of as fewer requests (no coordinated
omission). A request counts in the window its due time falls in. Another task reads /proc every second.
Times come from ``time.monotonic()``: uvloop's ``loop.time()`` has millisecond steps, cached per iteration.
"""

from __future__ import annotations

import asyncio
import math
import os
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import aiohttp

from bench.data import count, readonly
from bench.load import children, proc_cpu


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


def wallet_lines_max(db: Path, account: str) -> int:
    """The most wallet lines one customer of ``account`` has (a lookup answers all unexpired ones)."""
    with readonly(db, timeout=30) as conn:
        return count(conn, "SELECT max(n) FROM (SELECT count(*) AS n FROM wallet_lines WHERE account_id = ? "
                     "GROUP BY customer_id)", account)


@dataclass
class Load:
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
                self.wallet.append(await asyncio.to_thread(wallet_lines_max, self.db, self.account))
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
            self.wallet.append(await asyncio.to_thread(wallet_lines_max, self.db, self.account))
