"""Who is calling: bearer tokens on the storefront API; on the admin API the operator token, a personal access
token or a dashboard session (:class:`linksvc.people.access.Actor`), then the route's permission (:func:`require`).

401 for a missing, malformed, unknown, expired or revoked credential; 403 when ``x-account-id`` names
another account than the token's, or when the key kind may not do what is asked (:func:`require_server`).

The admin API also accepts the dashboard's session cookie (``linksvc_admin``), but only on requests that
carry ``X-Requested-With: linksvc-dashboard``: a cross-site form or image cannot set that header, so the
cookie alone (already ``SameSite=Strict``) never authorises anything. The cookie holds a random session
id, never the admin token; :mod:`linksvc.accounts.sessions` checks it against the store on every request,
so it stops working at sign-out, at expiry and when the admin token changes.

Admin-token and personal-token attempts (a bearer token) are throttled per client address
(:mod:`api.accounts.throttle`, kind ``admin``). Session cookies are not counted: their ids are 32 random bytes,
checked against the store.
Storefront bearer tokens are not either: 32 random bytes cannot be guessed, counting them would add a read
to every storefront request, and the expired tokens of an app on many phones behind one carrier address
would lock that address out.
"""

from __future__ import annotations

from aiohttp import web

from api.accounts.throttle import attempt
from api.appkeys import AUTH_THROTTLE, DB, SETTINGS
from linksvc.accounts.service import Principal, principal_for
from linksvc.client_address import client_address
from linksvc.clock import utcnow
from linksvc.errors import Forbidden, Unauthorized
from linksvc.feed import tickets as feed_tickets
from linksvc.people.access import Actor, authorize
from linksvc.people.credentials import admin_actor

PRINCIPAL: web.RequestKey[Principal] = web.RequestKey("principal", Principal)
ACTOR: web.RequestKey[Actor] = web.RequestKey("actor", Actor)

SESSION_COOKIE = "linksvc_admin"
DASHBOARD_HEADER = "X-Requested-With"
DASHBOARD_HEADER_VALUE = "linksvc-dashboard"


def _bearer_token(request: web.Request) -> str:
    header = request.headers.get("Authorization")
    if header is None:
        raise Unauthorized("Missing token", "send the header Authorization: Bearer <token>")
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or " " in token:
        raise Unauthorized("Malformed token", "the Authorization header must be: Bearer <token>")
    if not _printable_ascii(token):  # bytes that are not UTF-8 arrive as surrogates: no token holds them
        raise Unauthorized("Malformed token", "a token is printable ASCII")
    return token


def _printable_ascii(value: str) -> bool:
    return value.isascii() and value.isprintable()


async def authenticate(request: web.Request, security: str | None, tickets: bool = False) -> None:
    """``tickets``: the route also takes a feed ticket as ``?ticket=`` (:mod:`linksvc.feed.tickets`), when no
    Authorization header is sent."""
    if security == "bearer":
        principal = await principal_for(request.app[DB], _bearer_token(request))
        claimed = request.headers.get("x-account-id")
        if claimed is not None and (not _printable_ascii(claimed) or claimed.strip().lower() != principal.account_id):
            raise Forbidden("Account mismatch", "x-account-id names another account than the token's")
        request[PRINCIPAL] = principal
    elif security == "api_key":
        if not request.headers.get("x-api-key", "").strip():
            raise Unauthorized("Missing API key", "send the integration's API key in the x-api-key header")

    elif security == "admin":
        ticket = request.query.get("ticket") if tickets and "Authorization" not in request.headers else None
        async with attempt(request, "admin", carried="Authorization" in request.headers or ticket is not None):
            if ticket is not None:
                request[ACTOR] = feed_tickets.actor_of(request.app[SETTINGS].admin_token, ticket,
                                                       request.match_info.get("account_id", ""), utcnow())
            else:
                await _admin(request)


async def _admin(request: web.Request) -> None:
    """The admin token or a personal access token as a bearer token, or else a dashboard session cookie with the
    dashboard's header: the request's :class:`Actor`."""
    cookie = request.cookies.get(SESSION_COOKIE)
    bearer = None
    if cookie is None or "Authorization" in request.headers:
        bearer = _bearer_token(request)
    elif request.headers.get(DASHBOARD_HEADER) != DASHBOARD_HEADER_VALUE:
        raise Unauthorized("Missing dashboard header",
                           f"the session cookie is accepted only with the header {DASHBOARD_HEADER}: "
                           f"{DASHBOARD_HEADER_VALUE}; other clients send Authorization: Bearer <admin token>")
    request[ACTOR] = await admin_actor(request.app[DB], request.app[SETTINGS].admin_token, bearer, cookie)


async def require(request: web.Request, permission: str) -> None:
    """The one check of the admin API (:func:`linksvc.people.access.authorize`) for the route's permission and
    the account its path names."""
    await authorize(request.app[DB], request[ACTOR], permission, request.match_info.get("account_id"))


def actor(request: web.Request) -> Actor:
    found: Actor = request[ACTOR]
    return found


def client_ip(request: web.Request) -> str:
    """The client's address, as the throttle finds it (``X-Forwarded-For`` only from trusted proxies)."""
    trusted = request.app[AUTH_THROTTLE].trusted_proxies
    forwarded = ",".join(request.headers.getall("X-Forwarded-For", ())) if trusted else ""
    return client_address(request.remote, forwarded, trusted)


def principal(request: web.Request) -> Principal:
    found: Principal = request[PRINCIPAL]
    return found


def require_server(request: web.Request, action: str) -> Principal:
    who = principal(request)
    if who.kind != "SERVER":
        raise Forbidden("SERVER key required", f"{action} needs a token from a SERVER API key")
    return who
