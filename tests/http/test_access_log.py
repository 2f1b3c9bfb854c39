"""The access log with the fast lanes (issue 33): the service served as ``linksvc serve`` serves it (its access
logger on ``linksvc.access``, the log at INFO, JSON lines): the redirect and customer lookup lanes answer, and
every request, whichever path answered it, has its line (method, path without the query, status, duration, peer,
request id), in the order the worker answered. An access line is the line the service's formatter writes for
the same log record."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from api.access_log import AccessLogger, flush_access_logs
from api.appkeys import DB
from linksvc.app import create_app
from linksvc.logs import JsonFormatter, ServiceHandler, configure_logging
from linksvc.seed import load_seed
from linksvc.settings import Settings
from tests.conftest import service_server, token_for
from tests.factories import A
from tests.http.test_fast_lane import converse
from tests.http.test_fast_lane import lane as redirect_lane
from tests.http.test_lookup_lane import CODE, LOOKUP, _seed, at_once, request
from tests.http.test_lookup_lane import lane as lookup_lane
from tests.http.test_resolver import DESKTOP

FIELDS = ["ts", "level", "logger", "msg", "request_id", "method", "path", "status", "duration_ms", "remote"]


@pytest.fixture
def log_text() -> Iterator[io.StringIO]:
    """The logging of ``linksvc serve`` at its default level (INFO, JSON lines), written to a buffer."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    levels = {name: logger.level for name, logger in logging.root.manager.loggerDict.items()
              if isinstance(logger, logging.Logger)}
    configure_logging("INFO", "json")
    stream = io.StringIO()
    handler = root.handlers[0]
    assert isinstance(handler, ServiceHandler)
    handler.setStream(stream)
    yield stream
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, old in levels.items():
        logging.getLogger(name).setLevel(old)


@pytest.fixture
async def served(aiohttp_client: Any, settings: Settings, log_text: io.StringIO) -> TestClient:
    server = service_server(create_app(settings))
    await server.start_server(access_log_class=AccessLogger, access_log=logging.getLogger("linksvc.access"))
    client: TestClient = await aiohttp_client(server)
    await load_seed(client.app[DB], _seed(), allow_private=True)
    return client


def access_lines(stream: io.StringIO) -> list[dict[str, Any]]:
    flush_access_logs()
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    return [line for line in lines if line["logger"] == "linksvc.access"]


async def test_the_lanes_answer_with_the_access_log_on_and_every_request_has_its_line_in_order(
        served: TestClient, log_text: io.StringIO) -> None:
    token = await token_for(served, A)
    auth = f"Authorization: Bearer {token}\r\n"
    redirect = f"User-Agent: {DESKTOP}\r\n"
    sends = [
        request(f"/{CODE}", None, extra=redirect),  # the link's first click: read on the lane (SQLite) or the handler
        request(f"/{CODE}?utm_source=ig", None, extra=redirect),  # the redirect lane
        request(f"/{CODE}", None, extra=redirect + "X-Request-Id: trace-lane-1\r\n"),
        request(f"{LOOKUP}?document_number=CC100", token),  # the lookup lane (the token was used once)
        request(f"{LOOKUP}?phone=%2B57%20300%20000%200000", token),  # its 404
        request(f"{LOOKUP}?document_number=CC100&token={token}", None, extra=auth),  # two parameters: the handler
        request("/healthz", None, extra="X-Request-Id: trace-handler-1\r\n"),
        request(f"/{CODE}", None, extra=redirect),
    ]
    await served.get(f"{LOOKUP}?document_number=CC100", headers={"Authorization": f"Bearer {token}"})
    before = len(access_lines(log_text))
    redirects, lookups = redirect_lane(served).answered, lookup_lane(served).answered

    replies = await converse(served, sends)

    assert redirect_lane(served).answered - redirects == 3 + at_once(served, 1)
    assert lookup_lane(served).answered - lookups == at_once(served, 2)
    assert [reply.status for reply in replies] == [302, 302, 302, 200, 404, 200, 200, 302]
    lines = access_lines(log_text)[before:]
    assert [(line["method"], line["path"], line["status"], line["request_id"]) for line in lines] == [
        ("GET", send.split(b" ")[1].decode().partition("?")[0].replace("%2B", "+").replace("%20", " "),
         reply.status, reply.headers["x-request-id"]) for send, reply in zip(sends, replies, strict=True)]
    assert lines[2]["request_id"] == "trace-lane-1" and lines[6]["request_id"] == "trace-handler-1"
    for line in lines:
        assert list(line) == FIELDS, line
        assert line["level"] == "info" and line["remote"] == "127.0.0.1"
        assert isinstance(line["duration_ms"], float) and line["duration_ms"] >= 0
        assert line["msg"] == f"GET {line['path']} {line['status']}"
    assert token not in log_text.getvalue()


@pytest.mark.parametrize("path, remote", [
    ("/lnkaaaa", "127.0.0.1"),
    ('/a "quoted" \\ path\t\u00f1\u2603\udcff', None),
    ("/https://user:pa55w0rd@hooks.example.com/x", "::1"),
])
def test_an_access_line_is_the_line_the_formatter_writes_for_its_record(path: str, remote: str | None) -> None:
    formatter = JsonFormatter()
    formatter.converter = __import__("time").gmtime
    fields = (1_700_000_123.4567, "GET", path, 302, 0.123, remote, "abc-123")
    record = ServiceHandler.access_record("linksvc.access", *fields)
    line = formatter.access_line("linksvc.access", *fields)
    assert line == formatter.format(record)
    assert "pa55w0rd" not in line
    assert json.loads(line)["ts"] == "2023-11-14T22:15:23.456Z"
