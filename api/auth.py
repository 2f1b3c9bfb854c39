"""Who is calling: bearer tokens on the storefront API, the admin token on the admin API.

401 for a missing, malformed, unknown, expired or revoked credential; 403 when ``x-account-id`` names
another account than the token's, or when the key kind may not do what is asked (:func:`require_server`).
"""

from __future__ import annotations

import hmac

from aiohttp import web

from api.appkeys import DB, SETTINGS
from linksvc.accounts import Principal, principal_for
from linksvc.errors import Forbidden, Unauthorized

PRINCIPAL: web.RequestKey[Principal] = web.RequestKey("principal", Principal)


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
        token = _bearer_token(request)
        expected = request.app[SETTINGS].admin_token
        if not expected or not hmac.compare_digest(token.encode(), expected.encode()):
            raise Unauthorized("Invalid admin token", "the bearer token is not the admin token")


def principal(request: web.Request) -> Principal:
    found: Principal = request[PRINCIPAL]
    return found


def require_server(request: web.Request, action: str) -> Principal:
    who = principal(request)
    if who.kind != "SERVER":
        raise Forbidden("SERVER key required", f"{action} needs a token from a SERVER API key")
    return who
