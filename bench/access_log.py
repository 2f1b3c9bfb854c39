"""What an access line costs, per line: ``.venv/bin/python -m bench.access_log`` (prints only).

On the event loop: the line through ``logging`` as it was written before issue 33 (``logger.info`` with its
fields, ``JsonFormatter``, a ``StreamHandler``), the same call into the standard library's ``QueueHandler``,
and an append of the raw fields to a ``deque`` (what :mod:`api.access_log` does). In the writing thread: a
``LogRecord`` formatted by ``JsonFormatter``, and :meth:`linksvc.logs.JsonFormatter.access_line`. Process time
per line over ``--lines`` lines; the log goes to ``/dev/null``.
"""

from __future__ import annotations

import argparse
import collections
import logging
import logging.handlers
import os
import queue
import time
from collections.abc import Callable
from typing import Any

from linksvc.logs import JsonFormatter, ServiceHandler, configure_logging

FIELDS = ("GET", "/lnkaaaa", 302, 0.0001234, "127.0.0.1", "abcdefghijklmnop")


def per_line(lines: int, run: Callable[[], None]) -> float:
    started = time.process_time()
    run()
    return (time.process_time() - started) / lines * 1e6


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.access_log", description=__doc__)
    parser.add_argument("--lines", type=int, default=200_000)
    lines = parser.parse_args(argv).lines
    configure_logging("INFO", "json")
    root = logging.getLogger()
    handlers = root.handlers[:]
    sink = open(os.devnull, "w")  # noqa: SIM115
    assert isinstance(handlers[0], ServiceHandler)
    handlers[0].setStream(sink)
    logger = logging.getLogger("linksvc.access")
    method, path, status, seconds, remote, request_id = FIELDS

    def through_logging() -> None:
        for _ in range(lines):
            logger.info("%s %s %s", method, path, status, extra={
                "request_id": request_id, "method": method, "path": path, "status": status,
                "duration_ms": round(seconds * 1000, 3), "remote": remote})

    entries: collections.deque[tuple[Any, ...]] = collections.deque()

    def appended() -> None:
        append = entries.append
        for _ in range(lines):
            append((time.time(), method, path, status, seconds, remote, request_id))

    formatter = JsonFormatter()
    formatter.converter = time.gmtime

    def records() -> None:
        text = []
        for created, *rest in entries:
            record = ServiceHandler.access_record("linksvc.access", created, method, path, status,
                                                  round(rest[3] * 1000, 3), remote, request_id)
            text.append(formatter.format(record))
        "\n".join(text)

    def direct() -> None:
        text = [formatter.access_line("linksvc.access", created, method, path, status, round(rest[3] * 1000, 3),
                                      remote, request_id) for created, *rest in entries]
        "\n".join(text)

    print(f"event loop, logger.info -> JsonFormatter -> StreamHandler: {per_line(lines, through_logging):.2f} µs")
    root.handlers[:] = [logging.handlers.QueueHandler(queue.SimpleQueue())]
    print(f"event loop, logger.info -> QueueHandler: {per_line(lines, through_logging):.2f} µs")
    print(f"event loop, deque.append of the raw fields: {per_line(lines, appended):.2f} µs")
    print(f"writer thread, LogRecord + JsonFormatter.format: {per_line(lines, records):.2f} µs")
    print(f"writer thread, JsonFormatter.access_line: {per_line(lines, direct):.2f} µs")
    root.handlers[:] = handlers
    sink.close()


if __name__ == "__main__":
    main()
