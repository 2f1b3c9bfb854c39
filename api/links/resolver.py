"""``GET /{code}`` and ``HEAD /{code}``: resolve a link, redirect, and record the click off the path.

Resolve, respond, then track: the click goes into the recorder's buffer and is written in a batch
later; HEAD answers the same without recording anything. Unknown codes are 404 and disabled or expired
links 410, both as a small HTML page (people land here, not programs). A link stored before today's URL
rules with a destination they refuse is 502, also a page, with a warning in the log naming the link and the
field (the link's owner has to fix it); its click is not recorded, since it went nowhere.

A redirect whose link this worker holds is answered on the server's fast lane (:class:`FastRedirects`, see
:mod:`api.server`): the same decision, the same click and the same bytes, written without the request and
response objects, the router or the middleware. Everything else (an unknown or unheld code, 404, 410, 502,
the JSON answer, HEAD, HTTP/1.0, a request with a body, a client closing the connection) takes the handler.
"""

from __future__ import annotations

import html
import logging
import re
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Protocol

from aiohttp import web
from aiohttp.http import SERVER_SOFTWARE
from aiohttp.http_parser import RawRequestMessage

from api.accounts.throttle import FORWARDED_FOR
from api.appkeys import CLICKS, DB, SETTINGS
from api.observability import METRICS_KEY, SAFE_ID
from api.routing import json_response
from api.server import FAST_LANE, HttpDate, lane_peer, plain_get
from linksvc.jsoncodec import dumpb
from linksvc.links import service
from linksvc.links.clicks import Click
from linksvc.links.decide import Decision, decide, unavailable
from linksvc.links.devices import Device, classify
from linksvc.links.previews import card_of, is_preview_fetcher, preview_page
from linksvc.links.visitors import Visitors
from linksvc.random_ids import new_request_id, new_tracking_id
from linksvc.settings import Settings

log = logging.getLogger("linksvc.resolver")
CODE_ROUTE = "/{code:[A-Za-z0-9][A-Za-z0-9_-]{2,63}}"
_CODE = re.compile(r"/[A-Za-z0-9][A-Za-z0-9_-]{2,63}")  # the route's pattern, on the raw path
NO_STORE = "no-store"


def _page(status: int, title: str, text: str) -> web.Response:
    body = (f"<!doctype html><html lang=en><meta charset=utf-8><meta name=viewport content='width=device-width'>"
            f"<title>{html.escape(title)}</title><body style='font-family:sans-serif;margin:3em auto;max-width:30em'>"
            f"<h1>{html.escape(title)}</h1><p>{html.escape(text)}</p></body></html>")
    return web.Response(status=status, text=body, content_type="text/html", headers={"Cache-Control": NO_STORE})


async def resolve(request: web.Request) -> web.StreamResponse:
    code = request.match_info["code"]
    stored = await service.link_of_code(request.app[DB], code)
    if stored is None:
        return _page(404, "Link not found", "There is no link at this address.")
    link = stored.link
    now = time.time()
    if unavailable(link, now) is not None:
        return _page(410, "Link no longer available", "This link has been switched off or has expired.")
    headers = request.headers
    query = {key: request.query[key] for key in request.query} if request.query_string else {}
    device, decision = _decision(request.app[SETTINGS], link, code, headers, query)
    if decision.skipped:
        log.warning("link %s (%s) has URLs the link rules refuse: %s", stored.id, code, "; ".join(decision.skipped))
    if decision.answer == "broken":
        return _page(502, "Link cannot be opened", "This link points to an address that is not valid.")
    preview = await _preview(request, stored, code, decision) if is_preview_fetcher(device) else None
    if preview is not None:
        decision = replace(decision, answer="preview")
    if request.method == "GET":
        clicks = request.app[CLICKS]
        clicks.record(_click(stored, decision, now, device, headers, clicks.visitors, request.remote))
    if preview is not None:
        return preview
    if decision.status == 302 and decision.location is not None:
        return web.Response(status=302, headers={"Location": decision.location, "Cache-Control": NO_STORE})
    return web.Response(status=decision.status, body=dumpb(decision.body), content_type="application/json",
                        headers={"Cache-Control": NO_STORE})


async def _preview(request: web.Request, stored: service.StoredLink, code: str,
                   decision: Decision) -> web.Response | None:
    """The preview page a link-preview fetcher gets (:mod:`linksvc.links.previews`), or None when neither the
    link nor its account sets anything to show: the fetcher then follows the 302 like any bot."""
    if decision.status != 302 or decision.location is None:
        return None
    card = await card_of(request.app[DB], stored.account_id, stored.link)
    if card is None:
        return None
    body = preview_page(card, f"{request.app[SETTINGS].public_url}/{code}", decision.location)
    return web.Response(text=body, content_type="text/html", charset="utf-8", headers={"Cache-Control": NO_STORE})


def _decision(settings: Settings, link: Mapping[str, Any], code: str, headers: Mapping[str, str],
              query: Mapping[str, str]) -> tuple[Device, Decision]:
    device = classify(headers.get("User-Agent", ""))
    return device, decide(
        link, device, query, "application/json" in headers.get("Accept", ""),
        f"{settings.public_url}/{code}", new_tracking_id(), settings.service_label,
    )


class Headers(Protocol):
    """A request's headers (aiohttp's on the handler, the parser's on the fast lane)."""

    def get(self, key: str, default: str) -> str: ...
    def getall(self, key: str, default: tuple[()]) -> list[str] | tuple[()]: ...


def _click(stored: service.StoredLink, decision: Decision, now: float, device: Device, headers: Headers,
           visitors: Visitors, peer: str | None) -> Click:
    agent = headers.get("User-Agent", "")
    forwarded = ",".join(headers.getall(FORWARDED_FOR, ())) if visitors.trusted_proxies else ""
    return Click(stored.account_id, stored.id, decision.tracking_id, now, device.platform, device.bot,
                 decision.answer, agent, headers.get("Referer", ""), decision.utm,
                 visitors.of(now, peer, forwarded, agent), decision.utm_origin)


class FastRedirects:
    """The resolver's fast lane (:data:`api.server.FAST_LANE`): a ``GET /{code}`` over HTTP/1.1, kept alive,
    without a body, for a link this worker holds, that :func:`resolve` would answer with a 302. Answered with
    the bytes :func:`resolve` and the middleware would send (status line, ``Location``, ``Cache-Control``,
    ``X-Request-Id``, ``Content-Length``, ``Date``, ``Server``), its click recorded the same way and its
    request counted in the metrics under the same route. Any other request is left to the handler (None).

    A path the router gives to one of the service's own routes (``/healthz``, ``/metrics``...) is never
    taken, whatever links exist: those are read off the router at the first request."""

    def __init__(self, app: web.Application) -> None:
        self._app = app
        self._own_paths: frozenset[str] | None = None
        self._route = ""
        self._http_date = HttpDate()
        self.answered = 0  # requests this lane answered (the rest took the handler)

    def _prepare(self) -> frozenset[str]:
        own = frozenset(resource.canonical for resource in self._app.router.resources()
                        if isinstance(resource, web.PlainResource))
        self._route = next(resource.canonical for resource in self._app.router.resources()
                           if isinstance(resource, web.DynamicResource) and resource.canonical == "/{code}")
        self._own_paths = own
        return own

    def __call__(self, message: RawRequestMessage) -> bytes | None:
        if not plain_get(message):
            return None
        started = time.perf_counter()
        url = message.url
        path = url.raw_path
        own = self._own_paths if self._own_paths is not None else self._prepare()
        if not _CODE.fullmatch(path) or path in own:
            return None
        app = self._app
        code = path[1:]
        stored = service.held_link(app[DB], code)
        if stored is None:
            return None
        link = stored.link
        now = time.time()
        if unavailable(link, now) is not None:
            return None
        headers = message.headers
        query = url.query
        device, decision = _decision(app[SETTINGS], link, code, headers,
                                     {key: query[key] for key in query} if url.raw_query_string else {})
        if decision.status != 302 or decision.location is None or decision.skipped:
            return None
        if is_preview_fetcher(device):  # may get the preview page: the handler decides
            return None
        incoming = headers.get("X-Request-Id", "")
        request_id = incoming if SAFE_ID.match(incoming) else new_request_id()
        answer = (f"HTTP/1.1 302 Found\r\nLocation: {decision.location}\r\nCache-Control: {NO_STORE}\r\n"
                  f"X-Request-Id: {request_id}\r\nContent-Length: 0\r\nDate: {self._http_date(now)}\r\n"
                  f"Server: {SERVER_SOFTWARE}\r\n\r\n").encode("ascii")
        clicks = app[CLICKS]
        clicks.record(_click(stored, decision, now, device, headers, clicks.visitors, lane_peer()))
        app[METRICS_KEY].observe("GET", self._route, 302, time.perf_counter() - started)
        self.answered += 1
        return answer


async def apple_app_site_association(request: web.Request) -> web.Response:
    return json_response(await service.apple_app_site_association(request.app[DB]))


async def asset_links(request: web.Request) -> web.Response:
    return json_response(await service.asset_links(request.app[DB]))


def add_resolver_routes(app: web.Application) -> None:
    app.router.add_get("/.well-known/apple-app-site-association", apple_app_site_association)
    app.router.add_get("/.well-known/assetlinks.json", asset_links)
    # GET routes answer HEAD too (aiohttp adds it), without a body.
    app.router.add_get(CODE_ROUTE, resolve)
    app[FAST_LANE] = FastRedirects(app)


