"""Progress of long command-line work: ``linksvc seed``, ``linksvc export`` and the migrations of an older
database draw a bar when stderr is a terminal (a pseudo-terminal here) and write plain periodic lines when it is
a pipe; stdout keeps only the result, the same either way.

The interval of the plain lines is ``LINKSVC_PROGRESS_SECONDS`` (5 s by default); these runs set it to 0.01 s
so that work of a fraction of a second writes several lines.
"""

from __future__ import annotations

import gzip
import json
import os
import pty
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from linksvc.loyalty import service as events
from linksvc.progress import PlainLines
from linksvc.store import in_one_unit
from storage.db import Database, Tx, execute, fetch_all, migration_files
from storage.writer import add_functions
from tests.factories import A, two_accounts
from tests.processes import ServiceStore, service_store, sqlite_only

ROOT = Path(__file__).resolve().parents[2]
LINKS = 1500
OBJECTS = 2 * (1 + 2 + 9) + LINKS  # two accounts, each with 2 keys and 9 resources, and the extra links
EVENTS = 6_002
NOW = datetime(2024, 5, 2, 12, 0, tzinfo=UTC)
ANSI = re.compile(r"\x1b\[")


def big_seed(folder: Path) -> Path:
    doc = two_accounts()
    doc["accounts"][0]["links"] += [
        {"id": f"00000000-{i:04d}-4000-8000-{i:012d}", "code": f"bulk{i}", "kind": "email",
         "destination_url": f"https://shop.example/p/{i}"} for i in range(1, LINKS + 1)]
    path = folder / "big.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LINKSVC_")}
    return {**env, "LINKSVC_PROGRESS_SECONDS": "0.01", "LINKSVC_DB_SYNCHRONOUS": "NORMAL", "TERM": "xterm-256color"}


def piped(*args: str) -> subprocess.CompletedProcess[str]:
    """The command with stdout and stderr on pipes (not terminals)."""
    return subprocess.run([sys.executable, "-m", "linksvc", *args], cwd=ROOT, env=environment(),
                          capture_output=True, text=True, timeout=120, check=False)


def on_terminal(*args: str) -> tuple[int, str, str]:
    """The command with stderr on a pseudo-terminal and stdout on a pipe: (exit code, stdout, what the
    terminal received)."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "linksvc", *args], cwd=ROOT, env=environment(),
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=terminal)
    os.close(terminal)
    received = bytearray()
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # EIO: the process closed its end of the terminal
            break
        if not chunk:
            break
        received += chunk
    os.close(controller)
    assert process.stdout is not None
    out = process.stdout.read().decode()
    process.stdout.close()
    return process.wait(timeout=120), out, received.decode(errors="replace")


def progress_lines(stderr: str, pattern: str) -> list[str]:
    return [line for line in stderr.splitlines() if re.fullmatch(pattern, line)]


@pytest.fixture
def stores(tmp_path: Path, store_choice: str | None) -> Iterator[dict[str, ServiceStore]]:
    """Two stores, ``piped`` and ``terminal``: the files ``piped.db`` and ``terminal.db``, or two PostgreSQL
    databases."""
    with ExitStack() as stack:
        yield {name: stack.enter_context(service_store(tmp_path, store_choice, f"{name}.db"))
               for name in ("piped", "terminal")}


def links_of(store: ServiceStore) -> list[tuple[Any, ...]]:
    return store.rows("SELECT id, account_id, code FROM links ORDER BY id")


def test_seed_writes_periodic_lines_to_a_pipe_and_draws_a_bar_on_a_terminal(
        tmp_path: Path, stores: dict[str, ServiceStore]) -> None:
    seed = big_seed(tmp_path)
    result = piped("seed", str(seed), *stores["piped"].args())
    assert result.returncode == 0, result.stderr
    periodic = progress_lines(result.stderr, rf"seed: loading: [\d,]+ of {OBJECTS:,} objects \(\d+%\), \d+ s")
    assert periodic, result.stderr
    done = [int(re.sub(r"\D", "", line.split(" of ")[0].rsplit(":", 1)[1])) for line in periodic]
    assert done == sorted(done)
    assert result.stderr.splitlines()[-1].startswith(f"seed: loading: done, {OBJECTS:,} objects in ")
    assert not ANSI.search(result.stderr)
    report = json.loads(result.stdout)
    assert report["changed"]["links"] == LINKS + 2

    code, out, terminal = on_terminal("seed", str(seed), *stores["terminal"].args())
    assert code == 0, terminal
    assert "━" in terminal and f"{OBJECTS}/{OBJECTS}" in terminal and "100%" in terminal, terminal
    assert "\r" in terminal  # redrawn in place
    assert not progress_lines(terminal, r".*of [\d,]+ objects \(\d+%\), \d+ s.*")
    assert out == result.stdout  # the same result, whatever stderr is
    assert links_of(stores["terminal"]) == links_of(stores["piped"])


async def _store_events(store: ServiceStore) -> None:
    """Two events stored as the service stores them, then copied (new ids, two days) up to :data:`EVENTS`:
    enough for the export to take a moment."""
    async def unit(tx: Tx) -> None:
        for day in (1, 2):
            raw = {"type": "page_view", "customer_id": "cust-" + A[:4], "issued_at": f"2024-05-0{day}T10:00:00Z"}
            await events.apply(tx, A, events.prepare(raw, "SERVER", NOW), NOW)
        await execute(
            tx, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) "
            "INSERT INTO events (id, account_id, type, customer_id, order_id, payload_hash, issued_at, "
            "received_at, key_kind, body, effects) SELECT e.id || '-' || n.i, account_id, type, customer_id, "
            "order_id, payload_hash, issued_at, received_at, key_kind, body, effects FROM events e, n",
            ((EVENTS - 2) // 2,))

    async with store.opened() as db:
        await in_one_unit(db, unit)


def exported_lines(folder: Path) -> int:
    return sum(len(gzip.decompress(path.read_bytes()).splitlines()) for path in folder.rglob("*.jsonl.gz"))


async def test_export_writes_periodic_lines_to_a_pipe_and_draws_a_bar_on_a_terminal(
        tmp_path: Path, stores: dict[str, ServiceStore]) -> None:
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps(two_accounts()), encoding="utf-8")
    for store in stores.values():  # the same events in both
        assert piped("seed", str(seed), *store.args()).returncode == 0
        await _store_events(store)

    result = piped("export", *stores["piped"].args(), "--dir", str(tmp_path / "out-piped"))
    assert result.returncode == 0, result.stderr
    target = "export to local"
    assert progress_lines(result.stderr, rf"{target}: [\d,]+ of {EVENTS:,} events \(\d+%\), \d+ s"), result.stderr
    assert re.fullmatch(rf"{target}: done, {EVENTS:,} events in [\d.]+ s", result.stderr.splitlines()[-1])
    assert json.loads(result.stdout)["events"] == EVENTS
    assert exported_lines(tmp_path / "out-piped") == EVENTS

    code, out, terminal = on_terminal("export", *stores["terminal"].args(), "--dir", str(tmp_path / "out-terminal"))
    assert code == 0, terminal
    assert "━" in terminal and f"{EVENTS}/{EVENTS}" in terminal, terminal
    assert json.loads(out)["events"] == json.loads(result.stdout)["events"]
    assert exported_lines(tmp_path / "out-terminal") == EVENTS


def older_database(path: Path, version: int) -> None:
    """A database as a release that had only the first ``version`` migrations left it."""
    with sqlite3.connect(path, isolation_level=None) as conn:
        add_functions(conn)
        for number, script in migration_files():
            if number <= version:
                conn.executescript(f"BEGIN;\n{script.read_text()}\nPRAGMA user_version={number};\nCOMMIT;")
    conn.close()


class Recorded:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def stage(self, description: str, total: int | None, unit: str) -> None:
        self.calls.append(("stage", description, total, unit))

    def advance(self, amount: int = 1) -> None:
        self.calls.append(("advance", amount))


@sqlite_only("the migrations of an older SQLite file")
async def test_migrations_of_an_older_database_are_counted_and_logged(tmp_path: Path,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    newest = len(migration_files())
    path = tmp_path / "old.db"
    older_database(path, newest - 2)
    recorded = Recorded()
    db = Database(str(path), "NORMAL")
    with caplog.at_level("INFO", logger="linksvc.db"):
        await db.open(recorded)
    try:
        assert [c[0] for c in await fetch_all(db.reader, "PRAGMA user_version")] == [newest]
    finally:
        await db.close()
    assert recorded.calls == [("stage", "migrating old.db", 2, "migrations"), ("advance", 1), ("advance", 1)]
    applied = [r.getMessage() for r in caplog.records if r.name == "linksvc.db"]
    assert [m.split(" to ")[0] for m in applied] == [f"applied migration {p.name}"
                                                    for _, p in migration_files()[-2:]]

    fresh = Recorded()  # a new database is made in milliseconds: nothing to show
    db = Database(str(tmp_path / "new.db"), "NORMAL")
    await db.open(fresh)
    await db.close()
    assert fresh.calls == []


@sqlite_only("the migrations of an older SQLite file")
def test_a_migration_draws_a_bar_on_a_terminal_and_nothing_on_a_quick_pipe(tmp_path: Path) -> None:
    newest = len(migration_files())
    for name in ("terminal", "piped"):
        older_database(tmp_path / f"{name}.db", newest - 2)
    code, out, terminal = on_terminal("route", "nowhere", "--db", str(tmp_path / "terminal.db"))
    assert code == 1 and out == ""  # no such link; the database was migrated on the way
    assert "migrating" in terminal and "━" in terminal and "2/2" in terminal, terminal
    result = subprocess.run([sys.executable, "-m", "linksvc", "route", "nowhere", "--db", str(tmp_path / "piped.db")],
                            cwd=ROOT, env={**environment(), "LINKSVC_PROGRESS_SECONDS": "30"}, capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 1
    assert "migrating" not in result.stderr  # done well within the interval: no line
    for name in ("terminal", "piped"):
        with sqlite3.connect(tmp_path / f"{name}.db") as conn:
            assert conn.execute("PRAGMA user_version").fetchone()[0] == newest
        conn.close()


def test_plain_lines_say_nothing_before_the_first_stage_and_no_done_after_a_failure(tmp_path: Path) -> None:
    quiet = tmp_path / "quiet.txt"
    with quiet.open("w") as stream:
        PlainLines(stream, 0.01).finish(failed=False)
    assert quiet.read_text() == ""

    failed = tmp_path / "failed.txt"
    with failed.open("w") as stream:
        lines = PlainLines(stream, 0.01)
        lines.stage("seed: loading", 10, "objects")
        lines.advance(3)
        deadline = time.monotonic() + 30
        while lines.lines == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        lines.finish(failed=True)
    written = failed.read_text().splitlines()  # a tick may come between the stage and the advance
    assert written and all(re.fullmatch(r"seed: loading: (0|3) of 10 objects \((0|30)%\), \d+ s", line)
                           for line in written), written
