"""The OpenAPI documents list exactly the routes the apps register, and every reference in them resolves."""

from __future__ import annotations

import re
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestClient
from openapi_spec_validator import validate

DOCUMENTS = {
    "/api/storefront/v1": "/api/storefront/v1/openapi.json",
    "/api/admin/v1": "/api/admin/v1/openapi.json",
}
METHODS = {"get", "put", "post", "delete", "patch", "head", "options"}


def registered_routes(app: web.Application, prefix: str) -> set[tuple[str, str]]:
    """(method, path below the prefix) of every route the application registers under ``prefix``."""
    return {(route.method.lower(), route.resource.canonical.removeprefix(prefix))
            for route in app.router.routes()
            if route.resource is not None and route.resource.canonical.startswith(prefix + "/")}


def documented_routes(document: dict[str, Any]) -> set[tuple[str, str]]:
    return {(method, path) for path, ops in document["paths"].items() for method in ops if method in METHODS}


def refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [r for value in node.values() for r in refs(value)]
    if isinstance(node, list):
        return [r for value in node for r in refs(value)]
    return []


async def test_each_document_lists_every_registered_route(client: TestClient) -> None:
    for prefix, url in DOCUMENTS.items():
        response = await client.get(url)  # no credentials: the documents are public
        assert response.status == 200, url
        assert response.content_type == "application/json"
        document = await response.json()
        assert document["openapi"].startswith("3.")
        assert document["servers"] == [{"url": prefix}]
        registered = registered_routes(client.app, prefix)
        assert registered, prefix
        assert documented_routes(document) == registered, url


async def test_documents_are_consistent(client: TestClient) -> None:
    for url in DOCUMENTS.values():
        document = await (await client.get(url)).json()
        schemas = document["components"]["schemas"]
        schemes = document["components"]["securitySchemes"]
        for ref in refs(document):
            assert ref.startswith("#/components/schemas/"), ref
            assert ref.removeprefix("#/components/schemas/") in schemas, ref
        operation_ids = []
        for path, ops in document["paths"].items():
            for method, op in ops.items():
                where = f"{method.upper()} {path}"
                operation_ids.append(op["operationId"])
                declared = {p["name"] for p in op["parameters"] if p["in"] == "path"}
                assert declared == set(re.findall(r"{(\w+)}", path)), where
                assert any(status.startswith("2") for status in op["responses"]), where
                for requirement in op.get("security", []):
                    assert set(requirement) <= set(schemes), where
                if method in ("post", "put", "patch") and "requestBody" in op:
                    assert "400" in op["responses"] and "413" in op["responses"], where
        assert len(operation_ids) == len(set(operation_ids)), url


async def test_admin_operations_require_the_admin_token(client: TestClient) -> None:
    document = await (await client.get(DOCUMENTS["/api/admin/v1"])).json()
    unprotected = {(method, path) for path, ops in document["paths"].items() for method, op in ops.items()
                   if op.get("security") != [{"admin": []}]}
    # The live feed takes the admin credentials or a feed ticket (a browser's EventSource sends no header).
    feed = document["paths"]["/accounts/{account_id}/feed"]["get"]["security"]
    assert feed == [{"admin": []}, {"feed_ticket": []}]
    unprotected.discard(("get", "/accounts/{account_id}/feed"))
    # The pages of the one-time links take the link's token (an invitation, a password reset) instead.
    assert unprotected == {("get", "/openapi.json"), ("post", "/invitations/accept"),
                           ("post", "/password-resets/accept")}
    kinds = ["brands", "tiers", "rewards", "campaigns", "contacts", "customers", "custom-event-types",
             "connections", "links"]
    for kind in kinds:
        collection, item = f"/accounts/{{account_id}}/{kind}", f"/accounts/{{account_id}}/{kind}/{{id}}"
        assert set(document["paths"][collection]) == {"get", "post"}, kind
        assert set(document["paths"][item]) == {"get", "put", "patch", "delete"}, kind


async def test_documents_are_valid_openapi_3_1(client: TestClient) -> None:
    for url in DOCUMENTS.values():
        document = await (await client.get(url)).json()
        validate(document)  # raises, naming the place, on anything OpenAPI 3.1 does not allow
        assert document["openapi"] == "3.1.0"


def undescribed(document: dict[str, Any]) -> list[str]:
    """Every operation, parameter, request body, response and schema property without a description."""
    missing = []
    items = [(f"{method.upper()} {path}", op) for path, ops in document["paths"].items() for method, op in ops.items()]
    items += [(f"webhook {kind}", op) for kind, ops in document.get("webhooks", {}).items() for op in ops.values()]
    for where, op in items:
        if not op.get("description") or not op.get("summary"):
            missing.append(where)
        missing += [f"{where} parameter {p['name']}" for p in op["parameters"] if not p.get("description")]
        missing += [f"{where} {status}" for status, answer in op["responses"].items() if not answer.get("description")]
    for name, schema in document["components"]["schemas"].items():
        for prop, member in schema.get("properties", {}).items():
            if not member.get("description"):
                missing.append(f"{name}.{prop}")
    return missing


async def test_every_operation_parameter_and_field_is_described(client: TestClient) -> None:
    for url in DOCUMENTS.values():
        document = await (await client.get(url)).json()
        missing = undescribed(document)
        assert missing == [], "\n".join([url, *missing])


async def test_no_two_schemas_share_a_name(client: TestClient) -> None:
    """Two models of one name are published module-qualified (``api__links__fdl__ImportedRow``), and a client
    generator refuses the pair: every schema has a name of its own."""
    for url in DOCUMENTS.values():
        names = (await (await client.get(url)).json())["components"]["schemas"]
        assert [name for name in names if name.startswith("api__")] == [], url
