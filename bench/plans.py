"""Query plans and per-statement timings of what a request really runs.

:func:`traced` serves the real app in-process and records, through a trace callback on its ``sqlite3``
reader connection, every statement each request runs (bound values expanded by SQLite). Each traced
statement is then given to ``EXPLAIN QUERY PLAN`` and timed alone on a reader set up like the service's. A plan
line ``SCAN t`` (whole table) or ``SCAN t USING ... INDEX`` (whole index) is a full scan; ``SEARCH`` is an
index lookup. A SEARCH can still visit many rows (every row of an account), which the timing shows.
"""

from __future__ import annotations

import asyncio
import sqlite3
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from api.appkeys import DB
from linksvc.app import create_app
from linksvc.settings import Settings
from storage.db import connect_reader

API = "/api/storefront/v1"


def reader(path: Path) -> sqlite3.Connection:
    """A read-only connection, the service's own kind (storage.db)."""
    return connect_reader(str(path))


def _reads(statements: list[str]) -> list[str]:
    return [s for s in statements if s.lstrip().upper().startswith(("SELECT", "WITH"))]


async def trace_requests(db_path: Path, api_key: str, requests: Sequence[tuple[str, str]]
                         ) -> list[tuple[str, list[str]]]:
    """Serve the real app in-process (a test server on 127.0.0.1) on ``db_path``, take a token with
    ``api_key``, then GET each (label, path) in turn; returns the read statements each request ran on the
    app's reader connection, whatever the code path (caches included)."""
    settings = Settings(db_path=str(db_path), load_demo=False, admin_token="bench-admin-token", log_level="WARNING")
    app = create_app(settings)
    traced: list[tuple[str, list[str]]] = []
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        answer = await client.get(f"{API}/auth/authorize", headers={"x-api-key": api_key})
        headers = {"Authorization": f"Bearer {(await answer.json())['data']}"}
        reader = app[DB].reader
        if not isinstance(reader, sqlite3.Connection):
            raise RuntimeError("the app's reader is not a sqlite3 connection: nothing to trace")
        for label, path in requests:
            statements: list[str] = []
            reader.set_trace_callback(statements.append)
            try:
                answer = await client.get(path, headers=headers)
                await answer.read()
            finally:
                reader.set_trace_callback(None)
            if answer.status != 200:
                raise RuntimeError(f"{label}: GET {path} answered {answer.status}")
            traced.append((label, _reads(statements)))
    return traced


def traced(db_path: Path, api_key: str, requests: Sequence[tuple[str, str]]) -> list[tuple[str, list[str]]]:
    return asyncio.run(trace_requests(db_path, api_key, requests))


def plan(conn: sqlite3.Connection, sql: str, params: Any = ()) -> list[str]:
    """EXPLAIN QUERY PLAN as the sqlite3 shell draws it (one line per step, indented under its parent)."""
    rows = conn.execute(f"EXPLAIN QUERY PLAN {sql}", params).fetchall()
    depth: dict[int, int] = {0: -1}
    lines = []
    for node, parent, _, detail in rows:
        depth[node] = depth.get(parent, -1) + 1
        lines.append("  " * depth[node] + ("`--" if depth[node] else "") + detail)
    return lines


def full_scans(lines: list[str]) -> list[str]:
    """Plan steps that read a whole table or a whole index (virtual tables such as json_each excepted, and the
    rows a statement made itself: a materialized CTE, a co-routine, a subquery's result)."""
    steps = [ln.strip(" `-") for ln in lines]
    made = {step.split(" ", 1)[1] for step in steps if step.startswith(("MATERIALIZE ", "CO-ROUTINE "))}
    return [step for step in steps
            if step.startswith("SCAN ") and "VIRTUAL TABLE" not in step and "CONSTANT ROW" not in step
            and step.split(" ")[1] not in made and not step.startswith("SCAN (subquery-")]


def time_statement(conn: sqlite3.Connection, sql: str, params: Any = (), runs: int = 50,
                   budget_s: float = 5.0) -> float:
    """Median wall time of one execution (fetching every row), in milliseconds; bounded in runs and time."""
    samples = []
    deadline = time.monotonic() + budget_s
    for _ in range(runs):
        started = time.perf_counter()
        conn.execute(sql, params).fetchall()
        samples.append(time.perf_counter() - started)
        if time.monotonic() > deadline and len(samples) >= 3:
            break
    return statistics.median(samples) * 1000


@dataclass
class Statement:
    label: str
    sql: str
    plan: list[str]
    median_ms: float
    params: Any = field(default=())

    @property
    def scans(self) -> list[str]:
        return full_scans(self.plan)


def explain(conn: sqlite3.Connection, label: str, sql: str, params: Any = ()) -> Statement:
    return Statement(label, sql, plan(conn, sql, params), time_statement(conn, sql, params), params)
