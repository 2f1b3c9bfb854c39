"""The customer lookup's fast lane: ``GET /api/storefront/v1/customers?phone=...`` (or ``?document_number=...``)
answered on the server's fast lane (see :mod:`api.server`), without a request object, the router, the middleware
or a response object.

It answers only what it can answer at once, with exactly the bytes the handler and the middleware send: a GET
over HTTP/1.1, kept alive, without a body, whose query is one well-formed ``phone`` or ``document_number``, with
``Authorization: Bearer <token>`` for a token this worker holds (:func:`linksvc.accounts.service.held_principal`:
no I/O) of a SERVER key, and an ``x-account-id``, if any, that names the token's account. The answer is the 200
or the 404 of :func:`linksvc.customers.service.lookup_customer_now`, the function behind the handler's answer,
counted in the metrics under the same route. Everything else takes the handler: a token not held, revoked,
expired or malformed, a CLIENT key, another account, any other query (two parameters, a repeated one, an invalid
value), HEAD, HTTP/1.0, two customers matching (409), a wallet too large to read on the event loop, any failure
of the store (the handler answers it as it would), and a request on a host that is not the service's own (a
tenant's domain: the middleware answers 404, :mod:`api.hosts`).
"""

from __future__ import annotations

import time

from aiohttp import web
from aiohttp.http import SERVER_SOFTWARE
from aiohttp.http_parser import RawRequestMessage

from api.appkeys import DB
from api.hosts import SHARED_HOSTS
from api.observability import HELD_LOOKUPS, LANE_ANSWERS, METRICS_KEY, SAFE_ID
from api.server import HttpDate, plain_get
from linksvc.accounts.service import held_principal
from linksvc.customers.service import lookup_customer_now
from linksvc.domains.hosts import request_host
from linksvc.errors import NotFound
from linksvc.jsoncodec import dumpb
from linksvc.random_ids import new_request_id

# What the query's validation (api.storefront.schemas.CustomersQuery) accepts, checked here without pydantic;
# a value outside these takes the handler, which answers its 400.
_PHONE_CHARACTERS = frozenset("0123456789+- .()")
_DIGITS = frozenset("0123456789")
_PHONE_MAX_LENGTH = 40
_DOCUMENT_MAX_LENGTH = 50
MAX_HOSTS_SEEN = 64  # Host headers the lane remembers the reading of (any client may send any)


def _phone_ok(value: str) -> bool:
    if len(value) > _PHONE_MAX_LENGTH or not _PHONE_CHARACTERS.issuperset(value):
        return False
    return 10 <= sum(ch in _DIGITS for ch in value) <= 15


def _document_ok(value: str) -> bool:
    # Printable: no control characters, and no lone surrogates (bytes of the query that are not UTF-8).
    return 0 < len(value) <= _DOCUMENT_MAX_LENGTH and value.isprintable()


class FastLookups:
    """The lookup's fast lane (registered with :func:`api.server.add_fast_lane` for ``path``): the bytes of
    the handler's 200 (``{"data": ...}``) or 404 (``{error, details}``), with the headers the handler and the
    middleware send (``Content-Type``, ``X-Request-Id``, ``Content-Length``, ``Date``, ``Server``), or None."""

    def __init__(self, app: web.Application, path: str) -> None:
        self._app = app
        self._path = path
        self._http_date = HttpDate()
        self._own: dict[str, bool] = {}  # Host header as sent -> whether it is an own host (a few distinct ones)
        self.answered = 0  # requests this lane answered (the rest took the handler)

    def __call__(self, message: RawRequestMessage) -> bytes | None:
        if not plain_get(message):
            return None
        started = time.perf_counter()
        url = message.url
        if url.raw_path != self._path:
            return None
        headers = message.headers
        raw_host = headers.get("Host", "")
        own = self._own.get(raw_host)
        if own is None:
            if len(self._own) >= MAX_HOSTS_SEEN:
                self._own.clear()
            own = self._own[raw_host] = self._app[SHARED_HOSTS].own(request_host(raw_host))
        if not own:
            return None
        authorization = headers.get("Authorization")
        if authorization is None or not authorization.startswith("Bearer "):
            return None
        token = authorization[7:]
        # api.auth's rules, narrowed: one token of printable ASCII after one space, nothing around it.
        if not token or " " in token or not token.isascii() or not token.isprintable():
            return None
        query = url.query
        if len(query) != 1:
            return None
        name, value = next(iter(query.items()))
        if name == "phone":
            if not _phone_ok(value):
                return None
            document_number, phone = None, value
        elif name == "document_number":
            if not _document_ok(value):
                return None
            document_number, phone = value, None
        else:
            return None
        app = self._app
        db = app[DB]
        principal = held_principal(db, token)
        if principal is None or principal.kind != "SERVER":
            return None
        claimed = headers.get("x-account-id")
        if claimed is not None and (not claimed.isascii() or not claimed.isprintable()
                                    or claimed.strip().lower() != principal.account_id):
            return None
        held = False
        try:
            found = lookup_customer_now(db, principal.account_id, document_number, phone)
        except NotFound as refused:
            if not isinstance(refused.details, str):
                return None
            status, head, body = 404, "404 Not Found", dumpb({"error": refused.error, "details": refused.details})
        except Exception:  # a conflict (409), or the store failing: the handler answers, as it always did
            return None
        else:
            if found is None:
                return None
            status, head, body, held = 200, "200 OK", dumpb({"data": found.answer}), found.held
        incoming = headers.get("X-Request-Id", "")
        request_id = incoming if SAFE_ID.match(incoming) else new_request_id()
        answer = (f"HTTP/1.1 {head}\r\nContent-Type: application/json\r\nX-Request-Id: {request_id}\r\n"
                  f"Content-Length: {len(body)}\r\nDate: {self._http_date(time.time())}\r\n"
                  f"Server: {SERVER_SOFTWARE}\r\n\r\n").encode("ascii") + body
        metrics = app[METRICS_KEY]
        metrics.observe("GET", self._path, status, time.perf_counter() - started)
        metrics.count(LANE_ANSWERS, "customer_lookup")
        if status == 200:
            metrics.count(HELD_LOOKUPS, "held" if held else "read")
        self.answered += 1
        return answer
