"""Servers under test, each in its own process on 127.0.0.1, started and stopped by the benchmark.

:func:`running` starts a command, waits (bounded) until its ``/healthz`` answers, and on exit stops that
process only (SIGINT, then SIGKILL after a grace period). :func:`get_json` is the small stdlib HTTP
client the benchmarks use to set up and verify before measuring.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from linksvc.settings import REPO_ROOT

HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    name: str
    port: int
    process: subprocess.Popen[bytes]

    def url(self, path: str) -> str:
        return f"http://{HOST}:{self.port}{path}"

    def cpu_seconds(self) -> float:
        """User plus system CPU time the server process has used so far (Linux /proc)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def get_json(url: str, headers: Mapping[str, str] | None = None, timeout: float = 30.0) -> tuple[int, Any]:
    """GET ``url``; returns (status, parsed JSON body). Only loopback URLs are allowed."""
    if not url.startswith(f"http://{HOST}:"):
        raise ValueError(f"benchmarks talk only to {HOST}: {url}")
    request = urllib.request.Request(url, headers=dict(headers or {}))
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


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
        if stop is not None:
            stop(server)
        elif process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=15)
