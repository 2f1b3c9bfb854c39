"""The redirect lane's CPU in-process (issue 33): ``.venv/bin/python -m bench.redirects_inprocess``.

Whole-service throughput on this shared 2-core machine moves by tens of percent between runs; the CPU the
lane spends on one redirect does not. This builds the real app (``linksvc.app.create_app``, default settings
but for the demo data) on a copy of ``bench.redirects``' 100,000 links (built by :func:`bench.data.ensure_links`
when missing), runs its start-up until the links are held, parses ``--requests`` requests with aiohttp's
parser (codes at random over every link, user agents as ``bench.redirects`` draws them: its realistic mix, or
with ``--unique`` a never-seen one each), and measures the thread's CPU (``time.thread_time``) per call of the
resolver's lane (``api.links.resolver.FastRedirects``) twice over the same requests:

- ``first pass``: most requests are their link's first click from their kind of device: the lane works the
  answer out (``decide``) and keeps it (``linksvc.links.plans``);
- ``second pass``: the same requests again: every plain link's answer is kept.

Each figure is the median of ``--rounds`` rounds, each on a fresh app. The clicks are recorded as the server
records them (the recorder's buffer and journal), and written by its writer between slices of 500 requests.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import shutil
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from aiohttp import web
from aiohttp.http_parser import HttpRequestParser, RawRequestMessage

from api.server import fast_lane_of
from bench import data
from bench.redirects import FIXTURE, UA_MIX, UNIQUE_UA
from linksvc.app import FREEZE_HELD, create_app
from linksvc.settings import load_settings

SLICE = 500  # requests between two turns of the event loop


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.redirects_inprocess", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=30_000, help="requests per pass [30000]")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, each on a fresh app; the median [3]")
    parser.add_argument("--unique", action="store_true", help="a never-seen user agent per request")
    return parser.parse_args(argv)


class _Silent:
    """The parser's protocol: nothing to tell it."""

    def __getattr__(self, name: str) -> object:
        return lambda *args, **kwargs: None


def _requests(codes: list[str], count: int, unique: bool, seed: int) -> list[bytes]:
    agents = {entry["name"]: entry["user_agent"] for entry in json.loads(FIXTURE.read_text())}
    pool = [agents[name] for name, weight in UA_MIX.items() for _ in range(weight)]
    rnd = random.Random(seed)
    out = []
    for serial in range(count):
        agent = UNIQUE_UA % (100 + seed, serial, rnd.randrange(10 ** 6)) if unique else rnd.choice(pool)
        out.append(f"GET /{rnd.choice(codes)} HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: {agent}\r\n\r\n".encode())
    return out


async def _round(source: Path, raw: list[bytes]) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory(prefix="redirects-inprocess-") as scratch:
        db = Path(scratch) / "links.db"
        shutil.copy(source, db)
        settings = load_settings({"LINKSVC_ADMIN_TOKEN": "bench", "LINKSVC_DB": str(db), "LINKSVC_LOAD_DEMO": "0"})
        app = create_app(settings)
        app[FREEZE_HELD] = True
        runner = web.AppRunner(app)
        await runner.setup()
        try:
            lane = fast_lane_of(app)
            assert lane is not None
            parser = HttpRequestParser(_Silent(), asyncio.get_running_loop(), 2 ** 16)
            messages: list[RawRequestMessage] = [parser.feed_data(request)[0][0][0] for request in raw]
            deadline = time.monotonic() + 120
            while lane(messages[0]) is None:  # the links are held in the background at start-up
                if time.monotonic() > deadline:
                    raise RuntimeError("the links were not held in time")
                await asyncio.sleep(0.1)
            figures = []
            answered = 0
            for _ in range(2):
                started = time.thread_time()
                for at in range(0, len(messages), SLICE):
                    for message in messages[at:at + SLICE]:
                        answered += lane(message) is not None
                    await asyncio.sleep(0)
                figures.append((time.thread_time() - started) / len(messages) * 1e6)
            return figures[0], figures[1], answered // 2
        finally:
            await runner.cleanup()


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    source = data.ensure_links(100_000).path
    with contextlib.closing(sqlite3.connect(source)) as conn:
        codes = [row[0] for row in conn.execute("SELECT code FROM links")]
    firsts, seconds = [], []
    for number in range(args.rounds):
        first, second, answered = asyncio.run(_round(source, _requests(codes, args.requests, args.unique, number)))
        firsts.append(first)
        seconds.append(second)
        print(f"round {number + 1}: first pass {first:.1f} µs, second pass {second:.1f} µs a request "
              f"({answered:,} of {args.requests:,} answered by the lane)")
    print(f"median of {args.rounds}: first pass {statistics.median(firsts):.1f} µs, "
          f"second pass {statistics.median(seconds):.1f} µs a request ("
          f"{'a never-seen user agent each' if args.unique else 'the realistic mix of user agents'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
