"""Endpoints declared once: the same declaration parses the request and describes it in OpenAPI.

An :class:`Endpoint` names its query model, body model and response model. :meth:`Endpoint.handler`
wraps the plain handler so that it receives the already validated ``query`` and ``body``; the OpenAPI
generator reads the very same models, so the documents cannot drift from what the code accepts.
"""

from __future__ import annotations

import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import ContentEncodingError
from aiohttp.web_protocol import RequestPayloadError
from pydantic import BaseModel

from api import auth
from api.appkeys import SETTINGS
from linksvc.errors import BadRequest, InvalidField, Issues, PayloadTooLarge, ServiceError, UnsupportedEncoding
from linksvc.jsoncodec import JSONDecodeError, dumpb, loads
from linksvc.people import audit
from linksvc.resources.validation import validate
from linksvc.untrusted import MAX_JSON_DEPTH, nesting_exceeds

Handler = Callable[..., Awaitable[web.StreamResponse]]
STREAMING_HANDLERS: set[Handler] = set()
"""The handlers of streaming endpoints: ``api.observability`` sets them no request deadline."""
RAW_BODY: web.RequestKey[Any] = web.RequestKey("raw_body", object)
CHANGES = {"POST": "create", "PUT": "replace", "PATCH": "update", "DELETE": "delete"}


@dataclass(frozen=True)
class Header:
    name: str
    description: str
    required: bool = False


@dataclass
class Endpoint:
    method: str
    path: str
    func: Handler
    summary: str
    tag: str
    query: type[BaseModel] | None = None
    body: type[BaseModel] | None = None
    response: type[BaseModel] | None = None
    media_types: tuple[str, ...] = ()  # a success body that is not JSON (an image): its possible media types
    status: int = 200
    security: str | None = "bearer"  # "bearer", "api_key", "admin" or None
    headers: tuple[Header, ...] = ()
    errors: tuple[int, ...] = ()
    max_body: str = "max_body_bytes"  # which setting bounds the body
    require_kind: str | None = None  # "SERVER": a CLIENT key's token gets 403 before anything else
    guard: Callable[[web.Request], Awaitable[None]] | None = None  # runs after auth, before parsing
    string_details: bool = False  # error details as one string (the spec asks it of some endpoints)
    raw_body: bool = False  # the handler gets the parsed JSON and validates it itself (``body`` documents it)
    max_depth: int | None = MAX_JSON_DEPTH  # None: the handler bounds the depth of each part (bulk)
    # How an invalid query or body is answered when the specification fixes the shape (GET /contacts).
    on_invalid: Callable[[InvalidField], ServiceError] | None = None
    # What an admin route needs (``linksvc.people.roles``): "operator", "self", or "<area>:read|write" of the
    # account its path names. Every admin route declares one; the admin API refuses to start without.
    permission: str | None = None
    description: str = ""  # the operation's description in the OpenAPI document
    # The audit log's action of a change (POST, PUT, PATCH, DELETE of an admin route); derived when None.
    action: str | None = None
    # A stream (server-sent events): answered for as long as the client stays, so no request deadline applies.
    streams: bool = False
    # Also opened with a feed ticket as ``?ticket=`` (an EventSource cannot send headers): the live feed only.
    tickets: bool = False

    def handler(self) -> Handler:
        endpoint = self

        async def wrapped(request: web.Request) -> web.StreamResponse:
            try:
                return await endpoint.run(request)
            except ServiceError as exc:
                if endpoint.string_details and not isinstance(exc.details, str):
                    exc.details = details_text(exc)
                raise

        wrapped.__name__ = self.func.__name__
        if self.streams:
            STREAMING_HANDLERS.add(wrapped)
        return wrapped

    async def run(self, request: web.Request) -> web.StreamResponse:
        await auth.authenticate(request, self.security, self.tickets)
        if self.security == "admin":
            await auth.require(request, self.permission or "")
        if self.require_kind == "SERVER":
            auth.require_server(request, f"{self.method} {self.path}")
        for header in self.headers:
            if header.required and not request.headers.get(header.name, "").strip():
                raise BadRequest("Missing header", f"the {header.name} header is required")
        if self.guard is not None:
            await self.guard(request)
        try:
            kwargs = await self.parse(request)
        except InvalidField as exc:
            if self.on_invalid is None:
                raise
            raise self.on_invalid(exc) from None
        if self.security == "admin" and self.method in CHANGES:
            with audit.recording(self.audit_entry(request)):
                return await self.func(request, **kwargs)
        return await self.func(request, **kwargs)

    def audit_action(self) -> str:
        """The action the audit log names: ``create``, ``replace``, ``update``, ``delete``, or the route's own
        verb (``rotate-secret``, ``verify``, ``transfer-ownership``, ...) for a POST to an object."""
        if self.action is not None:
            return self.action
        segments = self.path.strip("/").split("/")
        last, before = segments[-1], segments[-2] if len(segments) > 1 else ""
        base = CHANGES[self.method]
        if last.startswith("{") or before in ("", "{account_id}"):
            return base  # an object, or a collection of the account (a POST to it creates)
        if self.method == "POST":
            return last if before.startswith("{") else base  # an object's verb, or a nested collection
        return f"{base}-{last}"  # a part of an object (PATCH .../utm)

    def audit_entry(self, request: web.Request) -> Any:
        body = request.get(RAW_BODY)
        params = {k: v for k, v in request.match_info.items() if k != "account_id"}
        object_id = list(params.values())[-1] if params else ""
        if not object_id and isinstance(body, dict) and isinstance(body.get("id"), str):
            object_id = body["id"]
        account_id = request.match_info.get("account_id", "")
        if not account_id and self.path == "/accounts":
            account_id = object_id
        elif not account_id and isinstance(body, dict) and isinstance(body.get("account_id"), str):
            account_id = body["account_id"]  # a person made a member, a personal token: the account's change
        return audit.entry_of(auth.actor(request), account_id, self.tag, object_id, self.audit_action(), body,
                              auth.client_ip(request))

    async def parse(self, request: web.Request) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        if self.query is not None:
            kwargs["query"] = parse_query(request, self.query)
        if self.body is not None:
            limit = getattr(request.app[SETTINGS], self.max_body)
            raw = await read_json(request, limit, self.max_depth)
            request[RAW_BODY] = raw
            kwargs["body"] = raw if self.raw_body else validate(self.body, raw)
        return kwargs


def details_text(exc: ServiceError) -> Any:
    """Details as one string, except the specified issue list of the contact search."""
    if exc.error == "Internal validation failed" and isinstance(exc.details, dict):
        return exc.details
    return exc.as_text()


def add_endpoints(app: web.Application, prefix: str, endpoints: list[Endpoint]) -> None:
    """Routes on the one application (no sub-apps: each would add a resolve and a middleware pass)."""
    for endpoint in endpoints:
        app.router.add_route(endpoint.method, prefix + endpoint.path, endpoint.handler())


def parse_query(request: web.Request, model: type[BaseModel]) -> Any:
    """The query as ``model``; a parameter given twice is an issue beside every other one."""
    params: dict[str, Any] = {}
    parsed: Any = None
    issues = Issues()
    for key in request.query:
        if key in params:
            continue
        values = request.query.getall(key)
        if len(values) > 1:
            issues.add(key, "may be given only once", "duplicate")
        params[key] = values[0]
    try:
        parsed = validate(model, params, where="query")
    except InvalidField as exc:
        issues.extend(exc)
    issues.raise_if_any("Invalid query")
    return parsed


CONTENT_ENCODINGS = frozenset({"", "identity", "gzip", "x-gzip", "deflate"})


READ_CHUNK = 64 * 1024


async def read_body(request: web.Request, limit: int) -> bytes:
    """The body's bytes, decoded from its Content-Encoding: at most ``limit`` of them (413), a body its encoding
    does not hold or that ended early a 400. Read a chunk at a time and given up past ``limit``: a chunked or
    compressed body is never held beyond the endpoint's own limit (the application's ``client_max_size`` is the
    largest limit of all, the import's)."""
    encoding = request.headers.get("Content-Encoding", "").strip().lower()
    if encoding not in CONTENT_ENCODINGS:
        raise UnsupportedEncoding("Unsupported content encoding",
                                  "the body may be sent as is, or compressed with gzip or deflate")
    if request.content_length is not None and request.content_length > limit:
        raise PayloadTooLarge(details=f"the body may be at most {limit} bytes")
    body = bytearray()
    try:
        async for chunk in request.content.iter_chunked(READ_CHUNK):
            body += chunk
            if len(body) > limit:
                raise PayloadTooLarge(details=f"the body may be at most {limit} bytes")
    except (ContentEncodingError, RequestPayloadError, zlib.error):
        raise BadRequest("Malformed body", f"the body is not {encoding} data as its Content-Encoding says") from None
    except ConnectionResetError:  # the client closed before its body was complete: nobody to answer
        raise BadRequest("Incomplete body", "the connection ended before the body was complete") from None
    return bytes(body)


async def read_json(request: web.Request, limit: int, max_depth: int | None = MAX_JSON_DEPTH) -> Any:
    """The body as JSON: at most ``limit`` bytes once decoded, nested at most ``max_depth`` levels (None: the
    caller checks the depth of the parts itself, as the bulk endpoint does per event)."""
    raw = await read_body(request, limit)
    if not raw.strip():
        raise BadRequest("Malformed JSON", "the request body is empty; send a JSON object")
    try:
        body = loads(raw)
    except JSONDecodeError as exc:
        raise BadRequest("Malformed JSON", f"the request body is not valid JSON: {exc}") from None
    if max_depth is not None and nesting_exceeds(body, max_depth):
        raise BadRequest("JSON too deep", f"the body nests objects and arrays deeper than {max_depth} levels")
    return body


def json_response(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(
        body=dumpb(payload), status=status, content_type="application/json", headers=headers
    )


def data(payload: Any, status: int = 200, **extra: Any) -> web.Response:
    """The specification's success envelope: ``{"data": ...}`` (plus paging members where asked)."""
    return json_response({"data": payload, **extra}, status=status)

