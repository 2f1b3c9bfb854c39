"""The admin API's account resources: the endpoints of every resource kind, generated from one table
(``linksvc.resources.kinds.KINDS``), so each gets the same list/create/read/replace/patch/delete behaviour and
the same validation. Resources live under their account: ``/accounts/{account_id}/{resource}[/{id}]``."""

from __future__ import annotations

from functools import cache
from typing import Any, Optional

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, create_model

from api.appkeys import DB, RESOURCES
from api.routing import Endpoint, data, json_response
from api.schemas import Envelope, LinkSearchQuery, Page, Paging, Wallet
from linksvc.links import organise
from linksvc.resources.kinds import Kind
from linksvc.resources.models import CouponCode

ERRORS = (400, 401, 404, 409)
# The module the generated models are named after: OpenAPI component names that collide (RewardView, ...) are
# qualified with it (``api__admin__RewardView``), and the published document keeps the names it always had.
SCHEMA_MODULE = "api.admin"


def _partial(model: type[BaseModel]) -> type[BaseModel]:
    fields: dict[str, Any] = {
        # Optional[...]: a runtime type expression. The field's description and examples carry over.
        name: (Optional[info.annotation], Field(default=None, description=info.description,  # noqa: UP045
                                                examples=info.examples))
        for name, info in model.model_fields.items() if name != "id"
    }
    return create_model(f"{model.__name__}Patch", __config__=ConfigDict(extra="forbid"), __module__=SCHEMA_MODULE,
                        **fields)


_VIEW_EXTRAS: dict[str, dict[str, Any]] = {
    "campaigns": {"status": (str, ...), "codes": (Optional[list[CouponCode]], None)},  # noqa: UP045
    "customers": {"wallet": (Wallet, ...)},
    "links": {"password_protected": (bool, False)},  # the password itself is write-only, never read
    "rewards": {"account_id": (str, ...)},
}


@cache
def resource_view(kind: Kind) -> type[BaseModel]:
    base: type[BaseModel] = kind.model
    return create_model(
        f"{base.__name__}View", __base__=base, __module__=SCHEMA_MODULE,
        created_at=(str, ...), updated_at=(str, ...), **_VIEW_EXTRAS.get(kind.name, {}),
    )


def wrapped(view: type[BaseModel]) -> tuple[type[BaseModel], type[BaseModel]]:
    """``Envelope[view]`` and ``Page[view]`` of a model built at run time."""
    return Envelope[view], Page[view]  # type: ignore[valid-type]


# The area of ``linksvc.people.roles`` each kind of resource belongs to: its routes' permissions.
AREAS = {"brands": "campaigns", "tiers": "campaigns", "rewards": "campaigns", "campaigns": "campaigns",
         "custom_event_types": "campaigns", "contacts": "customers", "customers": "customers",
         "connections": "connections", "links": "links"}


def resource_endpoints(kind: Kind) -> list[Endpoint]:
    segment = kind.name.replace("_", "-")
    collection = f"/accounts/{{account_id}}/{segment}"
    item = f"{collection}/{{id}}"
    one, page = wrapped(resource_view(kind))
    patch_model = _partial(kind.model)
    name = kind.name

    async def list_items(request: web.Request, query: Paging) -> web.Response:
        items, total = await request.app[RESOURCES].list(
            request.match_info["account_id"], name, query.limit, query.offset)
        return json_response({"data": items, "count": total, "limit": query.limit, "offset": query.offset})

    async def list_links(request: web.Request, query: LinkSearchQuery) -> web.Response:
        items, total = await organise.list_links(request.app[DB], request.match_info["account_id"], query.search(),
                                                 query.limit, query.offset)
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
    area = AREAS[kind.name]
    return [
        Endpoint("GET", collection, list_links if name == "links" else list_items,
                 "List links; q, tag, folder and utm_* search them" if name == "links" else f"List {label}s", segment,
                 query=LinkSearchQuery if name == "links" else Paging,
                 response=page, security="admin", permission=f"{area}:read", errors=ERRORS),
        Endpoint("POST", collection, create_item, f"Create a {label}", segment, body=kind.model,
                 response=one, status=201, security="admin", permission=f"{area}:write", errors=ERRORS, raw_body=True),
        Endpoint("GET", item, get_item, f"Read a {label}", segment, response=one,
                 security="admin", permission=f"{area}:read", errors=ERRORS),
        Endpoint("PUT", item, replace_item, f"Replace a {label}", segment, body=kind.model,
                 response=one, security="admin", permission=f"{area}:write", errors=ERRORS, raw_body=True),
        Endpoint("PATCH", item, patch_item, f"Change some fields of a {label}", segment, body=patch_model,
                 response=one, security="admin", permission=f"{area}:write", errors=ERRORS, raw_body=True),
        Endpoint("DELETE", item, delete_item, f"Delete a {label}", segment, status=204,
                 security="admin", permission=f"{area}:write", errors=ERRORS),
    ]
