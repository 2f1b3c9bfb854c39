"""CPU per accepted event of ingest, by phase: ``.venv/bin/python -m bench.events_cpu [rounds] [--profile PREFIX]``.

In one process, without HTTP, on a temporary SQLite database where the demo's resources load
(``LINKSVC_DB_SYNCHRONOUS=FULL``, the default), the two shapes of ``bench/events.py``:

- ``single``: turns of 32 to 64 requests of one PURCHASE each, as 64 connections send them (one gathering of
  the write queue: ``linksvc.loyalty.service.apply_requests`` with that many requests; a gathering's size
  varies with the load, and so do its statements);
- ``bulk``: turns of 8 requests of 500 events (3 PURCHASE for every 2 of the demo's custom event type).

The phases run one after the other, never side by side, so that each is CPU of its own and nothing waits for
the GIL: ``check`` (``service.check`` of every event, on the event loop: the body's validation, the token's
kind, attribution) and ``apply`` (the unit on the write queue: the catalog, ``apply_requests``, its
statements and the commit with its sync, on the writer's thread; CPU of the whole process). The events are
made before the clock starts. Each shape runs ``rounds`` rounds of 2,048 (single) or 8,000 (bulk) events,
alternating, and prints each round and the medians, in µs of CPU an event. ``--profile PREFIX`` also writes
cProfile files (``PREFIX.single.check.prof`` ...), timed by the thread's CPU clock.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import data
from bench import events as bench_events
from linksvc.campaigns import catalog
from linksvc.clock import utcnow
from linksvc.errors import ServiceError
from linksvc.loyalty import service
from linksvc.seed import load_seed
from linksvc.store import account_turn
from storage.db import Database

# (fewest and most requests a turn, events a request, events a round)
SHAPES = {"single": (32, 64, 1, 2048), "bulk": (8, 8, 500, 8000)}


class _Events:
    def __init__(self, tag: str) -> None:
        self.account = data.demo_account()
        self.custom = next(t["name"] for t in self.account["custom_event_types"] if t["active"])
        self.rng = random.Random(tag)
        self.tag = tag
        self.made = 0

    def one(self, kind: str) -> dict[str, Any]:
        self.made += 1
        found = bench_events._event(self.rng, self.account, kind, self.made)
        if "order_id" in found:
            found["order_id"] = f"{self.tag}-{self.made}"
        return found

    def request(self, size: int) -> list[dict[str, Any]]:
        if size == 1:
            return [self.one("PURCHASE")]
        return [self.one("PURCHASE" if i % 5 < 3 else self.custom) for i in range(size)]


class _Clock:
    """CPU seconds of the process, optionally profiled (by the thread's CPU clock) on the thread that runs."""

    def __init__(self, profile: bool) -> None:
        self.profile = cProfile.Profile(time.thread_time) if profile else None

    def start(self) -> None:
        if self.profile is not None:
            self.profile.enable()

    def stop(self) -> None:
        if self.profile is not None:
            self.profile.disable()


async def _round(db: Database, shape: str, made: _Events, clocks: dict[str, _Clock],
                 scale: float = 1.0) -> tuple[float, float, int]:
    """(check µs/event, apply µs/event, events) of one round of ``shape``."""
    fewest, most, size, total = SHAPES[shape]
    total = max(size, int(total * scale) // size * size)
    turns: list[list[list[dict[str, Any]]]] = []
    left = total
    while left:
        requests = min(made.rng.randint(fewest, most), left // size)
        turns.append([made.request(size) for _ in range(requests)])
        left -= requests * size
    check_cpu = apply_cpu = 0.0
    accepted = 0
    for turn in turns:
        now = utcnow()
        cpu = time.process_time()
        clocks["check"].start()
        prepared = [[await service.check(db.reader, data.DEMO_ACCOUNT, raw, "SERVER", now,
                                         prefix=f"events[{i}]" if size > 1 else "") for i, raw in enumerate(request)]
                    for request in turn]
        clocks["check"].stop()
        check_cpu += time.process_time() - cpu

        async def unit(tx: Any, prepared: list[list[service.Prepared]] = prepared) -> list[Any]:
            clocks["apply"].start()
            try:
                held = await catalog.catalog_of(db, data.DEMO_ACCOUNT, tx)
                return await service.apply_requests(tx, data.DEMO_ACCOUNT, prepared, held)
            finally:
                clocks["apply"].stop()

        cpu = time.process_time()
        results = await db.write(unit, account_turn(data.DEMO_ACCOUNT))
        apply_cpu += time.process_time() - cpu
        for request in results:
            assert not isinstance(request, BaseException), request
            accepted += sum(1 for r in request if not isinstance(r, ServiceError))
    assert accepted == total, (accepted, total)
    return check_cpu / total * 1e6, apply_cpu / total * 1e6, total


async def main(rounds: int, profile: str | None, shapes: list[str], scale: float = 1.0) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-events-cpu-") as tmp:
        path = Path(tmp) / "events.db"
        db = Database(str(path), synchronous="FULL")
        await db.open()
        try:
            await load_seed(db, json.loads(data.ingest_only_demo(Path(tmp)).read_text()), allow_private=True)
            made = _Events("cpu")
            clocks = {shape: {"check": _Clock(profile is not None), "apply": _Clock(profile is not None)}
                      for shape in SHAPES}
            await _round(db, "single", made, {"check": _Clock(False), "apply": _Clock(False)}, scale)  # warm-up
            found: dict[str, list[tuple[float, float, int]]] = {shape: [] for shape in shapes}
            for r in range(rounds):
                for shape in (shapes if r % 2 == 0 else reversed(shapes)):
                    result = await _round(db, shape, made, clocks[shape], scale)
                    found[shape].append(result)
                    print(f"round {r + 1} {shape}: check {result[0]:.1f}, apply {result[1]:.1f}, "
                          f"all {result[0] + result[1]:.1f} µs of CPU an event ({result[2]:,} events)", flush=True)
            print("\n| shape | check µs/event | apply µs/event | all µs/event |\n|---|---|---|---|")
            for shape, results in found.items():
                if not results:
                    continue
                check = statistics.median(x[0] for x in results)
                apply = statistics.median(x[1] for x in results)
                every = statistics.median(x[0] + x[1] for x in results)
                print(f"| {shape} | {check:.1f} | {apply:.1f} | {every:.1f} |")
            if profile is not None:
                for shape, pair in ((shape, clocks[shape]) for shape in shapes):
                    for phase, clock in pair.items():
                        assert clock.profile is not None
                        clock.profile.dump_stats(f"{profile}.{shape}.{phase}.prof")
        finally:
            await db.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rounds", nargs="?", type=int, default=5)
    parser.add_argument("--profile", metavar="PREFIX", help="write cProfile files PREFIX.<shape>.<phase>.prof")
    parser.add_argument("--shape", choices=list(SHAPES), action="append", help="only this shape (repeatable)")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="events of each round (and of the warm-up) times this; under valgrind --tool=callgrind, "
                             "runs of 0 and 1 rounds give one round's instructions as their difference")
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.profile, args.shape or list(SHAPES), args.scale))
