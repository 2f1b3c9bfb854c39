"""PostgreSQL beside SQLite in the same benchmark run, for every benchmark that takes ``--postgresql ADMIN_URL``.

A benchmark builds its SQLite database as usual; :func:`copy` moves it with ``linksvc db copy`` into a new
database of the run's own (``linksvc_bench_<random>``, made through ADMIN_URL), the service rows run again with
``LINKSVC_DATABASE_URL`` on it (:func:`environment`), and :func:`drop` removes it. :func:`copied` does both
around a block, so the database is dropped even when the run fails. Rows measured there are labelled with
:func:`label`.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg

from linksvc.settings import REPO_ROOT

SUFFIX = " on PostgreSQL"
COPY_TIMEOUT_S = 3600


def add_argument(parser: argparse.ArgumentParser) -> None:
    """``--postgresql ADMIN_URL``: absent, the benchmark runs on SQLite only."""
    parser.add_argument("--postgresql", metavar="ADMIN_URL", default=None,
                        help="also run the service rows on PostgreSQL: a database made from ADMIN_URL (e.g. "
                        "postgresql://postgres@127.0.0.1:5432/postgres) by linksvc db copy, dropped at the end")


def label(row: str) -> str:
    """The label of a row measured on PostgreSQL."""
    return row + SUFFIX


def is_label(row: str) -> bool:
    return row.endswith(SUFFIX)


def environment(url: str | None) -> dict[str, str]:
    """The service's environment for the store at ``url`` (none: SQLite)."""
    return {"LINKSVC_DATABASE_URL": url} if url else {}


def _run(url: str, work: Any) -> Any:
    async def run() -> Any:
        conn = await asyncpg.connect(url)
        try:
            return await work(conn)
        finally:
            await conn.close()
    return asyncio.run(run())


def create(admin: str) -> str:
    """A new empty database made through ``admin``: its URL."""
    name = f"linksvc_bench_{secrets.token_hex(4)}"
    _run(admin, lambda conn: conn.execute(f'CREATE DATABASE "{name}"'))
    return admin.rsplit("/", 1)[0] + f"/{name}"


def drop(admin: str, url: str) -> None:
    _run(admin, lambda conn: conn.execute(f'DROP DATABASE IF EXISTS "{url.rsplit("/", 1)[1]}" WITH (FORCE)'))


@dataclass(frozen=True)
class Copy:
    """A database made by :func:`copy`."""

    url: str
    seconds: float  # how long ``linksvc db copy`` took
    version: str  # the server's, e.g. 15.8

    def note(self, rest: str) -> str:
        """What the rows "on PostgreSQL" are, for a benchmark's section; ``rest`` ends the sentence."""
        host = self.url.split("@", 1)[-1].rsplit("/", 1)[0]
        return (f"Rows \"on PostgreSQL\": the same service with `LINKSVC_DATABASE_URL` on the machine's PostgreSQL "
                f"{self.version} ({host}, a new database holding the same data, made from the SQLite file the "
                f"SQLite rows start from with `linksvc db copy` in {self.seconds:,.0f} s and dropped afterwards), "
                f"the same scripts, in the same rounds{rest}")


def copy(admin: str, db: Path) -> Copy:
    """A new database holding what the SQLite file ``db`` holds (``linksvc db copy``)."""
    url = create(admin)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "linksvc", "db", "copy", "--from", f"sqlite:///{db}", "--to", url],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=COPY_TIMEOUT_S)
    if done.returncode != 0:
        drop(admin, url)
        raise RuntimeError(f"linksvc db copy failed: {done.stderr[-2000:]}")
    seconds = time.perf_counter() - started
    return Copy(url, seconds, str(_run(url, lambda conn: conn.fetchval("SHOW server_version"))).split()[0])


@contextmanager
def copied(admin: str | None, db: Path) -> Iterator[Copy | None]:
    """:func:`copy` of ``db`` for the block, dropped at its end; None when ``admin`` is (SQLite only)."""
    if admin is None:
        yield None
        return
    made = copy(admin, db)
    print(f"copied {db.name} to PostgreSQL ({made.url.rsplit('/', 1)[1]}) in {made.seconds:.1f} s")
    try:
        yield made
    finally:
        drop(admin, made.url)


def count(url: str, sql: str, *params: Any) -> int:
    """The single number a query answers on the database at ``url``."""
    return int(_run(url, lambda conn: conn.fetchval(sql, *params)) or 0)
