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

- ``through the protocol``: other requests of the same kind, as bytes given to the server's own protocol
  (``api.server.ServiceRequestHandler.data_received``, made by the runner ``linksvc serve`` uses, the access log
  on as it serves) on 64 connections whose transport keeps what is written: aiohttp's parser, the lane, the
  access line queued, and the requests the lane leaves to the handler, answered by it (3% of the realistic
  mix: the preview fetchers). What the server spends beyond this is the socket's system calls and uvloop's.

With ``--changed``, a link is changed before each pass, as an edit in the admin API changes it: every link the
worker held is dropped then, and the pass measures the lane reading each link it answers (the store's reader,
at once) as well.

Each figure is the median of ``--rounds`` rounds, each on a fresh app. The clicks are recorded as the server
records them (the recorder's buffer and journal), and written by its writer between slices of requests.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import random
import shutil
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from aiohttp import web
from aiohttp.http_parser import HttpRequestParser, RawRequestMessage

from api import server
from api.access_log import AccessLogger
from api.appkeys import DB
from api.server import fast_lane_of
from bench import data
from bench.redirects import FIXTURE, UA_MIX, UNIQUE_UA
from linksvc.app import FREEZE_HELD, create_app
from linksvc.links.service import MAX_LINKS_HELD, held
from linksvc.readmodel import read_model
from linksvc.settings import load_settings
from storage.db import Tx, execute

SLICE = 500  # requests between two turns of the event loop


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.redirects_inprocess", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=30_000, help="requests per pass [30000]")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, each on a fresh app; the median [3]")
    parser.add_argument("--unique", action="store_true", help="a never-seen user agent per request")
    parser.add_argument("--changed", action="store_true",
                        help="a link changed before each pass (as an edit does): the worker holds no link then")
    return parser.parse_args(argv)


class _Silent:
    """The parser's protocol: nothing to tell it."""

    def __getattr__(self, name: str) -> object:
        return lambda *args, **kwargs: None


class _Kept:
    """A connection's transport that keeps a count of what is written instead of sending it."""

    def __init__(self) -> None:
        self.writes = 0

    def write(self, data: bytes) -> None:
        self.writes += 1

    def get_extra_info(self, name: str, default: object = None) -> object:
        return ("127.0.0.1", 40000) if name == "peername" else default

    def is_closing(self) -> bool:
        return False

    def __getattr__(self, name: str) -> object:  # pause_reading, set_write_buffer_limits, close...
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


CONNECTIONS = 64  # the protocol pass's connections, one request each between two turns of the loop


async def _change_a_link(app: web.Application) -> None:
    """One link changed as an edit changes it (its row updated: the links' generation moves), so that the worker
    holds no link any more."""
    async def unit(tx: Tx) -> None:
        await execute(tx, "UPDATE links SET updated_at = updated_at WHERE id = (SELECT min(id) FROM links)")
    await app[DB].write(unit)
    held(app[DB], "")  # follows the generation: what the worker held is dropped
    if len(read_model(app[DB], "links", MAX_LINKS_HELD)):
        raise RuntimeError("the change left the worker's links held")


async def _round(source: Path, raw: list[bytes], other: list[bytes], changed: bool
                 ) -> tuple[float, float, float, int]:
    with tempfile.TemporaryDirectory(prefix="redirects-inprocess-") as scratch:
        db = Path(scratch) / "links.db"
        shutil.copy(source, db)
        settings = load_settings({"LINKSVC_ADMIN_TOKEN": "bench", "LINKSVC_DB": str(db), "LINKSVC_LOAD_DEMO": "0"})
        app = create_app(settings)
        app[FREEZE_HELD] = True
        # The runner and the access log as `linksvc serve` sets them up (linksvc.__main__._run).
        runner = server.ServiceRunner(app, header_timeout=settings.header_timeout_seconds,
                                      access_log_class=AccessLogger, access_log=logging.getLogger("linksvc.access"),
                                      keepalive_timeout=75.0)
        await runner.setup()
        try:
            lane = fast_lane_of(app)
            assert lane is not None
            parser = HttpRequestParser(_Silent(), asyncio.get_running_loop(), 2 ** 16)
            messages: list[RawRequestMessage] = [parser.feed_data(request)[0][0][0] for request in raw]
            holding = [task for task in asyncio.all_tasks() if task.get_name() == "linksvc-hold-links"]
            await asyncio.wait_for(asyncio.gather(*holding), 120)  # the links held in the background at start-up
            figures = []
            answered = 0
            for _ in range(2):
                if changed:
                    await _change_a_link(app)
                started = time.thread_time()
                for at in range(0, len(messages), SLICE):
                    for message in messages[at:at + SLICE]:
                        answered += lane(message) is not None
                    await asyncio.sleep(0)
                figures.append((time.thread_time() - started) / len(messages) * 1e6)
            if changed:
                await _change_a_link(app)
            protocol = await _through_the_protocol(runner, other)
            return figures[0], figures[1], protocol, answered // 2
        finally:
            await runner.cleanup()


async def _through_the_protocol(runner: server.ServiceRunner, raw: list[bytes]) -> float:
    """CPU per request of ``raw`` given as bytes to the server's protocol, one per connection and turn."""
    made = runner.server
    assert made is not None
    handlers = [made() for _ in range(CONNECTIONS)]
    transports = [_Kept() for _ in handlers]
    for handler, transport in zip(handlers, transports, strict=True):
        handler.connection_made(transport)  # type: ignore[arg-type]
    try:
        started = time.thread_time()
        for at in range(0, len(raw), CONNECTIONS):
            for handler, request in zip(handlers, raw[at:at + CONNECTIONS], strict=False):
                handler.data_received(request)
            for _ in range(4):  # the handler's requests: its task, the answer, the access line
                await asyncio.sleep(0)
        spent = (time.thread_time() - started) / len(raw) * 1e6
    finally:
        for handler in handlers:
            handler.connection_lost(None)
    if sum(t.writes for t in transports) != len(raw):
        raise RuntimeError("not every request was answered through the protocol")
    return spent


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    source = data.ensure_links(100_000).path
    with contextlib.closing(sqlite3.connect(source)) as conn:
        codes = [row[0] for row in conn.execute("SELECT code FROM links")]
    firsts, seconds, protocols = [], [], []
    for number in range(args.rounds):
        first, second, protocol, answered = asyncio.run(_round(
            source, _requests(codes, args.requests, args.unique, number),
            _requests(codes, args.requests, args.unique, 1000 + number), args.changed))
        firsts.append(first)
        seconds.append(second)
        protocols.append(protocol)
        print(f"round {number + 1}: first pass {first:.1f} µs, second pass {second:.1f} µs, through the protocol "
              f"{protocol:.1f} µs a request ({answered:,} of {args.requests:,} answered by the lane)")
    print(f"median of {args.rounds}: first pass {statistics.median(firsts):.1f} µs, "
          f"second pass {statistics.median(seconds):.1f} µs, through the protocol "
          f"{statistics.median(protocols):.1f} µs a request ("
          f"{'a never-seen user agent each' if args.unique else 'the realistic mix of user agents'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
