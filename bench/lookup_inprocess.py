"""The customer lookup's CPU in-process (issue 33): ``.venv/bin/python -m bench.lookup_inprocess [DB]``.

Whole-service throughput on this shared 2-core machine moves by tens of percent between runs; the CPU one
lookup costs the event loop does not. This builds the real app (``linksvc.app.create_app``, default settings
but for the demo data) on a copy of a storefront database (default: the small one ``bench.data`` builds for
1,000 campaigns and 20,000 customers), runs its start-up (``web.AppRunner(app).setup()``), takes a token
with the SERVER key, then sends the lookup lane (``api.server.fast_lane_of(app)``) requests for random
customers, as wrk's script sends them (by phone in four formats, and by document number), and measures the
thread's CPU (``time.thread_time``) per lookup:

- ``lane``: the lane's call alone, on requests parsed beforehand (the answers held by the worker are given
  again: :mod:`linksvc.customers.held`);
- ``lane, nothing held``: the same with the held answers dropped before each lookup (a customer's first
  lookup on this worker, or the first after a change to it);
- ``parse + lane``: the bytes of the request through aiohttp's parser, the lane, and the access line queued
  as the server queues it (``api.access_log.AccessLogger.lane``);
- ``access line``: what the access log's thread then pays per line (fields read off the answer, the JSON line
  made), written to ``/dev/null``.

Each figure is the median of ``--rounds`` rounds of ``--lookups`` lookups each; ``--profile`` prints a
cProfile of one round of the lane instead.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import logging
import pstats
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp.http_parser import HttpRequestParser, RawRequestMessage

from api.access_log import AccessLogger, _fields
from api.appkeys import DB
from api.server import fast_lane_of
from bench import data
from bench import storefront_docs as docs
from bench.storefront import sample_customers
from linksvc.accounts.service import issue_token, principal_for
from linksvc.app import create_app
from linksvc.customers.held import held_lookups
from linksvc.logs import JsonFormatter, ServiceHandler
from linksvc.settings import Settings

SMALL = (1_000, 20_000)  # campaigns, customers of the default data set


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.lookup_inprocess", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("db", nargs="?", help="a storefront database (bench.data); default: the small one")
    parser.add_argument("--lookups", type=int, default=20_000, help="lookups per round [20000]")
    parser.add_argument("--rounds", type=int, default=5, help="rounds; the median is reported [5]")
    parser.add_argument("--customers", type=int, default=5_000, help="distinct customers looked up [5000]")
    parser.add_argument("--profile", action="store_true", help="a cProfile of one round of the lane")
    parser.add_argument("--in-place", action="store_true",
                        help="serve DB itself rather than a copy (as bench.storefront does; it gains a token)")
    return parser.parse_args(argv)


def raw_requests(paths: Sequence[str], token: str) -> list[bytes]:
    """The requests as wrk sends them (bench.load's script): GET, HTTP/1.1, Host and the bearer token."""
    return [f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAuthorization: Bearer {token}\r\n\r\n".encode()
            for path in paths]


def parse(parser: Any, raw: bytes) -> RawRequestMessage:
    messages, _, _ = parser.feed_data(raw)
    message: RawRequestMessage = messages[0][0]
    return message


def per_call(calls: Callable[[], None], count: int) -> float:
    """µs of this thread's CPU per call, over ``count`` calls."""
    started = time.thread_time()
    calls()
    return (time.thread_time() - started) / count * 1e6


async def _measure(path: Path, args: argparse.Namespace) -> None:
    settings = Settings(db_path=str(path), load_demo=False, admin_token="bench-admin-token")
    app = create_app(settings)
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        store = app[DB]
        token, _ = await issue_token(store, docs.SERVER_KEY, 3600)
        await principal_for(store, token)  # held by the worker from now on, as after a first request
        lane = fast_lane_of(app)
        assert lane is not None
        samples = sample_customers(path, args.customers)
        rng = random.Random(7)
        paths = [s.path(i) if i % 5 else s.document_path() for i, s in enumerate(samples)]
        picked = [rng.choice(paths) for _ in range(args.lookups)]
        raws = raw_requests(picked, token)
        loop = asyncio.get_running_loop()
        parser = HttpRequestParser(None, loop, 2 ** 16, max_line_size=8190, max_field_size=8190)
        messages = [parse(parser, raw) for raw in raws]
        for message in messages[:50]:
            answer = lane(message)
            assert answer is not None and answer.startswith((b"HTTP/1.1 200 ", b"HTTP/1.1 404 ")), answer
        logger = logging.getLogger("bench.lookup.access")
        logger.propagate = False
        logger.setLevel(logging.INFO)
        with Path("/dev/null").open("w") as sink:
            handler = ServiceHandler(sink)
            handler.setFormatter(JsonFormatter())
            logger.addHandler(handler)
            access = AccessLogger(logger, "")

            def lane_only() -> None:
                for message in messages:
                    lane(message)

            held = held_lookups(store)

            def lane_nothing_held() -> None:
                for message in messages:
                    held.clear()
                    lane(message)

            def parse_and_lane() -> None:
                clock = time.perf_counter
                for raw in raws:
                    message = parse(parser, raw)
                    started = clock()
                    answer = lane(message)
                    assert answer is not None
                    access.lane(time.time(), message, answer, clock() - started, "127.0.0.1")
                    parser.message_consumed()

            answers = [(time.time(), m, lane(m), 0.0001, "127.0.0.1") for m in messages]

            def access_lines() -> None:
                handler.write_access(logger.name, [_fields(entry) for entry in answers])

            if args.profile:
                profile = cProfile.Profile(time.thread_time)
                profile.runcall(lane_only)
                pstats.Stats(profile).sort_stats("tottime").print_stats(25)
                return
            figures: dict[str, list[float]] = {"lane": [], "lane, nothing held": [], "parse + lane": [],
                                               "access line": []}
            for _ in range(args.rounds):
                figures["lane"].append(per_call(lane_only, len(messages)))
                figures["lane, nothing held"].append(per_call(lane_nothing_held, len(messages)))
                figures["parse + lane"].append(per_call(parse_and_lane, len(raws)))
                figures["access line"].append(per_call(access_lines, len(answers)))
                access.access_log.flush() if access.access_log is not None else None
            print(f"{path.name}: {len(samples):,} customers, {args.lookups:,} lookups a round, {args.rounds} rounds "
                  f"(µs of CPU per lookup: median, then each round)")
            for name, values in figures.items():
                print(f"  {name:<18} {statistics.median(values):7.1f}   "
                      + " ".join(f"{v:.1f}" for v in values))
    finally:
        await runner.cleanup()


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    source = Path(args.db) if args.db else data.ensure_storefront(*SMALL).path
    if args.in_place:
        asyncio.run(_measure(source, args))
        return 0
    with tempfile.TemporaryDirectory(prefix="lookup-bench-") as scratch:
        path = data.copy_database(source, Path(scratch) / "lookup.db")
        asyncio.run(_measure(path, args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
