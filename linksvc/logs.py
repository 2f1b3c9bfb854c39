"""Logging set-up: one JSON object a line (or plain text), each carrying the request id.

Both formats mask the credentials of any URL in the line (``https://********@host``), tracebacks included:
the service's own lines never put them there, and an exception from a library quoting a URL does not either.

The handler :func:`configure_logging` installs (:class:`ServiceHandler`) also takes the access log's lines in
batches (:mod:`api.access_log`): formatted without a log record, exactly as its formatter writes the record, and
written in one write per batch.
"""

from __future__ import annotations

import contextvars
import json
import logging
import sys
import time
from json.encoder import encode_basestring_ascii  # what json.dumps escapes strings with
from typing import Any

from linksvc.redaction import mask_url_credentials

request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}
# Libraries whose DEBUG lines repeat the data they carry: aiosqlite logs every statement with its parameters,
# among them stored documents with webhook secrets and destination credentials. They stay at INFO or above
# whatever the level, so that LINKSVC_LOG_LEVEL=DEBUG never writes a stored secret to the log.
QUIET_LIBRARIES = ("aiosqlite",)


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = request_id_var.get()
        return True


class JsonFormatter(logging.Formatter):
    _second: tuple[int, str] = (-1, "")  # the last second stamped, and its text

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
            "request_id": getattr(record, "request_id", "-"),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and key not in entry:
                entry[key] = value
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return mask_url_credentials(json.dumps(entry, default=str))

    def stamp(self, created: float) -> str:
        """The ``ts`` of a line made at ``created``, as :meth:`format` writes it (the second's text kept)."""
        second = int(created)
        if self._second[0] != second:
            self._second = (second, time.strftime("%Y-%m-%dT%H:%M:%S", self.converter(second)))
        return f"{self._second[1]}.{int((created - second) * 1000):03d}Z"

    def access_line(self, name: str, created: float, method: str, path: str, status: int, duration_ms: float,
                    remote: str | None, request_id: str) -> str:
        """The line :meth:`format` writes for :meth:`ServiceHandler.access_record`'s record, without making it."""
        text = (f'{{"ts": "{self.stamp(created)}", "level": "info", "logger": {encode_basestring_ascii(name)}, '
                f'"msg": {encode_basestring_ascii(f"{method} {path} {status}")}, '
                f'"request_id": {encode_basestring_ascii(request_id)}, "method": {encode_basestring_ascii(method)}, '
                f'"path": {encode_basestring_ascii(path)}, "status": {status}, "duration_ms": {duration_ms!r}, '
                f'"remote": {"null" if remote is None else encode_basestring_ascii(remote)}}}')
        return mask_url_credentials(text)


class TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return mask_url_credentials(super().format(record))


class ServiceHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """The service's handler: a stream (stderr), the request id on every record, and the access log in batches."""

    @staticmethod
    def access_record(name: str, created: float, method: str, path: str, status: int, duration_ms: float,
                      remote: str | None, request_id: str) -> logging.LogRecord:
        """The log record of an access line (what handlers other than this one are given)."""
        record = logging.LogRecord(name, logging.INFO, "", 0, "%s %s %s", (method, path, status), None)
        record.created, record.msecs = created, int((created - int(created)) * 1000) + 0.0
        record.__dict__.update(request_id=request_id, method=method, path=path, status=status,
                               duration_ms=duration_ms, remote=remote)
        return record

    def write_access(self, name: str, lines: list[tuple[float, str, str, int, float, str | None, str]]) -> None:
        """Writes access lines (fields as :meth:`access_record` takes them) in one write."""
        formatter = self.formatter
        if isinstance(formatter, JsonFormatter):
            text = [formatter.access_line(name, *line) for line in lines]
        else:
            text = [self.format(self.access_record(name, *line)) for line in lines]
        text.append("")
        batch = self.terminator.join(text)
        self.acquire()
        try:
            self.stream.write(batch)
            self.flush()
        finally:
            self.release()


def configure_logging(level: str = "INFO", fmt: str = "json") -> None:
    handler = ServiceHandler(sys.stderr)
    handler.addFilter(RequestIdFilter())
    if fmt == "json":
        formatter: logging.Formatter = JsonFormatter()
        formatter.converter = time.gmtime
    else:
        formatter = TextFormatter("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s")
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in QUIET_LIBRARIES:
        logging.getLogger(name).setLevel(max(logging.INFO, root.level))
