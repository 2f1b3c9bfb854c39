"""``linksvc serve`` as the README starts it (default settings: uvloop, the access log on): many kept-alive
connections, each mixing redirects with requests only the handler answers, get every redirect of a held link
from the resolver's fast lane, including the one that arrives just after the handler's answer, before aiohttp's
loop waits for the next request (``linksvc_fast_lane_answers_total`` on /metrics says how many the lane
answered). Every request is answered and logged."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import ADMIN_TOKEN
from tests.processes import ServiceStore, free_port, ready, serve_command, stop
from tests.rawhttp import Reply, parse

CODE = "welcome"  # the demo's first link
CONNECTIONS = 16
ROUNDS = 25  # per connection: a redirect, then a request the handler answers, then a redirect


@pytest.fixture
def served(tmp_path: Path, store: ServiceStore) -> Iterator[tuple[int, Path]]:
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith("LINKSVC_")}
    env.update({"LINKSVC_ADMIN_TOKEN": ADMIN_TOKEN, **store.env()})
    log_path = tmp_path / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(serve_command(port, store), env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        assert ready(f"http://127.0.0.1:{port}"), log_path.read_text()
        yield port, log_path
    finally:
        stop(process)


def _answer(sock: socket.socket, buffer: bytes) -> tuple[Reply, bytes]:
    while True:
        head, found, rest = buffer.partition(b"\r\n\r\n")
        if found:
            length = int(parse(head + found).headers.get("content-length", "0"))
            if len(rest) >= length:
                return parse(head + found + rest[:length]), rest[length:]
        chunk = sock.recv(65536)
        assert chunk, "the service closed the connection"
        buffer += chunk


def _converse(port: int, paths: list[str]) -> list[int]:
    """Each path in turn on one kept-alive connection, each sent once the one before is answered."""
    statuses = []
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        buffer = b""
        for path in paths:
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUser-Agent: Mozilla/5.0 (Linux; "
                         f"Android 14) Chrome/130.0.0.0 Mobile Safari/537.36\r\n\r\n".encode())
            reply, buffer = _answer(sock, buffer)
            statuses.append(reply.status)
    return statuses


def _lane_answers(port: int) -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(f"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        reply, _ = _answer(sock, b"")
    found = re.search(rb'^linksvc_fast_lane_answers_total\{lane="redirects"\} ([0-9.]+)$', reply.body, re.M)
    assert found, reply.body[:2000]
    return int(float(found.group(1)))


def test_every_redirect_of_a_held_link_takes_the_lane_between_handler_answers(served: tuple[int, Path]) -> None:
    port, log_path = served
    assert _converse(port, [f"/{CODE}"]) == [302]  # the link is held from here on (if not already)
    before = _lane_answers(port)
    paths = [f"/{CODE}", "/healthz", f"/{CODE}"] * ROUNDS
    with ThreadPoolExecutor(CONNECTIONS) as pool:
        answers = list(pool.map(lambda _: _converse(port, paths), range(CONNECTIONS)))
    assert answers == [[302, 200, 302] * ROUNDS] * CONNECTIONS
    assert _lane_answers(port) - before == 2 * ROUNDS * CONNECTIONS
    stop_lines = log_path.read_text()
    assert "Traceback" not in stop_lines


def test_the_held_links_answers_are_worked_out_ahead_at_the_start(served: tuple[int, Path]) -> None:
    port, log_path = served
    held = None
    for _ in range(300):  # the links are held, and their answers worked out, in the background after the start
        held = re.search(r"holding (\d+) links for the fast lane \(read in [0-9.]+ s; (\d+) answers worked out "
                         r"ahead in [0-9.]+ s\)", log_path.read_text())
        if held:
            break
        time.sleep(0.05)
    assert held, log_path.read_text()
    links, answers = int(held.group(1)), int(held.group(2))
    assert links > 0 and 0 < answers <= 5 * links  # five kinds of device a plain link
    before = _lane_answers(port)
    assert _converse(port, [f"/{CODE}"]) == [302]  # the first click: the lane's, from its answer kept
    assert _lane_answers(port) - before == 1
