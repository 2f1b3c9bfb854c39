"""Storefront handlers of accounts: ``GET /auth/authorize`` exchanges an API key for an access token."""

from __future__ import annotations

from aiohttp import web

from api.accounts.throttle import attempt
from api.appkeys import DB, SETTINGS
from api.routing import data
from linksvc.accounts import service as accounts


async def authorize(request: web.Request) -> web.Response:
    settings = request.app[SETTINGS]
    async with attempt(request, "api_key"):  # the endpoint has refused a request without a key already
        token, _ = await accounts.issue_token(
            request.app[DB], request.headers["x-api-key"].strip(), settings.token_ttl_seconds
        )
    response = data(token)
    response.headers["Cache-Control"] = "no-store"
    return response
