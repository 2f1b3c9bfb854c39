"""The storefront API, ``/api/storefront/v1`` (the interface specification)."""

from __future__ import annotations

from aiohttp import web

from api.appkeys import DB, SETTINGS
from api.auth import principal
from api.openapi import build_openapi
from api.routing import Endpoint, Header, add_endpoints, data, json_response
from api.schemas import Envelope
from linksvc import accounts, catalog
from linksvc.resources.models import Brand, Tier

PREFIX = "/api/storefront/v1"


async def authorize(request: web.Request) -> web.Response:
    api_key = request.headers["x-api-key"].strip()
    settings = request.config_dict[SETTINGS]
    token, _ = await accounts.issue_token(request.config_dict[DB], api_key, settings.token_ttl_seconds)
    response = data(token)
    response.headers["Cache-Control"] = "no-store"
    return response


async def list_brands(request: web.Request) -> web.Response:
    return data(await catalog.brands(request.config_dict[DB].reader, principal(request).account_id))


async def list_tiers(request: web.Request) -> web.Response:
    return data(await catalog.tiers(request.config_dict[DB].reader, principal(request).account_id))


async def openapi(request: web.Request) -> web.Response:
    return json_response(request.app[OPENAPI])


OPENAPI: web.AppKey[dict] = web.AppKey("storefront_openapi", dict)

ENDPOINTS = [
    Endpoint(
        "GET", "/auth/authorize", authorize, "Exchange an API key for an access token", "auth",
        response=Envelope[str], security="api_key",
        headers=(Header("x-api-key", "the integration's API key", required=True),), errors=(401,),
    ),
    Endpoint("GET", "/brands", list_brands, "List brands", "catalog", response=Envelope[list[Brand]],
             errors=(401, 403)),
    Endpoint("GET", "/tiers", list_tiers, "List tiers, lowest level first", "catalog",
             response=Envelope[list[Tier]], errors=(401, 403)),
    Endpoint("GET", "/openapi.json", openapi, "This document", "meta", security=None),
]


def storefront_app() -> web.Application:
    app = web.Application()
    add_endpoints(app, ENDPOINTS)
    app[OPENAPI] = build_openapi("linksvc storefront API", "1.0.0", PREFIX, ENDPOINTS)
    return app
