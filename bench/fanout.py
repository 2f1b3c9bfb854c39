"""What an event costs to accept with 0, 1 and 8 connections: ``.venv/bin/python -m bench.fanout [seconds] [rounds]``.

In one process, without HTTP and without the dispatcher: the demo's resources load into a fresh temporary
SQLite database (``LINKSVC_DB_SYNCHRONOUS=FULL``, the default) with 0, 1 or 8 enabled connections (the 8 an
ordinary set-up: 3 webhooks, 2 GA4 streams, 3 Meta pixels, copies of the demo's, every type allowed); 8
tasks then each call ``linksvc.loyalty.service.ingest`` with 500 events in turn (3 PURCHASE for every 2 of the
demo's custom type, the bodies of ``bench/events.py``) for ``seconds``. CPU is the process's (every thread:
the event loop and the writer's) over the run, per accepted event; rows are what the run added to
``deliveries`` and ``fanout`` (the outbox of events to fan out, issue 33). The three counts alternate in
``rounds`` rounds (0 1 8, 1 8 0, 8 0 1, ...) and each figure is the median of its rounds. After each run
the fan-out the dispatcher does next (``linksvc.forwarding.outbox.fan_out``, the deliveries written) is timed
too, as CPU per accepted event: where the per-connection work went.
"""

from __future__ import annotations

import asyncio
import copy
import json
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench import data
from bench import events as bench_events
from linksvc.clock import utcnow
from linksvc.errors import ServiceError
from linksvc.forwarding import outbox
from linksvc.loyalty import service as events
from linksvc.seed import load_seed
from storage.db import Database, fetch_one

COUNTS = (0, 1, 8)


def _seed_with(directory: Path, connections: int) -> Path:
    seed = json.loads(data.ingest_only_demo(directory).read_text())
    for account in seed["accounts"]:
        if account["id"] != data.DEMO_ACCOUNT:
            account["connections"] = []
            continue
        by_destination = {c["destination"]: c for c in account.get("connections", [])}
        mix = ["webhook", "ga4", "meta", "webhook", "meta", "ga4", "webhook", "meta"][:connections]
        made = []
        for destination in mix:
            connection = copy.deepcopy(by_destination[destination])
            connection["id"] = str(uuid.uuid4())
            connection["enabled"] = True
            connection["forward_events"] = connection["forward_purchases"] = True
            connection["event_types"] = ["*"]  # every type
            made.append(connection)
        account["connections"] = made
    path = directory / f"seed-{connections}.json"
    path.write_text(json.dumps(seed))
    return path


async def _rows(db: Database) -> int:
    total = 0
    for table in ("deliveries", "fanout"):
        try:
            row = await fetch_one(db.reader, f"SELECT count(*) FROM {table}")
        except Exception:  # noqa: BLE001 - the table of another design
            continue
        total += int(row[0]) if row else 0
    return total


async def one(directory: Path, connections: int, seconds: float, tag: str) -> tuple[float, float, float, float]:
    """(events/s, CPU µs per event, outbox rows per event, the fan-out's CPU µs per event) of one run."""
    path = directory / f"{tag}.db"
    db = Database(str(path), synchronous="FULL")
    await db.open()
    try:
        await load_seed(db, json.loads(_seed_with(directory, connections).read_text()), allow_private=True)
        account = data.demo_account()
        custom = next(t["name"] for t in account["custom_event_types"] if t["active"])
        rng = random.Random(tag)
        made = 0

        def event(kind: str) -> dict[str, Any]:
            nonlocal made
            made += 1
            found = bench_events._event(rng, account, kind, made)
            if "order_id" in found:
                found["order_id"] = f"{tag}-{made}"
            return found

        done = 0
        before_rows = await _rows(db)
        end = time.monotonic() + seconds

        async def bulks() -> None:
            nonlocal done
            while time.monotonic() < end:
                raws = [event("PURCHASE" if i % 5 < 3 else custom) for i in range(500)]
                results = await events.ingest(db, data.DEMO_ACCOUNT, raws, "SERVER", utcnow(), bulk=True)
                done += sum(1 for r in results if not isinstance(r, ServiceError))

        cpu, started = time.process_time(), time.monotonic()
        await asyncio.gather(*[bulks() for _ in range(8)])
        elapsed, cpu = time.monotonic() - started, time.process_time() - cpu
        rows = await _rows(db) - before_rows
        fanned = time.process_time()  # what the dispatcher does next, off the request path
        while await db.write(outbox.fan_out, outbox.FAN_OUT_TURN):
            pass
        return done / elapsed, cpu / done * 1e6, rows / done, (time.process_time() - fanned) / done * 1e6
    finally:
        await db.close()


async def main(seconds: float, rounds: int) -> None:
    results: dict[int, list[tuple[float, float, float, float]]] = {n: [] for n in COUNTS}
    with tempfile.TemporaryDirectory(prefix="bench-fanout-") as tmp:
        for r in range(rounds):
            order = COUNTS[r % 3:] + COUNTS[:r % 3]
            for n in order:
                found = await one(Path(tmp), n, seconds, f"r{r}-c{n}")
                results[n].append(found)
                print(f"round {r + 1}, {n} connections: {found[0]:,.0f} events/s, {found[1]:.1f} µs CPU/event, "
                      f"{found[2]:.2f} outbox rows/event; fan-out {found[3]:.1f} µs CPU/event", flush=True)
    print("\n| connections | events/s | CPU µs/event | outbox rows/event | CPU vs 1 connection | fan-out µs/event |")
    print("|---|---|---|---|---|---|")
    base = statistics.median(x[1] for x in results[1])
    for n in COUNTS:
        rate = statistics.median(x[0] for x in results[n])
        cpu = statistics.median(x[1] for x in results[n])
        rows = statistics.median(x[2] for x in results[n])
        fan = statistics.median(x[3] for x in results[n])
        print(f"| {n} | {rate:,.0f} | {cpu:.1f} | {rows:.2f} | {cpu / base:.2f}× | {fan:.1f} |")


if __name__ == "__main__":
    args = sys.argv[1:]
    asyncio.run(main(float(args[0]) if args else 5.0, int(args[1]) if len(args) > 1 else 3))
