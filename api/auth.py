"""Who is calling: bearer tokens on the storefront API, the admin token on the admin API.

401 for a missing, malformed, unknown, expired or revoked credential; 403 when ``x-account-id`` names
another account than the token's, or when the key kind may not do what is asked (:func:`require_server`).

The admin API also accepts the dashboard's session cookie (``linksvc_admin``), but only on requests that
carry ``X-Requested-With: linksvc-dashboard``: a cross-site form or image cannot set that header, so the
cookie alone (already ``SameSite=Strict``) never authorises anything. The cookie does not hold the admin
token itself but an expiry and an HMAC of it keyed by the admin token: a copied cookie stops working when
it expires or when the admin token changes, and never reveals the token.

Admin-token attempts (a bearer token, or a session cookie with the dashboard's header) are throttled per
client address (:mod:`api.auth_throttle`, kind ``admin``). Storefront bearer tokens are not: 32 random
bytes cannot be guessed, counting them would add a read to every storefront request, and the expired tokens
of an app on many phones behind one carrier address would lock that address out.
"""

from __future__ import annotations

import hashlib
import hmac
import time

from aiohttp import web

from api.appkeys import DB, SETTINGS
from api.auth_throttle import attempt
from linksvc.accounts import Principal, principal_for
from linksvc.errors import Forbidden, Unauthorized

PRINCIPAL: web.RequestKey[Principal] = web.RequestKey("principal", Principal)

SESSION_COOKIE = "linksvc_admin"
DASHBOARD_HEADER = "X-Requested-With"
DASHBOARD_HEADER_VALUE = "linksvc-dashboard"
SESSION_SECONDS = 12 * 3600


def _session_mac(admin_token: str, expires: int) -> str:
    message = f"linksvc-dashboard-session:{expires}".encode()
    return hmac.new(admin_token.encode(), message, hashlib.sha256).hexdigest()


def session_value(admin_token: str, now: float) -> str:
    """A dashboard session cookie value that is good for :data:`SESSION_SECONDS` from ``now``."""
    expires = int(now) + SESSION_SECONDS
    return f"v1.{expires}.{_session_mac(admin_token, expires)}"


def session_is_valid(value: str, admin_token: str, now: float) -> bool:
    """True for a value made by :func:`session_value` with this admin token and not yet expired."""
    version, _, rest = value.partition(".")
    expires_text, _, mac = rest.partition(".")
    well_formed = version == "v1" and expires_text.isascii() and expires_text.isdigit() and len(expires_text) <= 12
    if not well_formed or not admin_token:
        return False
    expires = int(expires_text)
    fresh = now < expires <= now + SESSION_SECONDS
    return hmac.compare_digest(mac.encode(), _session_mac(admin_token, expires).encode()) and fresh


def _bearer_token(request: web.Request) -> str:
    header = request.headers.get("Authorization")
    if header is None:
        raise Unauthorized("Missing token", "send the header Authorization: Bearer <token>")
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or " " in token:
        raise Unauthorized("Malformed token", "the Authorization header must be: Bearer <token>")
    return token


async def authenticate(request: web.Request, security: str | None) -> None:
    if security == "bearer":
        principal = await principal_for(request.app[DB], _bearer_token(request))
        claimed = request.headers.get("x-account-id")
        if claimed is not None and claimed.strip().lower() != principal.account_id:
            raise Forbidden("Account mismatch", "x-account-id names another account than the token's")
        request[PRINCIPAL] = principal
    elif security == "api_key":
        if not request.headers.get("x-api-key", "").strip():
            raise Unauthorized("Missing API key", "send the integration's API key in the x-api-key header")
    elif security == "admin":
        async with attempt(request, "admin", carried=_carries_admin_credential(request)):
            _admin(request)


def _carries_admin_credential(request: web.Request) -> bool:
    """A try at the admin token: a bearer token, or a session cookie (its MAC is keyed by the admin token)."""
    return "Authorization" in request.headers or (
        SESSION_COOKIE in request.cookies and request.headers.get(DASHBOARD_HEADER) == DASHBOARD_HEADER_VALUE)


def _admin(request: web.Request) -> None:
    """The admin token as a bearer token, or else a dashboard session cookie with the dashboard's header."""
    expected = request.app[SETTINGS].admin_token
    cookie = request.cookies.get(SESSION_COOKIE)
    if cookie is None or "Authorization" in request.headers:
        token = _bearer_token(request)
        if not expected or not hmac.compare_digest(token.encode(), expected.encode()):
            raise Unauthorized("Invalid admin token", "the bearer token is not the admin token")
        return
    if request.headers.get(DASHBOARD_HEADER) != DASHBOARD_HEADER_VALUE:
        raise Unauthorized("Missing dashboard header",
                           f"the session cookie is accepted only with the header {DASHBOARD_HEADER}: "
                           f"{DASHBOARD_HEADER_VALUE}; other clients send Authorization: Bearer <admin token>")
    if not session_is_valid(cookie, expected, time.time()):
        raise Unauthorized("Invalid session", "the dashboard session has expired or is not valid; sign in again")


def principal(request: web.Request) -> Principal:
    found: Principal = request[PRINCIPAL]
    return found


def require_server(request: web.Request, action: str) -> Principal:
    who = principal(request)
    if who.kind != "SERVER":
        raise Forbidden("SERVER key required", f"{action} needs a token from a SERVER API key")
    return who
