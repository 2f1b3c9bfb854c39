"""The HTTP server around the application: aiohttp's, with the answers and deadlines the open internet needs.

Two things happen before a request reaches the application and its middleware, and aiohttp answers them
itself unless told otherwise:

- **A request that is not valid HTTP** (a control character in a header, bytes that are not a method, a
  line longer than the parser takes, a body whose framing is wrong). aiohttp answers a ``text/plain`` 400
  that quotes the offending bytes and logs them with a traceback: both can hold the raw header block, with
  the admin token or an API key in it. :class:`ServiceRequestHandler` answers ``{error, details}`` JSON that
  names the kind of fault and quotes nothing, and logs one line without the bytes.
- **A client that sends its headers slowly.** aiohttp has no deadline for them: on a new connection its
  keep-alive timer does not close anything until a first request has been answered, so a client that
  trickles a byte a second holds a connection (and its memory) for ever. Here the headers of every request
  must be complete within ``header_timeout`` seconds of its first byte (or of the connection's start);
  beyond, the answer is a 408 and the connection is closed. Bodies are bounded by the request deadline of
  the middleware (``LINKSVC_REQUEST_TIMEOUT_SECONDS``).

A third thing can happen there, by the application's choice: a **fast lane** (``FAST_LANE`` on the
application) may answer a parsed request itself, as bytes written straight to the connection, when nothing
else of that connection is queued or being handled (so answers keep their order). It gets the parsed request
(method, path, headers) and answers only what it can answer from memory, with exactly the bytes the
application would have sent; for anything else it returns None and the request takes the usual way (a new
request object, the router, the middleware, a response object), which costs a redirect more than the redirect
itself. The resolver's lane is :class:`api.links.resolver.FastRedirects`.

Several lanes can share the server, each owning the paths under a prefix (:func:`add_fast_lane`, held in
:data:`FAST_LANES`): a request goes to the lane of the longest prefix its target starts with, and only to it;
``FAST_LANE`` is the lane of every path no prefix claims. A request with an ``Expect`` header is never given to a
lane: the handler's route answers it (``100 Continue``, or 417 for an expectation it does not know). The storefront's
customer lookup lane is :class:`api.customers.lane.FastLookups`.

With the access log on (:class:`api.access_log.AccessLogger`, the service's), a lane's answer is logged like the
handler's: the parser queues the request, the answer's bytes, the time it took and the peer, and the access log's
thread makes the line. With another access logger on (aiohttp's own), the lanes stay off: it wants a request
object.

aiohttp builds its protocol objects in ``web.Server.__call__`` from ``AppRunner._make_server``; the runner
below hands it this handler class. :func:`run` serves an application the way ``web.run_app`` does (signals,
clean stop) with that runner, on sockets :func:`bind` bound first (before the application opens its store, so a
port in use fails before anything is loaded); the tests' HTTP client runs the same runner.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections.abc import Iterable
from email.utils import formatdate
from typing import Any, Protocol, cast

from aiohttp import web
from aiohttp.http import HttpVersion11
from aiohttp.http_exceptions import (
    BadHttpMethod,
    BadStatusLine,
    ContentEncodingError,
    ContentLengthError,
    HttpProcessingError,
    InvalidHeader,
    InvalidURLError,
    LineTooLong,
    TransferEncodingError,
)
from aiohttp.http_parser import RawRequestMessage
from aiohttp.streams import EMPTY_PAYLOAD
from aiohttp.web_protocol import RequestHandler, RequestPayloadError
from aiohttp.web_runner import GracefulExit

from api.access_log import AccessLogger, close_access_logs
from linksvc.jsoncodec import dumpb

log = logging.getLogger("linksvc.http")

# What each parser fault is called in the answer: its kind, never its bytes.
_FAULTS: tuple[tuple[type[Exception], int, str], ...] = (
    (BadHttpMethod, 400, "the request method is not an HTTP method"),
    (LineTooLong, 431, "a header or the request line is longer than the server accepts (8,190 bytes)"),
    (InvalidURLError, 400, "the request target is not a valid URL"),
    (InvalidHeader, 400, "a header line is malformed: a name that is not a token, or a value with a control "
                         "character or a byte that is not allowed"),
    (BadStatusLine, 400, "the request line is not valid HTTP/1.x"),
    (ContentLengthError, 400, "the body is not as long as its Content-Length says"),
    (TransferEncodingError, 400, "the body's transfer encoding (chunks) is malformed"),
    (ContentEncodingError, 415, "the body's Content-Encoding is not one the service decodes: send the body as "
                                "is, or compressed with gzip or deflate"),
)


def describe_fault(exc: BaseException | None, status: int) -> tuple[int, str]:
    """The status and the words of the answer to a request the parser refused."""
    for kind, fault_status, text in _FAULTS:
        if isinstance(exc, kind):
            line = exc.args[0] if isinstance(exc, LineTooLong) and exc.args else b""
            first = line[:1].encode("latin-1", "replace") if isinstance(line, str) else bytes(line[:1])
            if first in (b"/", b"*"):  # the request target: a line too long is a URI too long
                return 414, "the request line is longer than the server accepts (8,190 bytes)"
            return fault_status, text
    if status >= 500:
        return status, "the server failed to answer this request; see the logs"
    return status, "the request is not valid HTTP/1.x (headers with control characters, repeated or " \
                   "conflicting framing headers, or bytes that are not HTTP)"


def _json_error(status: int, error: str, details: str) -> web.Response:
    response = web.Response(status=status, body=dumpb({"error": error, "details": details}),
                            content_type="application/json", headers={"Cache-Control": "no-store"})
    response.force_close()
    return response


class FastLane(Protocol):
    """Answers a parsed request with the bytes of its whole answer, or None to leave it to the application."""

    def __call__(self, message: RawRequestMessage) -> bytes | None: ...


FAST_LANE: web.AppKey[FastLane] = web.AppKey("fast_lane", FastLane)


def plain_get(message: RawRequestMessage) -> bool:
    """A request a lane may take at all: GET over HTTP/1.1, kept alive, no upgrade, no chunked body, and its
    target in origin form (``/path?query``): an absolute-form target (``http://host/path``, which names the host
    the request is for instead of ``Host``) takes the handler."""
    return (message.method == "GET" and message.version == HttpVersion11 and not message.should_close
            and not message.upgrade and not message.chunked and message.path.startswith("/"))


class HttpDate:
    """The ``Date`` header's value for a lane's answer, made once a second."""

    def __init__(self) -> None:
        self._date = (0, "")

    def __call__(self, now: float) -> str:
        second = int(now)
        if self._date[0] != second:
            self._date = (second, formatdate(second, usegmt=True))
        return self._date[1]


class FastLanes:
    """Fast lanes by path prefix, as one lane: a request goes to the lane of the longest prefix its target
    starts with (the target is compared as sent, before any decoding), else to the default lane, if any."""

    def __init__(self) -> None:
        self._lanes: dict[str, FastLane] = {}
        self._prefixes: tuple[str, ...] = ()
        self.default: FastLane | None = None

    def add(self, prefix: str, lane: FastLane) -> None:
        if not prefix.startswith("/") or prefix in self._lanes:
            raise ValueError(f"a fast lane's prefix starts with / and is given once: {prefix!r}")
        self._lanes[prefix] = lane
        self._prefixes = tuple(sorted(self._lanes, key=len, reverse=True))

    def lane_of(self, target: str) -> FastLane | None:
        """The lane that owns ``target`` (a request target: path and query, as sent)."""
        if target.startswith(self._prefixes):  # one check for the paths no prefix claims (the default lane's)
            for prefix in self._prefixes:
                if target.startswith(prefix):
                    return self._lanes[prefix]
        return self.default

    def __call__(self, message: RawRequestMessage) -> bytes | None:
        lane = self.lane_of(message.path)
        return None if lane is None else lane(message)


FAST_LANES: web.AppKey[FastLanes] = web.AppKey("fast_lanes", FastLanes)


def add_fast_lane(app: web.Application, prefix: str, lane: FastLane) -> None:
    """Puts ``lane`` on the server for the request targets that start with ``prefix`` (see :class:`FastLanes`)."""
    lanes = app.get(FAST_LANES)
    if lanes is None:
        lanes = app[FAST_LANES] = FastLanes()
    lanes.add(prefix, lane)


def fast_lane_of(app: web.Application) -> FastLane | None:
    """The one lane the server asks: the prefixed lanes with ``FAST_LANE`` for the rest, or ``FAST_LANE`` alone."""
    lanes = app.get(FAST_LANES)
    default = app.get(FAST_LANE)
    if lanes is None:
        return default
    lanes.default = default
    return lanes


_LANE_PEER: list[str | None] = [None]  # the peer of the connection whose requests a lane is being asked about


def lane_peer() -> str | None:
    """The TCP peer's address (as ``request.remote`` gives it) of the request a fast lane is answering: lanes
    are called on the event loop one at a time, and the parser sets it before it asks them."""
    return _LANE_PEER[0]


def _peer_of(transport: asyncio.BaseTransport | None) -> str | None:
    peer = None if transport is None else transport.get_extra_info("peername")
    if isinstance(peer, list | tuple) and peer:
        return str(peer[0])
    return None if peer is None else str(peer)


class _FastLaneParser:
    """aiohttp's request parser, whose parsed requests pass the fast lane first: those at the head of what one
    read parsed that the lane answers are taken out (and their parser slots freed); the rest go on as usual."""

    def __init__(self, parser: Any, handler: ServiceRequestHandler, lane: FastLane,
                 access: AccessLogger | None) -> None:
        self._parser = parser
        self._handler = handler
        self._lane = lane
        self._access = access  # the access log the lane's answers are written to, if it is on
        self._peer: str | None = None  # the connection's peer, read at its first request

    def __getattr__(self, name: str) -> Any:
        return getattr(self._parser, name)

    def feed_data(self, data: bytes) -> Any:
        messages, upgraded, tail = self._parser.feed_data(data)
        if messages and not upgraded and self._handler._idle():
            answered = 0
            lane = self._lane
            if self._peer is None:
                self._peer = _peer_of(self._handler.transport)
            _LANE_PEER[0] = self._peer
            access = self._access
            clock = time.perf_counter
            for message, payload in messages:
                if (payload is not EMPTY_PAYLOAD or not isinstance(message, RawRequestMessage)
                        or "Expect" in message.headers):
                    break
                started = clock()
                answer = lane(message)
                if answer is None:
                    break
                self._handler._answered(answer)
                if access is not None:
                    access.lane(time.time(), message, answer, clock() - started, self._peer)
                self._parser.message_consumed()
                answered += 1
            if answered:
                self._handler._request_count += answered
                messages = messages[answered:]
        return messages, upgraded, tail


class ServiceRequestHandler(RequestHandler):
    """aiohttp's protocol with JSON answers to requests it cannot parse and a deadline for headers."""

    def __init__(self, manager: web.Server, *, header_timeout: float, fast_lane: FastLane | None = None,
                 **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        # The lanes log their answers to the service's access log; with another access logger on, they stay off.
        own_log = isinstance(self.access_logger, AccessLogger)
        self._lanes_logged = own_log or not self._logging_enabled
        if fast_lane is not None:
            access = cast(AccessLogger, self.access_logger) if own_log and self._logging_enabled else None
            self._parser = cast(Any, _FastLaneParser(self._parser, self, fast_lane, access))
        self._header_timeout = header_timeout
        self._header_deadline: asyncio.TimerHandle | None = None
        self._last_body: Any = None  # the body stream of the newest request (bytes may still be its body)
        # Whether the handler holds a request: from the moment aiohttp's loop takes it off the queue (it makes
        # the request object then) until its answer is written and the connection stays open. Between that
        # answer and aiohttp's loop waiting again, the next request may arrive: the lane may answer it.
        self._handling = False
        make_request = self._request_factory
        assert make_request is not None

        def take(*args: Any) -> web.BaseRequest:
            self._handling = True
            return make_request(*args)
        self._request_factory = take

    def handle_error(self, request: web.BaseRequest, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        status, details = describe_fault(exc, status)
        if isinstance(exc, ConnectionError):  # the client went away mid-request: nobody to answer, no fault here
            log.info("a client closed its connection before its request was answered: %s", type(exc).__name__)
        elif status >= 500:
            log.error("unhandled error from %s: %s", request.remote, type(exc).__name__)
        else:  # a client's fault: one line, the kind of fault and never the bytes (they may hold credentials)
            log.info("refused a malformed request from %s: %s", request.remote, type(exc).__name__)
        if request.writer.output_size > 0:  # an answer was begun: the connection can only be dropped
            raise ConnectionError("the response was already started")
        title = "Internal server error" if status >= 500 else "Malformed request"
        if status == 414:
            title = "Request line too long"
        elif status == 431:
            title = "Header too large"
        elif status == 415:
            title = "Unsupported content encoding"
        return _json_error(status, title, details)

    def log_exception(self, *args: Any, **kw: Any) -> None:
        """A body the client got wrong, met while aiohttp drains it after the answer (a false gzip on a route
        that never read it), is the client's fault, not the server's: one line, without its bytes."""
        exc = kw.get("exc_info")
        if isinstance(exc, RequestPayloadError | HttpProcessingError):
            log.info("dropped the rest of a malformed request body: %s", type(exc).__name__)
            return
        super().log_exception(*args, **kw)

    def _idle(self) -> bool:
        """Whether the fast lane may answer now: the connection is open and kept alive, its handler holds no
        request (everything before was answered: it waits for the next, or is about to), nothing is queued,
        and the access log, if on, is one the lane's answers are written to."""
        waiter = self._waiter
        return ((waiter is None or not waiter.done()) and not self._handling and not self._messages
                and not self._request_in_progress and self.transport is not None and not self._force_close
                and not self._close and self._lanes_logged)

    async def _handle_request(self, request: web.BaseRequest, start_time: float | None,
                              request_handler: Any) -> tuple[web.StreamResponse, bool]:
        resp, reset = await super()._handle_request(request, start_time, request_handler)
        # Answered: the lane may take the next request, unless this answer ends the connection.
        self._handling = reset or not resp.keep_alive
        return resp, reset

    def _answered(self, answer: bytes) -> None:
        """Writes the fast lane's answer and starts the keep-alive timer, as aiohttp does after an answer."""
        assert self.transport is not None
        self.transport.write(answer)
        loop = self._loop
        self._next_keepalive_close_time = loop.time() + self._keepalive_timeout
        if self._keepalive_handle is None:
            self._keepalive_handle = loop.call_at(self._next_keepalive_close_time, self._process_keepalive)

    def end_after_response(self) -> None:
        """The connection closes once the current answer is written, without lingering to read the rest
        of a body that is not coming (aiohttp would wait up to ``lingering_time`` for it)."""
        self._lingering_time = 0.0
        self._keepalive = False

    # The header deadline: armed when a request's first bytes (or the connection) arrive and no request is
    # being handled, disarmed as soon as the parser has a request's complete headers.
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._arm_header_deadline()

    def data_received(self, data: bytes) -> None:
        parsed_before = self._request_count
        super().data_received(data)
        if self._request_count != parsed_before:
            self._disarm_header_deadline()
            if self._messages:
                self._last_body = self._messages[-1][1]
        elif (self._header_deadline is None and not self._request_in_progress and not self._messages
              and (self._last_body is None or self._last_body.is_eof())):  # not the rest of a body
            self._arm_header_deadline()

    def connection_lost(self, exc: BaseException | None) -> None:
        self._disarm_header_deadline()
        super().connection_lost(exc)

    def _arm_header_deadline(self) -> None:
        if self._header_timeout > 0:
            self._header_deadline = self._loop.call_later(self._header_timeout, self._header_deadline_passed)

    def _disarm_header_deadline(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _header_deadline_passed(self) -> None:
        self._header_deadline = None
        if self._request_in_progress or self._messages or self.transport is None:
            return
        body = dumpb({"error": "Request timeout", "details": f"the request's headers did not arrive within "
                                                             f"{self._header_timeout:g} seconds"})
        head = (f"HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                "Cache-Control: no-store\r\nConnection: close\r\n\r\n").encode()
        log.info("closed a connection whose request headers took longer than %gs", self._header_timeout)
        with contextlib.suppress(Exception):
            self.transport.write(head + body)
        self.force_close()
        self.transport.close()


class _Server(web.Server):
    def __init__(self, *args: Any, header_timeout: float, fast_lane: FastLane | None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timeout = header_timeout
        self._fast_lane = fast_lane

    def __call__(self) -> RequestHandler:
        return ServiceRequestHandler(self, loop=self._loop, header_timeout=self._header_timeout,
                                     fast_lane=self._fast_lane, **self._kwargs)


class Listening:
    """The addresses an application's server listens on, once it does: where the service reaches itself (the
    demo's deliveries), whatever port it was given or the system chose. :class:`ServiceRunner` fills it in."""

    def __init__(self) -> None:
        self.runner: web.BaseRunner | None = None

    def addresses(self) -> list[Any]:
        return list(self.runner.addresses) if self.runner is not None else []


LISTENING: web.AppKey[Listening] = web.AppKey("listening", Listening)


class ServiceRunner(web.AppRunner):
    """``web.AppRunner`` whose connections are served by :class:`ServiceRequestHandler`."""

    def __init__(self, app: web.Application, *, header_timeout: float, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self.header_timeout = header_timeout
        if LISTENING in app:
            app[LISTENING].runner = self

    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        app = self.app
        return _Server(server.request_handler, request_factory=server.request_factory,
                       handler_cancellation=server.handler_cancellation, loop=server._loop,
                       header_timeout=self.header_timeout, fast_lane=fast_lane_of(app), **server._kwargs)


def bind(host: str, port: int, *, reuse_port: bool = False, listen: bool = True) -> list[socket.socket]:
    """The listening sockets of ``host:port``, one per address the host names (as asyncio's ``create_server``
    binds them: ``SO_REUSEADDR``, ``SO_REUSEPORT`` when asked, IPv6 sockets IPv6 only), bound before anything
    else happens, so that a port in use fails at once (``OSError``) and port 0 is known. ``listen=False`` only
    checks that the port can be had (the sockets are closed)."""
    infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(infos):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if reuse_port:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            if port == 0 and len(sockets) > 1:  # every address on the port the system chose for the first
                address = (address[0], sockets[0].getsockname()[1], *address[2:])
            sock.bind(address)
            if listen:
                sock.listen(1024)
                sock.setblocking(False)
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    if not listen:
        for sock in sockets:
            sock.close()
    return sockets


async def _serve(runner: ServiceRunner, sockets: list[socket.socket]) -> None:
    await runner.setup()
    try:
        for sock in sockets:
            await web.SockSite(runner, sock).start()
        await asyncio.Event().wait()  # until SIGTERM/SIGINT raise GracefulExit
    finally:
        await runner.cleanup()


def _cancel(tasks: Iterable[asyncio.Task[Any]], loop: asyncio.AbstractEventLoop) -> None:
    pending = [task for task in tasks if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


def run(app: web.Application, sockets: list[socket.socket], *, header_timeout: float, **runner_kwargs: Any) -> None:
    """Serves ``app`` on ``sockets`` (:func:`bind`) until SIGTERM or SIGINT, then stops it cleanly (as
    ``web.run_app`` does)."""
    loop = asyncio.new_event_loop()
    runner = ServiceRunner(app, header_timeout=header_timeout, handle_signals=True, **runner_kwargs)
    main = loop.create_task(_serve(runner, sockets))
    try:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(main)
    except (GracefulExit, KeyboardInterrupt):
        pass
    finally:
        try:
            if not main.done():
                main.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    loop.run_until_complete(main)
        finally:
            _cancel(asyncio.all_tasks(loop), loop)
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()
            close_access_logs()  # every answered request's line is written before the process ends
