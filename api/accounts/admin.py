"""Admin handlers of accounts and their API keys (``/api/admin/v1/accounts[/{account_id}/api-keys]``)."""

from __future__ import annotations

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from api.appkeys import DB
from api.routing import Endpoint, data, json_response
from api.schemas import Envelope, Page, Paging
from linksvc.accounts import service as accounts
from linksvc.resources.models import Account, ApiKeyIn, Environment, KeyKind


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


async def list_accounts(request: web.Request, query: Paging) -> web.Response:
    views, total = await accounts.list_accounts(request.app[DB], query.limit, query.offset)
    return json_response({"data": views, "count": total,
                          "limit": query.limit, "offset": query.offset})


async def create_account(request: web.Request, body: Account) -> web.Response:
    return data(await accounts.create_account(request.app[DB], body), status=201)


async def get_account(request: web.Request) -> web.Response:
    return data(await accounts.read_account(request.app[DB], request.match_info["account_id"]))


async def patch_account(request: web.Request, body: AccountPatch) -> web.Response:
    return data(await accounts.patch_account(request.app[DB], request.match_info["account_id"], body.name,
                                             body.environment))


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


ENDPOINTS = [
    Endpoint("GET", "/accounts", list_accounts, "List accounts", "accounts", query=Paging,
             response=Page[AccountView], security="admin", permission="operator", errors=(401,)),
    Endpoint("POST", "/accounts", create_account, "Create an account", "accounts", body=Account,
             response=Envelope[AccountView], status=201, security="admin", permission="operator", errors=(401, 409)),
    Endpoint("GET", "/accounts/{account_id}", get_account, "Read an account", "accounts",
             response=Envelope[AccountView], security="admin", permission="account:read", errors=(401, 404)),
    Endpoint("PATCH", "/accounts/{account_id}", patch_account, "Rename an account or change its environment",
             "accounts", body=AccountPatch, response=Envelope[AccountView], security="admin",
             permission="account:write", errors=(401, 404)),
    Endpoint("DELETE", "/accounts/{account_id}", delete_account, "Delete an account and all its data",
             "accounts", status=204, security="admin", permission="operator", errors=(401, 404)),
    Endpoint("GET", "/accounts/{account_id}/api-keys", list_keys, "List API keys (never their secrets)",
             "api-keys", response=Envelope[list[ApiKeyView]], security="admin",
             permission="keys:read", errors=(401, 404)),
    Endpoint("POST", "/accounts/{account_id}/api-keys", create_key, "Create an API key; the secret is shown once",
             "api-keys", body=ApiKeyCreate, response=Envelope[ApiKeyCreated], status=201, security="admin",
             permission="keys:write",
             errors=(401, 404)),
    Endpoint("GET", "/accounts/{account_id}/api-keys/{key_id}", get_key, "Read an API key", "api-keys",
             response=Envelope[ApiKeyView], security="admin", permission="keys:read", errors=(401, 404)),
    Endpoint("DELETE", "/accounts/{account_id}/api-keys/{key_id}", revoke_key,
             "Revoke an API key; its tokens stop working at once", "api-keys",
             response=Envelope[ApiKeyView], security="admin", permission="keys:write", errors=(401, 404)),
]
