"""The access log: one line per answered request, formatted and written off the event loop.

On the event loop an answered request costs one append of its raw fields to a queue (a ``deque``): no log
record, no formatting, no write. A thread per process (:class:`AccessLog`) takes what is queued every
:data:`AccessLog.INTERVAL` seconds, formats the lines and writes them, a batch in one write to the service's
log handler (:class:`linksvc.logs.ServiceHandler`: the lines are those its formatter writes for a log record);
any other handler on the way (a test's capture, a library user's) gets one log record per line, as before. The
queue keeps the order in which the worker answered; what is still queued is written at a clean stop
(:func:`close_access_logs`, called when the server stops, and at the interpreter's exit).

Two paths append: the handlers' (aiohttp calls :meth:`AccessLogger.log` once the answer is sent) and the fast
lanes of :mod:`api.server`, whose entries hold the parsed request and the bytes of the answer: the status and
the request id are read off those bytes by the thread, so the line holds what the client received.

A line's fields: ``method``, ``path`` (without the query, where a client may have put a credential),
``status``, ``duration_ms``, ``remote`` (the TCP peer) and ``request_id``; never a header.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections import deque
from typing import Any

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger
from aiohttp.http_parser import RawRequestMessage

from api.observability import REQUEST_ID
from linksvc.logs import ServiceHandler

MAX_PENDING = 200_000
"""Lines queued at most (about 40 MB): beyond, when the log's output does not keep up (a blocked pipe), lines
are dropped and counted, and the count is logged as a warning once the writer catches up."""

# A queued line: (time answered, method, path, status, seconds, remote, request id) from a handler, or
# (time answered, parsed request, answer bytes, seconds, remote) from a fast lane.
Entry = tuple[Any, ...]

log = logging.getLogger("linksvc.http")


class AccessLog:
    """The queue of one logger's access lines in this process, and the thread that writes them."""

    INTERVAL = 0.1  # seconds between two batches

    def __init__(self, logger: logging.Logger) -> None:
        self.logger = logger
        self._entries: deque[Entry] = deque()
        self._append = self._entries.append
        self.dropped = 0  # lines dropped because the queue was full
        self._reported = 0
        self._lock = threading.Lock()  # one batch written at a time (the thread's, or a flush)
        self._wake = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._pid = 0

    def add(self, entry: Entry) -> None:
        """Queues a line (on the event loop: an append, nothing else)."""
        if len(self._entries) < MAX_PENDING:
            self._append(entry)
        else:
            self.dropped += 1

    def start(self) -> None:
        """Starts the writer thread, once per process (a forked worker starts its own)."""
        if self._pid == os.getpid() and self._thread is not None and self._thread.is_alive():
            return
        self._pid = os.getpid()
        self._stopping = False
        self._wake.clear()
        self._thread = threading.Thread(target=self._run, name=f"access log {self.logger.name}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stopping:
            self._wake.wait(self.INTERVAL)
            try:
                self.flush()
            except Exception:  # a line the handler cannot take: reported, the thread goes on
                log.exception("could not write the access log")

    def flush(self) -> None:
        """Writes every queued line now, in the caller's thread."""
        with self._lock:
            entries = self._entries
            while entries:
                pop = entries.popleft
                self._write([pop() for _ in range(len(entries))])
            if self.dropped != self._reported:
                lost, self._reported = self.dropped - self._reported, self.dropped
                self.logger.warning("dropped %d access lines: the log's output did not keep up", lost)

    def close(self) -> None:
        """Stops the thread after it has written everything queued."""
        thread, self._thread = self._thread, None
        self._stopping = True
        self._wake.set()
        if thread is not None and thread is not threading.current_thread() and self._pid == os.getpid():
            thread.join()
        self.flush()

    def _write(self, entries: list[Entry]) -> None:
        lines = [_fields(entry) for entry in entries]
        logger: logging.Logger | None = self.logger
        records: list[logging.LogRecord] | None = None
        while logger is not None:  # the handlers a record of this logger reaches, as Logger.callHandlers finds them
            for handler in logger.handlers:
                if handler.level > logging.INFO:
                    continue
                if isinstance(handler, ServiceHandler):
                    handler.write_access(self.logger.name, lines)
                    continue
                if records is None:
                    records = [self._record(*line) for line in lines]
                for record in records:
                    handler.handle(record)
            logger = logger.parent if logger.propagate else None

    def _record(self, created: float, method: str, path: str, status: int, duration_ms: float, remote: str | None,
                request_id: str) -> logging.LogRecord:
        return ServiceHandler.access_record(self.logger.name, created, method, path, status, duration_ms, remote,
                                            request_id)


def _fields(entry: Entry) -> tuple[float, str, str, int, float, str | None, str]:
    """A queued line's fields: (time, method, path, status, duration in ms, remote, request id)."""
    if len(entry) == 7:
        created, method, path, status, seconds, remote, request_id = entry
        return created, method, path, status, round(seconds * 1000, 3), remote, request_id
    created, message, answer, seconds, remote = entry
    start = answer.find(b"\r\nX-Request-Id: ")
    request_id = "-"
    if start >= 0:
        start += 16
        request_id = answer[start:answer.find(b"\r\n", start)].decode("ascii", "replace")
    return (created, message.method, message.url.path, int(answer[9:12]), round(seconds * 1000, 3), remote,
            request_id)


_LOGS: dict[str, AccessLog] = {}
_LOGS_LOCK = threading.Lock()


def access_log_of(logger: logging.Logger) -> AccessLog:
    """The process's :class:`AccessLog` of ``logger``, its thread started."""
    access = _LOGS.get(logger.name)
    if access is None:
        with _LOGS_LOCK:
            access = _LOGS.get(logger.name)
            if access is None:
                access = _LOGS[logger.name] = AccessLog(logger)
    access.start()
    return access


def flush_access_logs() -> None:
    """Writes every queued access line now (what a test reads, or a stop waits for)."""
    for access in list(_LOGS.values()):
        access.flush()


def close_access_logs() -> None:
    """Writes what is queued and stops the writers (at a clean stop; a later line starts a writer again)."""
    for access in list(_LOGS.values()):
        access.close()


atexit.register(close_access_logs)


class AccessLogger(AbstractAccessLogger):
    """aiohttp's access logger (one per connection): queues the raw fields of each answered request on the
    process's :class:`AccessLog`. Secrets in headers are never logged, nor the query."""

    def __init__(self, logger: logging.Logger, log_format: str) -> None:
        super().__init__(logger, log_format)
        self.access_log: AccessLog | None = access_log_of(logger) if self.enabled else None

    @property
    def enabled(self) -> bool:
        # aiohttp skips log() when False: no work per request when the level hides access lines.
        return self.logger.isEnabledFor(logging.INFO)

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time_taken: float) -> None:
        access = self.access_log
        if access is not None:
            access.add((time.time(), request.method, request.path, response.status, time_taken, request.remote,
                        request.get(REQUEST_ID, "-")))

    def lane(self, now: float, message: RawRequestMessage, answer: bytes, seconds: float, remote: str | None) -> None:
        """Queues the line of a request a fast lane answered with ``answer`` (see :mod:`api.server`)."""
        access = self.access_log
        if access is not None:
            access.add((now, message, answer, seconds, remote))
