"""Behavior events without HTTP: ``.venv/bin/python -m bench.events_inprocess single|bulk [seconds] [processes]``.

What the write path alone does, in one process on a temporary database where the demo's resources load
(``LINKSVC_DB_SYNCHRONOUS=FULL``): ``single`` is 64 tasks each calling ``linksvc.loyalty.service.ingest`` with
one PURCHASE in turn (as 64 connections of one event each would), ``bulk`` is 8 tasks each with 500 events (3
PURCHASE for every 2 of the demo's custom event type), the bodies of ``bench/events.py``. Prints events/s, the
process's CPU per event (``time.process_time``: the event loop and the writer's thread) and how many turns of
the write queue they took. With ``processes`` above 1, as many processes do so at once on
one database file (as the workers of ``linksvc serve --workers N`` write), each printing its own figures. For
profiling the writer (``py-spy record --threads -p PID``) without the HTTP server and wrk in the picture.
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import data
from bench import events as bench_events
from linksvc.clock import utcnow
from linksvc.errors import ServiceError
from linksvc.loyalty import service as events
from linksvc.seed import load_seed
from storage.db import Database


async def seed(path: Path) -> None:
    db = Database(str(path), synchronous="FULL")
    await db.open()
    try:
        await load_seed(db, json.loads(data.ingest_only_demo(path.parent).read_text()), allow_private=True)
    finally:
        await db.close()


async def run(mode: str, seconds: float, path: Path, tag: str = "inprocess") -> str:
    db = Database(str(path), synchronous="FULL")
    await db.open()
    try:
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
        end = time.monotonic() + seconds

        async def singles() -> None:
            nonlocal done
            while time.monotonic() < end:
                [result] = await events.ingest(db, data.DEMO_ACCOUNT, [event("PURCHASE")], "SERVER", utcnow())
                assert not isinstance(result, ServiceError), result
                done += 1

        async def bulks() -> None:
            nonlocal done
            while time.monotonic() < end:
                raws = [event("PURCHASE" if i % 5 < 3 else custom) for i in range(500)]
                results = await events.ingest(db, data.DEMO_ACCOUNT, raws, "SERVER", utcnow(), bulk=True)
                done += sum(1 for r in results if not isinstance(r, ServiceError))

        started, cpu = time.monotonic(), time.process_time()
        await asyncio.gather(*([singles() for _ in range(64)] if mode == "single" else [bulks() for _ in range(8)]))
        elapsed, cpu = time.monotonic() - started, time.process_time() - cpu
        return (f"{tag} {mode}: {done:,} events in {elapsed:.1f} s = {done / elapsed:,.0f} events/s, "
                f"{cpu / max(done, 1) * 1e6:.1f} µs of CPU an event (every thread); "
                f"{db.writer.groups:,} turns of the write queue")
    finally:
        await db.close()


def main(argv: list[str]) -> int:
    if len(argv) == 5 and argv[0] == "--on":  # one of several processes: --on DB TAG MODE SECONDS
        print(asyncio.run(run(argv[3], float(argv[4]), Path(argv[1]), argv[2])), flush=True)
        return 0
    if not argv or argv[0] not in ("single", "bulk"):
        print(__doc__)
        return 2
    mode, seconds = argv[0], argv[1] if len(argv) > 1 else "6"
    processes = int(argv[2]) if len(argv) > 2 else 1
    with tempfile.TemporaryDirectory(prefix="bench-events-inprocess-") as tmp:
        path = Path(tmp) / "events.db"
        asyncio.run(seed(path))
        if processes == 1:
            print(asyncio.run(run(mode, float(seconds), path)))
            return 0
        started = [subprocess.Popen([sys.executable, "-m", "bench.events_inprocess", "--on", str(path), f"p{n}",
                                     mode, seconds]) for n in range(1, processes + 1)]
        return max(process.wait() for process in started)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
