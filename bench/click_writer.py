"""What the conversion rollups cost the click writer: ``.venv/bin/python -m bench.click_writer``.

Stores the same 100,000 clicks (200 links, three UTM combinations per link, four platforms, 20,000 visitors,
5 % bots, all of one day as a writer's batches are) in batches of 2,000 into a fresh SQLite file twice: with
:func:`storage.clicks.insert_click_rows` alone (the clicks' own rows: the baseline) and with
:func:`storage.clicks.insert_clicks` (the same rows plus the fine rollups and their coarse level, in the same
transaction). Reports the CPU (process time, writer thread included) per stored click of each, alternating
the two for ``--rounds`` rounds. Writes its section to docs/benchmarks.md.

``--breakdown`` prints instead where the CPU of one pass with the rollups goes: each kind of statement, the
commits, and the Python between them (on a plain sqlite3 connection with the writer's page cache, no thread).
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Coroutine, Sequence
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from bench import load
from bench.report import Generator, seed_document
from linksvc.seed import load_seed
from storage import clicks as click_repo
from storage.db import CACHE_KIB, Database, Tx

COMMAND = ".venv/bin/python -m bench.click_writer"
BATCH = 2_000

Writer = Callable[..., Coroutine[Any, Any, None]]


def todays_clicks(count: int) -> list[list[Any]]:
    """The report benchmark's clicks, moved to today (a batch holds the clicks of a few seconds)."""
    day = datetime.now(UTC).strftime("%Y-%m-%d")
    rows = [list(row) for row in Generator(2026_11_24).clicks(count)]
    for row in rows:
        row[3] = day + row[3][10:]
        row[17] = row[17][-4:]  # 65,536 visitor values at most, of which the clicks use about 20,000
    return rows


async def store(rows: Sequence[Sequence[Any]], writer: Writer) -> float:
    """CPU seconds per stored click."""
    with tempfile.TemporaryDirectory() as directory:
        db = Database(str(Path(directory) / "clicks.db"), "OFF")
        await db.open()
        try:
            await load_seed(db, seed_document(), allow_private=True)
            started = time.process_time()
            for start in range(0, len(rows), BATCH):
                chunk = rows[start:start + BATCH]

                async def unit(tx: Tx, chunk: Sequence[Sequence[Any]] = chunk) -> None:
                    await writer(tx, rows=chunk)
                await db.write(unit)
            return (time.process_time() - started) / len(rows)
        finally:
            await db.close()


class TimedConnection(sqlite3.Connection):
    """A write connection that adds up the CPU of each kind of statement (its first words)."""

    spent: Counter[str] = Counter()

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:  # type: ignore[override]
        kind = sql[:60].split(" (")[0].split(" VALUES")[0]
        started = time.process_time()
        try:
            return super().execute(sql, parameters)
        finally:
            TimedConnection.spent[kind] += time.process_time() - started


def breakdown(rows: Sequence[Sequence[Any]]) -> str:
    """Where the CPU of storing ``rows`` with the rollups goes, per stored click."""
    with tempfile.TemporaryDirectory() as directory:
        path = str(Path(directory) / "clicks.db")

        async def prepare() -> None:
            db = Database(path, "OFF")
            await db.open()
            await load_seed(db, seed_document(), allow_private=True)
            await db.close()
        asyncio.run(prepare())
        conn = sqlite3.connect(path, isolation_level=None, factory=TimedConnection)
        conn.row_factory = sqlite3.Row
        for pragma in ("journal_mode=WAL", "synchronous=OFF", f"cache_size=-{CACHE_KIB}"):
            conn.execute(f"PRAGMA {pragma}")
        TimedConnection.spent.clear()

        async def run() -> None:
            for start in range(0, len(rows), BATCH):
                conn.execute("BEGIN")
                await click_repo.insert_clicks(conn, rows[start:start + BATCH])  # type: ignore[arg-type]
                conn.execute("COMMIT")
        started = time.process_time()
        asyncio.run(run())
        total = time.process_time() - started
        conn.close()
    spent = TimedConnection.spent
    lines = [[kind, f"{seconds / len(rows) * 1e6:.1f}"] for kind, seconds in spent.most_common() if kind != "BEGIN"]
    lines.append(["Python between the statements", f"{(total - sum(spent.values())) / len(rows) * 1e6:.1f}"])
    lines.append(["all", f"{total / len(rows) * 1e6:.1f}"])
    return load.table(["part", "µs CPU per click"], lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.click_writer", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clicks", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--breakdown", action="store_true", help="print where one pass with the rollups spends")
    load.output_options(parser, "4,000 clicks, 1 round")
    args = parser.parse_args(argv)
    if args.smoke:
        args.clicks, args.rounds = 4_000, 1
    rows = todays_clicks(args.clicks)
    if args.breakdown:
        print(breakdown(rows))
        return 0
    found: dict[str, list[float]] = {"clicks only (insert_click_rows)": [], "with the rollups (insert_clicks)": []}
    writers: dict[str, Writer] = {"clicks only (insert_click_rows)": click_repo.insert_click_rows,
                                  "with the rollups (insert_clicks)": click_repo.insert_clicks}
    for _ in range(args.rounds):
        for name, writer in writers.items():
            found[name].append(asyncio.run(store(rows, partial(writer))) * 1e6)
    base = statistics.median(found["clicks only (insert_click_rows)"])
    lines = [[name, f"{statistics.median(values):.1f}", ", ".join(f"{v:.1f}" for v in values),
              f"{statistics.median(values) / base:.2f}"] for name, values in found.items()]
    text = "\n".join([
        "## Click writer with the conversion rollups (issue 21)", "",
        f"`{COMMAND}`: {args.clicks:,} clicks of one day (200 links, 20,000 visitors, 5 % bots) in batches of "
        f"{BATCH:,} into a fresh SQLite file, {args.rounds} rounds alternating the two writers; CPU per stored "
        "click (process time, the writer's thread included).", "",
        load.table(["writer", "median µs CPU per click", "rounds", "× clicks only"], lines), "",
        f"Machine: {load.machine().line()}. Measured at {load.revision()}.",
    ])
    print(text)
    load.publish("click-writer", text, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
