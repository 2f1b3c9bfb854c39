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

import asyncio
import html
import json
import logging
import re
import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple, Protocol

from aiohttp import web
from aiohttp.http import SERVER_SOFTWARE
from aiohttp.http_parser import RawRequestMessage

from api.accounts.throttle import FORWARDED_FOR
from api.appkeys import AUTH_THROTTLE, CLICKS, DB, SETTINGS
from api.domains import domain_of_request
from api.hosts import SHARED_HOSTS, on_every_host
from api.observability import LANE_ANSWERS, METRICS_KEY, SAFE_ID
from api.routing import json_response
from api.server import FAST_LANE, HttpDate, lane_peer, plain_get
from linksvc.client_address import IPNetwork, client_address
from linksvc.clock import parse_iso
from linksvc.domains.hosts import LIVE, held_domains, link_resolves_here, request_host
from linksvc.errors import InvalidField, NotFound, RateLimited
from linksvc.jsoncodec import dumpb
from linksvc.links import fdl, passwords, service, variants
from linksvc.links.clicks import Click, ClickRecorder
from linksvc.links.decide import Decision, Unavailable, decide
from linksvc.links.deferred import pasteboard_token
from linksvc.links.devices import Device, classify
from linksvc.links.fdl_service import long_link_click
from linksvc.links.limits import held_unavailable, unavailable_now
from linksvc.links.passwords import cookie_admits, cookie_name, cookie_value, protected
from linksvc.links.plans import DecisionPlans
from linksvc.links.previews import card_of, is_preview_fetcher, plain_redirect_now, preview_page
from linksvc.links.urls import with_query
from linksvc.links.visitors import Visitors
from linksvc.random_ids import new_request_id, new_tracking_id
from linksvc.rules.engine import Facts, pick, with_target
from linksvc.settings import Settings

log = logging.getLogger("linksvc.resolver")
CODE_ROUTE = "/{code:[A-Za-z0-9][A-Za-z0-9_-]{2,63}}"
_CODE = re.compile(r"/[A-Za-z0-9][A-Za-z0-9_-]{2,63}")  # the route's pattern, on the raw path
NO_STORE = "no-store"
FORWARDED_PROTO = "X-Forwarded-Proto"  # taken from trusted proxies only (LINKSVC_TRUSTED_PROXIES)
MAX_HOSTS_SEEN = 1024  # Host headers the fast lane remembers the reading of (any client may send any)


def _page(status: int, title: str, text: str) -> web.Response:
    body = (f"<!doctype html><html lang=en><meta charset=utf-8><meta name=viewport content='width=device-width'>"
            f"<title>{html.escape(title)}</title><body style='font-family:sans-serif;margin:3em auto;max-width:30em'>"
            f"<h1>{html.escape(title)}</h1><p>{html.escape(text)}</p></body></html>")
    return web.Response(status=status, text=body, content_type="text/html", headers={"Cache-Control": NO_STORE})


async def resolve(request: web.Request) -> web.StreamResponse:
    code = request.match_info["code"]
    found = await _open_link(request, code)
    if isinstance(found, web.Response):
        return found
    stored, host, shared = found
    query = {key: request.query[key] for key in request.query} if request.query_string else {}
    if protected(stored.link):
        return await _protected(request, stored, code, query, None if shared else host)
    return await _answer(request, stored, code, query, None if shared else host)


async def _open_link(request: web.Request, code: str
                     ) -> tuple[service.StoredLink, str, bool] | web.Response:
    """The link at ``code`` on the request's host, with the host and whether it is the shared one; or the
    answer when there is none here (404) or it does not lead to its target now (:func:`_gate`). The host rule
    (docs/decisions.md, Custom domains): an unknown host or a pending domain resolves nothing."""
    host, shared, domain = await domain_of_request(request)
    if not shared and (domain is None or domain.status != LIVE):
        return _page(404, "Link not found", "There is no link at this address.")
    stored = await service.link_of_code(request.app[DB], code)
    if stored is None or not link_resolves_here(host, shared, domain, stored.account_id, stored.link.get("domain")):
        return _page(404, "Link not found", "There is no link at this address.")
    gate = await _gate(request, stored)
    return (stored, host, shared) if gate is None else gate


async def unlock(request: web.Request) -> web.StreamResponse:
    """``POST /{code}``: the password page's form. The right password answers as ``GET /{code}`` would (the
    click recorded) and sets the link's cookie; a wrong one shows the page again (401); too many wrong guesses
    from the client at this link, 429 with ``Retry-After`` (the sign-in throttle's rule). A link without a
    password sends the browser back to ``GET`` (303)."""
    code = request.match_info["code"]
    own = next((resource for resource in request.app.router.resources()
                if isinstance(resource, web.PlainResource) and resource.canonical == request.path), None)
    if own is not None:  # one of the service's own paths (/healthz...), which takes no POST
        raise web.HTTPMethodNotAllowed(request.method, {route.method for route in own})
    found = await _open_link(request, code)
    if isinstance(found, web.Response):
        return found
    stored, host, shared = found
    if not protected(stored.link):
        return web.Response(status=303, headers={"Location": str(request.rel_url), "Cache-Control": NO_STORE})
    if classify(request.headers.get("User-Agent", "")).bot:
        return password_page(200)
    query = {key: request.query[key] for key in request.query} if request.query_string else {}
    form = await request.post()
    given = form.get("password")
    if not isinstance(given, str) or not given:
        return password_page(400, "Enter the password.")
    try:
        right = await _attempt(request, stored, given)
    except RateLimited as refused:
        return password_page(429, f"Too many wrong passwords. Try again in {refused.retry_after} seconds.",
                             {"Retry-After": str(refused.retry_after)})
    if not right:
        return password_page(401, "That password is not right.")
    response = await _answer(request, stored, code, query, None if shared else host)
    settings = request.app[SETTINGS]
    until = int(time.time()) + settings.link_password_cookie_seconds
    response.set_cookie(cookie_name(code), cookie_value(stored.link["password"], stored.id, until),
                        max_age=settings.link_password_cookie_seconds, path=f"/{code}", httponly=True,
                        samesite="Lax", secure=request.secure)
    return response


async def _attempt(request: web.Request, stored: service.StoredLink, given: str) -> bool:
    """Whether ``given`` is the link's password (counted by the throttle of guesses)."""
    throttle = request.app[AUTH_THROTTLE]
    forwarded = ",".join(request.headers.getall(FORWARDED_FOR, ())) if throttle.trusted_proxies else ""
    return await passwords.attempt(throttle, stored.id, stored.link["password"],
                                   throttle.client_of(request.remote, forwarded), given)


async def _gate(request: web.Request, stored: service.StoredLink) -> web.Response | None:
    """The answer of a link that does not lead to its target now (disabled, not yet valid, expired, click limit
    reached: :func:`linksvc.links.decide.unavailable`), or None."""
    state = await unavailable_now(request.app[CLICKS].limits, stored.id, stored.link, time.time())
    return None if state is None else unavailable_answer(state, stored.link)


def unavailable_answer(state: Unavailable, link: Mapping[str, Any]) -> web.Response:
    if state.status == 302 and state.location is not None:
        return web.Response(status=302, headers={"Location": state.location, "Cache-Control": NO_STORE})
    if state.status == 404:
        opens = parse_iso(str(link.get("valid_since"))).strftime("%Y-%m-%d %H:%M UTC")
        return _page(404, "Link not available yet", f"This link opens on {opens}.")
    return _page(410, "Link no longer available", "This link has been switched off or has expired.")


async def _protected(request: web.Request, stored: service.StoredLink, code: str, query: Mapping[str, str],
                     domain: str | None) -> web.StreamResponse:
    """A password-protected link: answered as usual to a browser holding the link's cookie (the password given
    within :attr:`Settings.link_password_cookie_seconds`), else the page asking for the password. Bots and
    link-preview fetchers always get the page: nothing of the target, no click recorded."""
    if not classify(request.headers.get("User-Agent", "")).bot and cookie_admits(
            request.cookies.get(cookie_name(code)), stored.link["password"], stored.id, time.time()):
        return await _answer(request, stored, code, query, domain)
    return password_page(200)


_PASSWORD_STYLE = ("body{font-family:sans-serif;margin:3em auto;max-width:26em;padding:0 1em;line-height:1.5}"
                   "label{display:block;font-weight:600;margin-top:1em}input{font-size:1em;padding:.5em;width:100%;"
                   "box-sizing:border-box}button{font-size:1em;padding:.6em 1.2em;margin-top:1em}"
                   ".error{color:#a00;font-weight:600}")


def password_page(status: int, error: str | None = None, headers: Mapping[str, str] | None = None) -> web.Response:
    """The page of a password-protected link: a form that posts to the page's own address (no target anywhere
    in it), labelled, in English, working without JavaScript (it has none)."""
    nonce = secrets.token_urlsafe(16)
    described = " aria-describedby=error aria-invalid=true" if error else ""
    alert = f"<p id=error class=error role=alert>{html.escape(error)}</p>" if error else ""
    body = ("<!doctype html><html lang=en><meta charset=utf-8>"
            "<meta name=viewport content='width=device-width,initial-scale=1'><title>Password required</title>"
            f"<meta name=robots content=noindex><style nonce={nonce}>{_PASSWORD_STYLE}</style><body><main>"
            "<h1>This link is protected</h1><p>Enter the password you were given to open it.</p>"
            f"{alert}<form method=post><label for=password>Password</label>"
            f"<input id=password name=password type=password required autocomplete=current-password{described}>"
            "<button type=submit>Open the link</button></form></main></body></html>")
    policy = (f"default-src 'none'; style-src 'nonce-{nonce}'; form-action 'self'; base-uri 'none'; "
              "frame-ancestors 'none'")
    return web.Response(status=status, text=body, content_type="text/html",
                        headers={"Cache-Control": NO_STORE, "Content-Security-Policy": policy,
                                 "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff",
                                 **(headers or {})})


async def long_link(request: web.Request) -> web.StreamResponse:
    """``GET /?link=...``: a long Dynamic Link (:mod:`linksvc.links.fdl`) on a live custom domain, answered by
    the resolver like a stored link when it leads only where the account allows (:mod:`linksvc.links.long_links`);
    its click is recorded against the domain's long-links link. Anywhere else, and without ``link``, 404; a
    parameter the Link model or the account refuses, a 400 page naming it."""
    host, shared, domain = await domain_of_request(request)
    if shared or domain is None or domain.status != LIVE or not fdl.is_long_link(request.query):
        return _page(404, "Link not found", "There is no link at this address.")
    query = {key: request.query[key] for key in request.query}
    try:
        held, body, long = await long_link_click(request.app[DB], domain, query)
    except NotFound:
        return _page(404, "Link not found", "There is no link at this address.")
    except InvalidField as refused:
        return _page(400, "Link cannot be opened", f"This Dynamic Link is not valid: {refused.as_text()}.")
    gate = await _gate(request, held)
    if gate is not None:
        return gate
    # What decide() reads of a stored link's query: the UTM (here the long link's), tracking_id and $app-found.
    carried = {name: query[name] for name in ("tracking_id", "$app-found") if query.get(name)}
    return await _answer(request, replace(held, link=body), f"?{request.rel_url.raw_query_string}",
                         {**long.utm, **carried}, host, long.app_store_tokens)


async def _answer(request: web.Request, stored: service.StoredLink, code: str, query: Mapping[str, str],
                  domain: str | None, app_store_tokens: Mapping[str, str] | None = None) -> web.StreamResponse:
    """The resolver's answer to a click on ``stored`` (published at ``code`` on ``domain``, None: the shared
    host), and its click recorded (GET only)."""
    link: Mapping[str, Any] = stored.link
    now = time.time()
    headers = request.headers
    clicks = request.app[CLICKS]
    split = _split(stored, code, headers, request.remote, clicks.visitors.trusted_proxies, request.secure)
    if split is not None and split.hop is not None:
        other = await service.link_of_code(request.app[DB], split.hop)
        split = split.reached(other if other is not None and other.account_id == stored.account_id else None)
        if split.target is None:
            log.warning("link %s (%s): variant %r names link %s, which is not a link of its account", stored.id,
                        code, split.name, split.hop)
    device, decision, facts, rule, split = _decision(request.app[SETTINGS], stored, code, headers, query, domain,
                                                     request.remote, clicks, now, split)
    if decision.skipped:
        log.warning("link %s (%s) has URLs the link rules refuse: %s", stored.id, code, "; ".join(decision.skipped))
    if decision.answer == "broken":
        return _page(502, "Link cannot be opened", "This link points to an address that is not valid.")
    if app_store_tokens and decision.answer == "app_store" and decision.location is not None:
        decision = replace(decision, location=with_query(decision.location, app_store_tokens))
    preview = await _preview(request, stored, code, decision, domain) if is_preview_fetcher(device) else None
    if preview is not None:
        decision = replace(decision, answer="preview")
    if request.method != "HEAD":  # GET, or the right password POSTed to a protected link's page
        clicks.record(_click(stored, decision, now, device, headers, clicks.visitors, facts, rule,
                             None if split is None else split.name))
        if not device.bot and link.get("max_clicks") is not None:
            clicks.limits.took(stored.id)
    response = _response(link, decision, preview)
    if split is not None:
        response.headers["Set-Cookie"] = split.cookie
    return response


def _response(link: Mapping[str, Any], decision: Decision, preview: web.Response | None) -> web.Response:
    if decision.answer == "landing" and decision.body is not None:
        return landing_page(link, decision.body, decision.tracking_id)
    if preview is not None:
        return preview
    if decision.status == 302 and decision.location is not None:
        return web.Response(status=302, headers={"Location": decision.location, "Cache-Control": NO_STORE})
    return web.Response(status=decision.status, body=dumpb(decision.body), content_type="application/json",
                        headers={"Cache-Control": NO_STORE})


class Split(NamedTuple):
    """The variant of a link's A/B split a click goes to (:mod:`linksvc.links.variants`): its name, its target
    (URL fields; None for the link's own), the link it names when its target is ``{"link"}`` and not read yet
    (``hop``), and the ``Set-Cookie`` value that keeps the visitor on it."""

    name: str
    target: Mapping[str, Any] | None
    hop: str | None
    cookie: str
    address: str | None = None  # the client's address when the hash needed it (the click's facts reuse it)

    def reached(self, other: service.StoredLink | None) -> Split:
        """With the hop's link read: its URL fields (None when it is not a link of the account: the link's own
        target is used)."""
        return self._replace(target=None if other is None else other.link, hop=None)


def _split(stored: service.StoredLink, code: str, headers: Headers, peer: str | None,
           trusted: Sequence[IPNetwork], tls: bool) -> Split | None:
    """The variant of ``stored``'s split this click goes to, None for a link without variants."""
    arms = stored.link.get("variants")
    if not arms or code.startswith("?"):
        return None
    link_id = stored.id
    index = variants.named(arms, variants.cookie_value(headers.get("Cookie", ""), variants.cookie_name(link_id)))
    address = None
    if index is None:  # no cookie (or one naming no variant now): the stable hash
        forwarded = ",".join(headers.getall(FORWARDED_FOR, ())) if trusted else ""
        address = client_address(peer, forwarded, trusted) if forwarded else peer or ""
        index = variants.by_weight(arms, variants.stable_fraction(link_id, address, headers.get("User-Agent", "")))
    variant = arms[index]
    name = str(variant["name"])
    target = variant.get("target") or None
    hop = target.get("link") if target else None
    secure = variants.is_https(peer, headers.get(FORWARDED_PROTO, ""), trusted, tls)
    return Split(name, None if hop else target, hop, variants.set_cookie(link_id, code, name, secure), address)


# Deferred deep links (linksvc.links.deferred): the iOS landing page. No fingerprinting: the click's token
# reaches the app only through the pasteboard, copied by the person's own tap.
_LANDING_STYLE = ("body{font-family:-apple-system,sans-serif;margin:3em auto;max-width:24em;padding:0 1em;"
                  "text-align:center}p{color:#444}a.open{display:block;padding:.9em;border-radius:.6em;background:#0a66ff;"
                  "color:#fff;text-decoration:none;font-weight:600;margin:2em 0 1em}")
_LANDING_SCRIPT = ("document.getElementById('open').addEventListener('click',function(e){e.preventDefault();"
                   "var href=this.href,go=function(){window.location.href=href;};"
                   "if(navigator.clipboard&&navigator.clipboard.writeText){"
                   "navigator.clipboard.writeText(%s).then(go,go);}else{go();}});")


def _script_string(text: str) -> str:
    """``text`` as a JavaScript string literal that cannot end the script element or break out of it."""
    literal = json.dumps(text)
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                         ("\u2029", "\\u2029")):
        literal = literal.replace(char, escape)
    return literal


def landing_page(link: Mapping[str, Any], urls: Mapping[str, str], tracking_id: str) -> web.Response:
    """The page iOS people get for a link with ``ios.landing_page``: the link's title if any, "Open in the app"
    (its tap copies :func:`~linksvc.links.deferred.pasteboard_token` and opens the App Store) and "Continue to
    the website". Everything from the link or the click is escaped; the policy allows only this page's own
    script and style, by a nonce of this response."""
    nonce = secrets.token_urlsafe(16)
    title = link.get("title") if isinstance(link.get("title"), str) else None
    heading = html.escape(title or "Get the app")
    script = _LANDING_SCRIPT % _script_string(pasteboard_token(tracking_id))
    body = (f"<!doctype html><html lang=en><meta charset=utf-8>"
            f"<meta name=viewport content='width=device-width,initial-scale=1'><title>{heading}</title>"
            f"<style nonce={nonce}>{_LANDING_STYLE}</style><body><h1>{heading}</h1>"
            "<p>Opening the app copies a short code, so that the app shows this page after it is installed.</p>"
            f"<a id=open class=open href=\"{html.escape(urls['app_store_url'])}\">Open in the app</a>"
            f"<p><a id=web href=\"{html.escape(urls['web_url'])}\">Continue to the website</a></p>"
            f"<script nonce={nonce}>{script}</script></body></html>")
    policy = (f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; base-uri 'none'; "
              "form-action 'none'; frame-ancestors 'none'")
    return web.Response(status=200, text=body, content_type="text/html",
                        headers={"Cache-Control": NO_STORE, "Content-Security-Policy": policy,
                                 "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff"})


async def _preview(request: web.Request, stored: service.StoredLink, code: str, decision: Decision,
                   domain: str | None) -> web.Response | None:
    """The preview page a link-preview fetcher gets (:mod:`linksvc.links.previews`), or None when neither the
    link nor its account sets anything to show: the fetcher then follows the 302 like any bot."""
    if decision.status != 302 or decision.location is None:
        return None
    card = await card_of(request.app[DB], stored.account_id, stored.link)
    if card is None:
        return None
    body = preview_page(card, _short_url(request.app[SETTINGS], code, domain), decision.location)
    return web.Response(text=body, content_type="text/html", charset="utf-8", headers={"Cache-Control": NO_STORE})


def _decision(settings: Settings, stored: service.StoredLink, code: str, headers: Headers, query: Mapping[str, str],
              domain: str | None, peer: str | None, clicks: ClickRecorder, now: float, split: Split | None = None
              ) -> tuple[Device, Decision, Facts, str | None, Split | None]:
    """The answer to a click on ``stored``: its rules (:mod:`linksvc.rules`) pick the target, if one matches;
    else the variant of its A/B split (``split``, :func:`_split`), if it has one; then
    :func:`~linksvc.links.decide.decide` as for the link's own; with the click's facts (its place), the name of
    the rule that matched and the split when it was used (None when a rule matched)."""
    agent = headers.get("User-Agent", "")
    device = classify(agent)
    facts = _facts(headers, device, agent, query, now, peer, clicks)
    if split is not None and split.address is not None:
        facts.address = split.address  # the split's hash worked it out already: the same rule, done once
    rules = stored.rules if isinstance(stored, service.RuledLink) else None
    matched = pick(rules, facts) if rules is not None else None
    link: Mapping[str, Any]
    if matched is not None:
        link = with_target(stored.link, matched)
        split = None
    else:
        link = stored.link if split is None else variants.with_target(stored.link, split.target)
    return device, decide(
        link, device, query, "application/json" in headers.get("Accept", ""),
        _short_url(settings, code, domain), new_tracking_id(), settings.service_label,
    ), facts, None if matched is None else matched.name, split


def _facts(headers: Headers, device: Device, agent: str, query: Mapping[str, str], now: float, peer: str | None,
           clicks: ClickRecorder) -> Facts:
    """What the click's rules may ask, and its record reads (the client's place)."""
    trusted = clicks.visitors.trusted_proxies
    forwarded = ",".join(headers.getall(FORWARDED_FOR, ())) if trusted else ""
    return Facts(device, agent, query, now, headers.get("Accept-Language", ""), headers.get("Referer", ""), peer,
                 forwarded, trusted, clicks.geo)


def _short_url(settings: Settings, code: str, domain: str | None) -> str:
    """The address the click came to (the install referrer's ``link``, a preview's ``og:url``): on a custom
    domain, that domain's. ``code`` is a link's code, or ``?...`` for a long Dynamic Link."""
    base = settings.public_url if domain is None else f"{settings.domain_verify_scheme}://{domain}"
    return f"{base}/{code}"


class Headers(Protocol):
    """A request's headers (aiohttp's on the handler, the parser's on the fast lane)."""

    def get(self, key: str, default: str) -> str: ...
    def getall(self, key: str, default: tuple[()]) -> list[str] | tuple[()]: ...


class LinkOf(Protocol):
    """What a click records of its link: a stored link, or the lane's held one."""

    @property
    def id(self) -> str: ...
    @property
    def account_id(self) -> str: ...


def _click(stored: LinkOf, decision: Decision, now: float, device: Device, headers: Headers,
           visitors: Visitors, facts: Facts, rule: str | None, variant: str | None = None) -> Click:
    """The click to record: with the client's place, the rule that matched and the variant it went to (none
    when a rule matched), never the client's address."""
    agent = facts.user_agent
    place = facts.where()
    return Click(stored.account_id, stored.id, decision.tracking_id, now, device.platform, device.bot,
                 decision.answer, agent, facts.referer, decision.utm,
                 visitors.of(now, facts.client(), "", agent), decision.utm_origin,
                 place.country, place.region, place.city, rule, variant)


class FastRedirects:
    """The resolver's fast lane (:data:`api.server.FAST_LANE`): a ``GET /{code}`` over HTTP/1.1, kept alive,
    without a body, for a link this worker holds, that :func:`resolve` would answer with a 302. Answered with
    the bytes :func:`resolve` and the middleware would send (status line, ``Location``, ``Cache-Control``,
    ``Set-Cookie`` for a link with an A/B split, ``X-Request-Id``, ``Content-Length``, ``Date``, ``Server``),
    its click recorded the same way and its request counted in the metrics under the same route. Any other
    request is left to the handler (None).

    A path the router gives to one of the service's own routes (``/healthz``, ``/metrics``...) is never
    taken, whatever links exist: those are read off the router at the first request."""

    def __init__(self, app: web.Application) -> None:
        self._app = app
        self._own_paths: frozenset[str] | None = None
        self._route = ""
        self._shared = app[SHARED_HOSTS]
        self._hosts: dict[str, tuple[str, bool]] = {}  # Host header as sent -> (host, shared): one dict lookup
        self._http_date = HttpDate()
        self._plans = DecisionPlans()  # the plain links' answers, per kind of device (linksvc.links.plans)
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
        held = service.hold_now(app[DB], code)  # held, or read now (SQLite) and held
        if held is None:
            return None
        plan, body = self._plans.plan(code, held)
        headers = message.headers
        # The host rule, as resolve() applies it: a shared host reads nothing; a domain is a dict lookup in what
        # this worker holds, and when that is not current the handler answers.
        raw_host = headers.get("Host", "")
        known = self._hosts.get(raw_host)
        if known is None:
            if len(self._hosts) >= MAX_HOSTS_SEEN:
                self._hosts.clear()
            known = self._hosts[raw_host] = (host := request_host(raw_host), host in self._shared)
        host, shared = known
        domain = None
        if not shared:
            held_hosts = held_domains(app[DB]).peek()
            domain = None if held_hosts is None else held_hosts.get(host)
            if domain is None or not link_resolves_here(host, False, domain, held.account_id, plan.domain):
                return None
        elif plan.domain is not None:
            return None
        now = time.time()
        clicks = app[CLICKS]
        peer = lane_peer()
        on = None if domain is None else host
        if plan.plain and not url.raw_query_string:  # the same answer as the link's last click like it
            agent = headers.get("User-Agent", "")
            device = classify(agent)
            # A preview fetcher gets the preview page when the link or its account sets a card (the handler's);
            # else the 302 any bot gets.
            if is_preview_fetcher(device) and not plain_redirect_now(app[DB], held.account_id, plan.preview):
                return None
            settings = app[SETTINGS]
            answer = self._plans.answer(plan, body, device, on, _short_url(settings, code, on),
                                        settings.service_label)
            if answer is None:
                return None
            decision = answer.decision(new_tracking_id())
            facts = _facts(headers, device, agent, {}, now, peer, clicks)
            return self._answer(now, started, held, decision, device, headers, facts, None, None, None)
        stored = held.decoded()
        link: Mapping[str, Any] = stored.link
        # A password-protected link asks for its password (or reads its cookie) on the handler; a link that does not
        # lead to its target now, or whose clicks by people this worker has not counted yet, is answered there too.
        if protected(link) or held_unavailable(clicks.limits, stored.id, link, now) is not None:
            return None
        split = None
        if link.get("variants"):  # the A/B split: the same pick and cookie as the handler's
            split = _split(stored, code, headers, peer, clicks.visitors.trusted_proxies, False)
            if split is not None and split.hop is not None:
                other = service.held_link(app[DB], split.hop)
                if other is None or other.account_id != stored.account_id:
                    return None  # not held (or not the account's): the handler reads it
                split = split.reached(other)
        query = url.query
        device, decision, facts, rule, split = _decision(
            app[SETTINGS], stored, code, headers, {key: query[key] for key in query} if url.raw_query_string else {},
            on, peer, clicks, now, split)
        if decision.status != 302 or decision.location is None or decision.skipped:
            return None
        if is_preview_fetcher(device) and not plain_redirect_now(app[DB], stored.account_id, link.get("preview")):
            return None  # the preview page: the handler's
        return self._answer(now, started, stored, decision, device, headers, facts, rule, split,
                            link.get("max_clicks"))

    async def warm(self, slice_seconds: float = 0.005) -> int:
        """Works out ahead the answers of every plain link this worker holds (:meth:`DecisionPlans.warm`), a few
        milliseconds of the event loop at a time, until a link changes (the worker then holds none of them);
        how many answers it added."""
        db, settings = self._app[DB], self._app[SETTINGS]
        generation = db.generation("links")
        added = 0
        started = time.perf_counter()
        for code, held in service.held_links(db):
            added += self._plans.warm(code, held, _short_url(settings, code, None), settings.service_label)
            if time.perf_counter() - started > slice_seconds:
                await asyncio.sleep(0)
                if db.generation("links") != generation:
                    break
                started = time.perf_counter()
        return added

    def _answer(self, now: float, started: float, stored: LinkOf, decision: Decision, device: Device,
                headers: Headers, facts: Facts, rule: str | None, split: Split | None, max_clicks: Any) -> bytes:
        """The 302's bytes, with its click recorded and its request counted."""
        incoming = headers.get("X-Request-Id", "")
        request_id = incoming if SAFE_ID.match(incoming) else new_request_id()
        cookie = "" if split is None else f"Set-Cookie: {split.cookie}\r\n"
        answer = (f"HTTP/1.1 302 Found\r\nLocation: {decision.location}\r\nCache-Control: {NO_STORE}\r\n"
                  f"{cookie}X-Request-Id: {request_id}\r\nContent-Length: 0\r\nDate: {self._http_date(now)}\r\n"
                  f"Server: {SERVER_SOFTWARE}\r\n\r\n").encode("ascii")
        clicks = self._app[CLICKS]
        clicks.record(_click(stored, decision, now, device, headers, clicks.visitors, facts, rule,
                             None if split is None else split.name))
        if max_clicks is not None and not device.bot:
            clicks.limits.took(stored.id)
        metrics = self._app[METRICS_KEY]
        metrics.observe("GET", self._route, 302, time.perf_counter() - started)
        metrics.count(LANE_ANSWERS, "redirects")
        self.answered += 1
        return answer


async def apple_app_site_association(request: web.Request) -> web.Response:
    apps = await _apps_of_host(request)
    return apps if isinstance(apps, web.Response) else json_response(service.apple_app_site_association(apps))


async def asset_links(request: web.Request) -> web.Response:
    apps = await _apps_of_host(request)
    return apps if isinstance(apps, web.Response) else json_response(service.asset_links(apps))


async def _apps_of_host(request: web.Request) -> list[service.AppSettings] | web.Response:
    """The apps the host's association files list: on a live domain its account's; on a shared host those of
    the accounts without a live domain; an unknown host or a pending domain is 404."""
    host, shared, domain = await domain_of_request(request)
    apps = await service.apps_of_host(request.app[DB], shared, domain)
    if apps is None:
        return json_response({"error": "Not found", "details": f"{host} is not a host of this service"}, status=404)
    return apps


def add_resolver_routes(app: web.Application) -> None:
    # GET routes answer HEAD too (aiohttp adds it), without a body. Every host: the host rule is the resolver's.
    on_every_host(app, app.router.add_get("/.well-known/apple-app-site-association", apple_app_site_association),
                  app.router.add_get("/.well-known/assetlinks.json", asset_links),
                  app.router.add_get(CODE_ROUTE, resolve), app.router.add_post(CODE_ROUTE, unlock),
                  app.router.add_get("/", long_link))
    app[FAST_LANE] = FastRedirects(app)


async def warm_fast_lane(app: web.Application) -> int:
    """The resolver's lane works out its held links' answers ahead (:meth:`FastRedirects.warm`); how many."""
    lane = app.get(FAST_LANE)
    return await lane.warm() if isinstance(lane, FastRedirects) else 0


