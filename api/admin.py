"""The admin API, ``/api/admin/v1``: accounts, API keys and every account resource, behind the admin token.

Resources live under their account: ``/accounts/{account_id}/{resource}[/{id}]``. The endpoints of the
nine resource kinds are generated from one table, so each gets the same list/create/read/replace/
patch/delete behaviour and the same validation.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Literal, Optional

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, create_model

from api.admin_links import overview_endpoints
from api.appkeys import CLICKS, DB, DISPATCHER, RESOURCES, SETTINGS
from api.openapi import openapi_document
from api.routing import Endpoint, add_endpoints, data, json_response
from api.schemas import Envelope, Page, Paging, UtmEdit, Wallet
from linksvc import accounts, deadletters
from linksvc.forwarding import deliveries
from linksvc.resolver import stats
from linksvc.resolver.qr import CONTENT_TYPES as QR_CONTENT_TYPES
from linksvc.resolver.qr import qr_image
from linksvc.resolver.utm import edit_utm
from linksvc.resources.kinds import KINDS, Kind
from linksvc.resources.models import Account, ApiKeyIn, CouponCode, Environment, KeyKind

PREFIX = "/api/admin/v1"
ERRORS = (400, 401, 404, 409)


class AccountPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str | None = Field(default=None, min_length=1, max_length=200)
    environment: Environment | None = None


class AccountView(Account):
    created_at: str
    updated_at: str


class ApiKeyCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: KeyKind
    name: str = Field(default="", max_length=200)


class ApiKeyView(BaseModel):
    id: str
    account_id: str
    kind: str
    name: str
    prefix: str = Field(description="the first characters of the key, to recognise it")
    created_at: str
    revoked_at: str | None


class ApiKeyCreated(ApiKeyView):
    key: str = Field(description="the secret: shown only in this response")


# --- accounts and keys ------------------------------------------------------------------------------

async def list_accounts(request: web.Request, query: Paging) -> web.Response:
    views, total = await accounts.list_accounts(request.app[DB], query.limit, query.offset)
    return json_response({"data": views, "count": total,
                          "limit": query.limit, "offset": query.offset})


async def create_account(request: web.Request, body: Account) -> web.Response:
    return data(await accounts.create_account(request.app[DB], body), status=201)


async def get_account(request: web.Request) -> web.Response:
    row = await accounts.get_account(request.app[DB].reader, request.match_info["account_id"])
    return data(accounts.account_view(row))


async def patch_account(request: web.Request, body: AccountPatch) -> web.Response:
    db = request.app[DB]
    current = accounts.account_view(await accounts.get_account(db.reader, request.match_info["account_id"]))
    merged = Account(id=current["id"], name=body.name or current["name"],
                     environment=body.environment or current["environment"])
    return data(await accounts.update_account(db, merged))


async def delete_account(request: web.Request) -> web.Response:
    await accounts.delete_account(request.app[DB], request.match_info["account_id"])
    return web.Response(status=204)


async def list_keys(request: web.Request) -> web.Response:
    return data(await accounts.list_keys(request.app[DB], request.match_info["account_id"]))


async def create_key(request: web.Request, body: ApiKeyCreate) -> web.Response:
    spec = ApiKeyIn(kind=body.kind, name=body.name)
    created = await accounts.create_key(request.app[DB], request.match_info["account_id"], spec)
    return data(created, status=201)


async def get_key(request: web.Request) -> web.Response:
    account_id, key_id = request.match_info["account_id"], request.match_info["key_id"]
    return data(await accounts.get_key(request.app[DB], account_id, key_id))


async def revoke_key(request: web.Request) -> web.Response:
    account_id, key_id = request.match_info["account_id"], request.match_info["key_id"]
    return data(await accounts.revoke_key(request.app[DB], account_id, key_id))


# --- account resources ------------------------------------------------------------------------------

def _partial(model: type[BaseModel]) -> type[BaseModel]:
    fields: dict[str, Any] = {
        name: (Optional[info.annotation], None)  # noqa: UP045  (a runtime type expression)
        for name, info in model.model_fields.items() if name != "id"
    }
    return create_model(f"{model.__name__}Patch", __config__=ConfigDict(extra="forbid"), **fields)


_VIEW_EXTRAS: dict[str, dict[str, Any]] = {
    "campaigns": {"status": (str, ...), "codes": (Optional[list[CouponCode]], None)},  # noqa: UP045
    "customers": {"wallet": (Wallet, ...)},
    "rewards": {"account_id": (str, ...)},
}


@cache
def _view(kind: Kind) -> type[BaseModel]:
    base: type[BaseModel] = kind.model
    return create_model(
        f"{base.__name__}View", __base__=base,
        created_at=(str, ...), updated_at=(str, ...), **_VIEW_EXTRAS.get(kind.name, {}),
    )


def _wrapped(view: type[BaseModel]) -> tuple[type[BaseModel], type[BaseModel]]:
    """``Envelope[view]`` and ``Page[view]`` of a model built at run time."""
    return Envelope[view], Page[view]  # type: ignore[valid-type]


def resource_endpoints(kind: Kind) -> list[Endpoint]:
    segment = kind.name.replace("_", "-")
    collection = f"/accounts/{{account_id}}/{segment}"
    item = f"{collection}/{{id}}"
    one, page = _wrapped(_view(kind))
    patch_model = _partial(kind.model)
    name = kind.name

    async def list_items(request: web.Request, query: Paging) -> web.Response:
        items, total = await request.app[RESOURCES].list(
            request.match_info["account_id"], name, query.limit, query.offset)
        return json_response({"data": items, "count": total, "limit": query.limit, "offset": query.offset})

    # Bodies reach the resource service as sent (raw_body): it checks the fields and the kind's own rules
    # (references, fields that depend on others) together, so that one 400 names every problem.
    async def create_item(request: web.Request, body: Any) -> web.Response:
        created = await request.app[RESOURCES].create(request.match_info["account_id"], name, body)
        return data(created, status=201)

    async def get_item(request: web.Request) -> web.Response:
        return data(await request.app[RESOURCES].get(
            request.match_info["account_id"], name, request.match_info["id"]))

    async def replace_item(request: web.Request, body: Any) -> web.Response:
        return data(await request.app[RESOURCES].update(
            request.match_info["account_id"], name, request.match_info["id"], body, partial=False))

    async def patch_item(request: web.Request, body: Any) -> web.Response:
        return data(await request.app[RESOURCES].update(
            request.match_info["account_id"], name, request.match_info["id"], body, partial=True))

    async def delete_item(request: web.Request) -> web.Response:
        await request.app[RESOURCES].delete(
            request.match_info["account_id"], name, request.match_info["id"])
        return web.Response(status=204)

    label = kind.label
    return [
        Endpoint("GET", collection, list_items, f"List {label}s", segment, query=Paging,
                 response=page, security="admin", errors=ERRORS),
        Endpoint("POST", collection, create_item, f"Create a {label}", segment, body=kind.model,
                 response=one, status=201, security="admin", errors=ERRORS, raw_body=True),
        Endpoint("GET", item, get_item, f"Read a {label}", segment, response=one,
                 security="admin", errors=ERRORS),
        Endpoint("PUT", item, replace_item, f"Replace a {label}", segment, body=kind.model,
                 response=one, security="admin", errors=ERRORS, raw_body=True),
        Endpoint("PATCH", item, patch_item, f"Change some fields of a {label}", segment, body=patch_model,
                 response=one, security="admin", errors=ERRORS, raw_body=True),
        Endpoint("DELETE", item, delete_item, f"Delete a {label}", segment, status=204,
                 security="admin", errors=ERRORS),
    ]


async def edit_link_utm(request: web.Request, body: UtmEdit) -> web.Response:
    account_id, link_id = request.match_info["account_id"], request.match_info["id"]
    resources = request.app[RESOURCES]
    current = await resources.get(account_id, "links", link_id)
    destination = edit_utm(current["destination_url"], body.model_dump(exclude_unset=True))
    return data(await resources.update(account_id, "links", link_id, {"destination_url": destination}, partial=True))


class QrQuery(BaseModel):
    format: Literal["svg", "png"] = "svg"
    scale: int = Field(default=8, ge=1, le=40, description="pixels per module")


async def link_qr(request: web.Request, query: QrQuery) -> web.Response:
    account_id, link_id = request.match_info["account_id"], request.match_info["id"]
    link = await request.app[RESOURCES].get(account_id, "links", link_id)
    short_url = f"{request.app[SETTINGS].public_url}/{link['code']}"
    image, content_type = qr_image(short_url, query.format, query.scale)
    name = f"{link['code']}.{query.format}"
    return web.Response(body=image, content_type=content_type,
                        headers={"Content-Disposition": f'inline; filename="{name}"'})


class ClicksQuery(BaseModel):
    days: int = Field(default=30, ge=1, le=366, description="how many days back")


class CountSplit(BaseModel):
    model_config = ConfigDict(extra="allow")
    human: int
    bot: int


class LinkClicks(BaseModel):
    link_id: str
    since: str
    human: int
    bot: int
    by_day: list[CountSplit]
    by_platform: list[CountSplit]
    by_utm_source: list[CountSplit]
    by_browser: list[CountSplit] = Field(description="by browser family and major version (null: unknown)")
    by_os: list[CountSplit] = Field(description="by OS family and major version (null: unknown)")
    by_device: list[CountSplit] = Field(description="by device brand and model (null: unknown)")


async def link_clicks(request: web.Request, query: ClicksQuery) -> web.Response:
    account_id, link_id = request.match_info["account_id"], request.match_info["id"]
    await request.app[RESOURCES].get(account_id, "links", link_id)  # 404 unless the account's link
    await request.app[CLICKS].flush_before_counting()  # every click taken so far is counted
    return data(await stats.link_clicks(request.app[DB].reader, link_id, query.days))


class DeliveryView(BaseModel):
    id: str
    connection_id: str
    destination: str
    event_id: str
    trigger: str = Field(description="event or reversal")
    kind: str
    state: str = Field(description="pending, delivered, filtered, skipped, failed or dead")
    reason: str | None = Field(description="why it was filtered or skipped")
    tries: int
    next_attempt_at: str
    last_status: int | None
    last_error: str | None
    created_at: str
    updated_at: str
    delivered_at: str | None


DeliveryState = Literal["pending", "delivered", "filtered", "skipped", "failed", "dead"]


class DeliveriesQuery(Paging):
    state: DeliveryState | None = None


async def event_deliveries(request: web.Request) -> web.Response:
    account_id, event_id = request.match_info["account_id"], request.match_info["event_id"]
    return data(await deliveries.of_event(request.app[DB], account_id, event_id))


async def connection_deliveries(request: web.Request, query: DeliveriesQuery) -> web.Response:
    account_id, connection_id = request.match_info["account_id"], request.match_info["id"]
    await request.app[RESOURCES].get(account_id, "connections", connection_id)  # 404 unless the account's
    return data(await deliveries.of_connection(request.app[DB], account_id, connection_id, query.state,
                                               query.limit, query.offset))


async def retry_delivery(request: web.Request) -> web.Response:
    account_id, delivery_id = request.match_info["account_id"], request.match_info["delivery_id"]
    view = await deliveries.retry(request.app[DB], account_id, delivery_id)
    request.app[DISPATCHER].wake()
    return data(view)


class ConnectionTest(BaseModel):
    outcome: str = Field(description="delivered (the vendor accepted the test event), failed (it refused it: see "
                                     "message), retry (it could not be reached or asked to try later) or not_sent "
                                     "(the destination has no test mode, or the connection lacks a setting)")
    status: int | None = Field(description="the vendor's HTTP status")
    message: str | None = Field(description="the vendor's own code and message")


async def test_connection(request: web.Request) -> web.Response:
    account_id, connection_id = request.match_info["account_id"], request.match_info["id"]
    return data(await deliveries.test_connection(request.app[DB], account_id, connection_id,
                                                 request.app[DISPATCHER].test))


class SecretRotated(BaseModel):
    secret: str = Field(description="the new whsec_ signing secret: shown only in this response")
    previous_secret_expires_at: str | None = Field(
        description="until when the replaced secret also signs every delivery (24 hours from now)")


async def rotate_secret(request: web.Request) -> web.Response:
    account_id, connection_id = request.match_info["account_id"], request.match_info["id"]
    return data(await request.app[RESOURCES].rotate_webhook_secret(account_id, connection_id))


class DeadLetterView(BaseModel):
    id: int
    kind: str = Field(description="what was set aside: click")
    reason: str = Field(description="the error it met when it was written alone")
    payload: dict[str, Any] = Field(description="what it held, every text made valid UTF-8 and cut")
    created_at: str


async def list_dead_letters(request: web.Request, query: Paging) -> web.Response:
    items, total = await deadletters.list_dead_letters(request.app[DB], request.match_info["account_id"],
                                                       query.limit, query.offset)
    return json_response({"data": items, "count": total, "limit": query.limit, "offset": query.offset})


async def openapi(request: web.Request) -> web.Response:
    return json_response(request.app[OPENAPI])


OPENAPI: web.AppKey[dict] = web.AppKey("admin_openapi", dict)

ENDPOINTS = [
    Endpoint("GET", "/accounts", list_accounts, "List accounts", "accounts", query=Paging,
             response=Page[AccountView], security="admin", errors=(401,)),
    Endpoint("POST", "/accounts", create_account, "Create an account", "accounts", body=Account,
             response=Envelope[AccountView], status=201, security="admin", errors=(401, 409)),
    Endpoint("GET", "/accounts/{account_id}", get_account, "Read an account", "accounts",
             response=Envelope[AccountView], security="admin", errors=(401, 404)),
    Endpoint("PATCH", "/accounts/{account_id}", patch_account, "Rename an account or change its environment",
             "accounts", body=AccountPatch, response=Envelope[AccountView], security="admin", errors=(401, 404)),
    Endpoint("DELETE", "/accounts/{account_id}", delete_account, "Delete an account and all its data",
             "accounts", status=204, security="admin", errors=(401, 404)),
    Endpoint("GET", "/accounts/{account_id}/api-keys", list_keys, "List API keys (never their secrets)",
             "api-keys", response=Envelope[list[ApiKeyView]], security="admin", errors=(401, 404)),
    Endpoint("POST", "/accounts/{account_id}/api-keys", create_key, "Create an API key; the secret is shown once",
             "api-keys", body=ApiKeyCreate, response=Envelope[ApiKeyCreated], status=201, security="admin",
             errors=(401, 404)),
    Endpoint("GET", "/accounts/{account_id}/api-keys/{key_id}", get_key, "Read an API key", "api-keys",
             response=Envelope[ApiKeyView], security="admin", errors=(401, 404)),
    Endpoint("DELETE", "/accounts/{account_id}/api-keys/{key_id}", revoke_key,
             "Revoke an API key; its tokens stop working at once", "api-keys",
             response=Envelope[ApiKeyView], security="admin", errors=(401, 404)),
    *overview_endpoints(),  # before the resource endpoints: /links/overview is not /links/{id}
    *(endpoint for kind in KINDS.values() for endpoint in resource_endpoints(kind)),
    Endpoint("PATCH", "/accounts/{account_id}/links/{id}/utm", edit_link_utm,
             "Edit the UTM of a link's destination: other parameters, their order and the fragment stay",
             "links", body=UtmEdit, response=_wrapped(_view(KINDS["links"]))[0], security="admin",
             errors=(401, 404)),
    Endpoint("GET", "/accounts/{account_id}/links/{id}/qr", link_qr,
             "The QR code of a link's short URL, as SVG or PNG", "links", query=QrQuery,
             media_types=tuple(QR_CONTENT_TYPES.values()), security="admin", errors=(401, 404)),
    Endpoint("GET", "/accounts/{account_id}/links/{id}/clicks", link_clicks,
             "Clicks of a link: by day (human and bot apart), platform and utm_source", "links",
             query=ClicksQuery, response=Envelope[LinkClicks], security="admin", errors=(401, 404)),
    Endpoint("GET", "/accounts/{account_id}/events/{event_id}/deliveries", event_deliveries,
             "Deliveries of an event (and of its reversal) to every connection", "deliveries",
             response=Envelope[list[DeliveryView]], security="admin", errors=(401, 404)),
    Endpoint("GET", "/accounts/{account_id}/connections/{id}/deliveries", connection_deliveries,
             "Deliveries to a connection, newest first, optionally of one state", "deliveries",
             query=DeliveriesQuery, response=Envelope[list[DeliveryView]], security="admin", errors=(401, 404)),
    Endpoint("POST", "/accounts/{account_id}/connections/{id}/rotate-secret", rotate_secret,
             "Give a webhook connection a new signing secret, shown once; for 24 hours every delivery is "
             "signed with the new and the old secret", "connections", response=Envelope[SecretRotated],
             security="admin", errors=(400, 401, 404)),
    Endpoint("POST", "/accounts/{account_id}/deliveries/{delivery_id}/retry", retry_delivery,
             "Send a failed or dead delivery again", "deliveries", response=Envelope[DeliveryView],
             security="admin", errors=(401, 404, 409)),
    Endpoint("POST", "/accounts/{account_id}/connections/{id}/test", test_connection,
             "Send one synthetic event the vendor's own way of testing (nothing is counted) and answer what the "
             "vendor said", "deliveries", response=Envelope[ConnectionTest], security="admin", errors=(401, 404)),
    Endpoint("GET", "/accounts/{account_id}/dead-letters", list_dead_letters,
             "Writes set aside because they failed alone (a click that could not be stored), newest first",
             "dead-letters", query=Paging, response=Page[DeadLetterView], security="admin", errors=(401, 404)),
    Endpoint("GET", "/openapi.json", openapi, "This document", "meta", security=None),
]


def add_admin_routes(app: web.Application) -> None:
    add_endpoints(app, PREFIX, ENDPOINTS)
    app[OPENAPI] = openapi_document("linksvc admin API", "1.0.0", PREFIX, ENDPOINTS)
