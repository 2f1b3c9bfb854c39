"""What the click writer costs on the click path, and what the conversion rollups' pass costs beside it:
``.venv/bin/python -m bench.click_writer``.

Since issue 33 the click writer stores clicks only (:func:`storage.clicks.insert_clicks`: the clicks' rows and
the click journal's mark, in one transaction); the conversion rollups are counted afterwards, off the click path,
by a pass behind a mark (:func:`linksvc.reports.rollups.count_clicks`, run in the background every second and
before a report reads). The work did not vanish: this measures both, apart.

Stores the same 100,000 clicks (200 links, three UTM combinations per link, four platforms, 20,000 visitors,
5 % bots, all of one day as a writer's batches are) in batches of 2,000 into a fresh SQLite file, through the
store's write queue as the service does:

- **clicks only**: :func:`storage.clicks.insert_click_rows` alone, the clicks' own rows (the baseline);
- **the click writer**: :func:`storage.clicks.insert_clicks` with a journal mark, what the click path runs;
  the bar of issue 33 is this at most 1.3 times the baseline;
- **the rollup pass**: :func:`linksvc.reports.rollups.count_clicks` run after every ``span`` stored clicks
  (2,000: a pass per batch, the work the click writer did in its own transaction before; 10,000 and 50,000:
  the background pass at higher click rates, its span being whatever was stored in its interval). Its CPU is
  measured apart from the writer's, in the same run, per click it counted.

CPU is process time (the writer's thread included) per stored click, each configuration in a fresh file,
alternating them for ``--rounds`` rounds. Writes its section to docs/benchmarks.md.

``--breakdown`` prints instead where the CPU of one run (the click writer, and a pass every ``--span`` clicks)
goes: each kind of statement, the commits, and the Python between them (on a plain sqlite3 connection with the
writer's page cache, no thread).
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import load
from bench.report import Generator, seed_document
from linksvc.reports.rollups import count_clicks
from linksvc.seed import load_seed
from storage import clicks as click_repo
from storage import conversions
from storage.db import CACHE_KIB, Database, Tx

COMMAND = ".venv/bin/python -m bench.click_writer"
BATCH = 2_000
SPANS = (2_000, 10_000, 50_000)
BASELINE = "clicks only (insert_click_rows)"
WRITER = "the click writer (insert_clicks)"


def todays_clicks(count: int, spread: bool = False) -> list[list[Any]]:
    """The report benchmark's clicks, moved to today (a batch holds the clicks of a few seconds); with
    ``spread``, each on a link of its own (as ``bench.redirects``' codes drawn over 100,000 links nearly are)."""
    day = datetime.now(UTC).strftime("%Y-%m-%d")
    rows = [list(row) for row in Generator(2026_11_24).clicks(count)]
    for n, row in enumerate(rows):
        row[3] = day + row[3][10:]
        row[17] = row[17][-4:]  # 65,536 visitor values at most, of which the clicks use about 20,000
        if spread:
            row[1] = f"{row[1][:-12]}{n:012d}"
    return rows


async def store(rows: Sequence[Sequence[Any]], span: int | None) -> tuple[float, float]:
    """(CPU seconds per stored click of the writer, of the pass per click it counted): the click writer's
    batches with a pass after every ``span`` clicks; with ``span`` None, the clicks' rows only and no pass."""
    with tempfile.TemporaryDirectory() as directory:
        db = Database(str(Path(directory) / "clicks.db"), "OFF")
        await db.open()
        try:
            await load_seed(db, seed_document(), allow_private=True)
            writer = passes = 0.0
            counted = 0
            for start in range(0, len(rows), BATCH):
                chunk = rows[start:start + BATCH]

                async def unit(tx: Tx, chunk: Sequence[Sequence[Any]] = chunk, end: int = start + len(chunk)) -> None:
                    if span is None:
                        await click_repo.insert_click_rows(tx, chunk)
                    else:  # the writer's journal mark, as the service writes it with each batch
                        await click_repo.insert_clicks(tx, chunk, journal=("bench.journal", end))
                began = time.process_time()
                await db.write(unit)
                writer += time.process_time() - began
                if span is not None and ((start + len(chunk)) % span == 0 or start + len(chunk) == len(rows)):
                    began = time.process_time()
                    counted += await count_clicks(db)
                    passes += time.process_time() - began
            assert span is None or counted == len(rows)
            return writer / len(rows), passes / len(rows)
        finally:
            await db.close()


class TimedConnection(sqlite3.Connection):
    """A write connection that adds up the CPU of each kind of statement (its first words)."""

    spent: Counter[str] = Counter()

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:  # type: ignore[override]
        if sql.startswith("SELECT"):  # its rows are fetched after: their time is in the Python between
            kind = "SELECT … " + sql[sql.find(" FROM "):][:60].split(" WHERE")[0].strip() + " (before the fetch)"
        elif sql.startswith("WITH"):  # the pass's statements: named by the table they write
            kind = "WITH … " + sql[sql.find("INSERT INTO "):][:60].split(" (")[0]
        else:
            kind = sql[:60].split(" (")[0].split(" VALUES")[0]
        started = time.process_time()
        try:
            return super().execute(sql, parameters)
        finally:
            TimedConnection.spent[kind] += time.process_time() - started


def breakdown(rows: Sequence[Sequence[Any]], span: int) -> str:
    """Where the CPU of storing ``rows`` with the click writer and counting them with a pass every ``span``
    clicks goes, per stored click."""
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
        spent = {"writer": 0.0, "pass": 0.0}

        async def run() -> None:
            tx: Any = conn
            for start in range(0, len(rows), BATCH):
                began = time.process_time()
                conn.execute("BEGIN")
                await click_repo.insert_clicks(tx, rows[start:start + BATCH], journal=("bench.journal", start))
                conn.execute("COMMIT")
                spent["writer"] += time.process_time() - began
                if (start + BATCH) % span == 0 or start + BATCH >= len(rows):
                    began = time.process_time()
                    conn.execute("BEGIN")
                    upto = await conversions.click_horizon(tx)
                    conn.execute("COMMIT")
                    more = True
                    while more:
                        conn.execute("BEGIN")
                        more = (await conversions.roll_up_clicks(tx, upto, 20_000))[1]
                        conn.execute("COMMIT")
                    spent["pass"] += time.process_time() - began
        started = time.process_time()
        asyncio.run(run())
        total = time.process_time() - started
        conn.close()
    timed = TimedConnection.spent
    lines = [[kind, f"{seconds / len(rows) * 1e6:.1f}"] for kind, seconds in timed.most_common() if kind != "BEGIN"]
    lines.append(["Python between the statements", f"{(total - sum(timed.values())) / len(rows) * 1e6:.1f}"])
    lines.append(["all", f"{total / len(rows) * 1e6:.1f}"])
    lines.append(["of which the click writer (its statements, commits and Python)",
                  f"{spent['writer'] / len(rows) * 1e6:.1f}"])
    lines.append([f"of which the pass, every {span:,} clicks", f"{spent['pass'] / len(rows) * 1e6:.1f}"])
    return load.table(["part", "µs CPU per click"], lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.click_writer", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clicks", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--breakdown", action="store_true", help="print where one run spends its CPU")
    parser.add_argument("--span", type=int, default=BATCH, help="with --breakdown: clicks between two passes")
    parser.add_argument("--spread", action="store_true",
                        help="each click on a link of its own (the worst case of the pass: a row per click and level)")
    load.output_options(parser, "4,000 clicks, 1 round")
    args = parser.parse_args(argv)
    if args.smoke:
        args.clicks, args.rounds = 4_000, 1
    rows = todays_clicks(args.clicks, args.spread)
    if args.breakdown:
        print(breakdown(rows, args.span))
        return 0
    spans = [s for s in SPANS if s <= args.clicks]
    baseline: list[float] = []
    writer: list[float] = []
    passes: dict[int, list[float]] = {s: [] for s in spans}
    for _ in range(args.rounds):
        baseline.append(asyncio.run(store(rows, None))[0] * 1e6)
        for span in spans:
            written, counted = asyncio.run(store(rows, span))
            writer.append(written * 1e6)
            passes[span].append(counted * 1e6)
    base = statistics.median(baseline)

    def line(name: str, values: list[float]) -> list[str]:
        median = statistics.median(values)
        return [name, f"{median:.1f}", ", ".join(f"{v:.1f}" for v in values), f"{median / base:.2f}"]

    lines = [line(BASELINE, baseline), line(WRITER, writer)]
    lines += [line(f"the rollup pass, every {span:,} clicks (its own CPU, off the click path)", passes[span])
              for span in spans]
    lines += [line(f"the click writer and the pass every {span:,} clicks, added",
                   [w + p for w, p in zip(writer[i::len(spans)], passes[span], strict=True)])
              for i, span in enumerate(spans)]
    text = "\n".join([
        "## Click writer with the conversion rollups (issues 21 and 33)", "",
        f"`{COMMAND}`: {args.clicks:,} clicks of one day (200 links, 20,000 visitors, 5 % bots) in batches of "
        f"{BATCH:,} into a fresh SQLite file per run, through the store's write queue, {args.rounds} rounds "
        "alternating the runs; CPU per stored click (process time, the writer's thread included). The click "
        "writer stores clicks (and its journal's mark) only: its row is what the click path costs, the bar of "
        "issue 33 (at most 1.3 × clicks only). The conversion rollups are counted by a pass behind a mark, "
        "off the click path (in the background every second, and before a report reads): its rows are its own "
        "CPU per click it counted, measured apart in the same runs, for a pass after every 2,000 clicks (a "
        "batch: what the writer did in its own transaction before) and after every 10,000 and 50,000 (the "
        "background pass at higher click rates). The writer's row is the median over all runs with a pass.", "",
        load.table(["run", "median µs CPU per click", "rounds", "× clicks only"], lines), "",
        f"Machine: {load.machine().line()} (shared with other work: the ratios, measured in one run, are what "
        f"compares). Measured at {load.revision()}.",
    ])
    print(text)
    load.publish("click-writer", text, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
