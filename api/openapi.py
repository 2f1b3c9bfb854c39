"""OpenAPI 3.1 documents built from the endpoint declarations and their pydantic models."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, models_json_schema

from api.glossary import EXAMPLES, described
from api.routing import Endpoint, Header
from api.schemas import Error
from linksvc.resources.types import decimal_to_json

_PATH_PARAM = re.compile(r"{(\w+)}")

SECURITY_SCHEMES = {
    "bearer": {"type": "http", "scheme": "bearer", "description": "an access token from GET /auth/authorize"},
    "api_key": {"type": "apiKey", "in": "header", "name": "x-api-key"},
    "admin": {"type": "http", "scheme": "bearer", "description": "the admin token (LINKSVC_ADMIN_TOKEN)"},
    "feed_ticket": {"type": "apiKey", "in": "query", "name": "ticket",
                    "description": "a ticket from POST /accounts/{account_id}/feed/tickets: the live feed only"},
}
# The path parameters, by name.
PATH_PARAMETERS = {
    "account_id": "the account's id", "id": "the object's id", "event_id": "the event's id",
    "person_id": "the person's id", "key_id": "the API key's id", "token_id": "the personal token's id",
    "domain_id": "the custom domain's id", "delivery_id": "the delivery's id", "invitation_id": "the invitation's id",
    "code": "the link's short code", "customer_id": "the customer's id", "tag": "the tag's name",
    "replay_id": "the replay's id",
}
_NOUN_SUFFIX = re.compile(r"(Patch|View|Envelope|ListEnvelope|Page|-Input|-Output)$")
_STATUS_TEXT = {
    200: "OK", 201: "Created", 202: "Accepted", 204: "No content", 400: "Invalid request",
    401: "Missing, malformed, unknown or expired credentials", 403: "Not allowed for these credentials",
    404: "Not found", 408: "The request took longer than the service's request timeout; nothing was stored",
    409: "Conflict", 413: "Body too large", 415: "The body's Content-Encoding is not identity, gzip or deflate",
    429: "Rate limit exceeded",
    503: "The store cannot take the request now (busy or unavailable); nothing was stored: retry after Retry-After",
}


class SchemaGenerator(GenerateJsonSchema):
    """pydantic's JSON Schema, with a Decimal default written as the number the API reads and writes (``0``, not
    the string ``"0"`` pydantic writes in validation mode, which a ``type: number`` schema refuses)."""

    def encode_default(self, dft: Any) -> Any:
        if isinstance(dft, Decimal):
            return decimal_to_json(dft)
        return super().encode_default(dft)


def _not_null(schema: dict[str, Any]) -> dict[str, Any]:
    """A query parameter's schema without ``null``: a query string has no null (a parameter is given or not), and
    ``anyOf: [X, null]`` makes generated clients name X ``...Type0``."""
    members = schema.get("anyOf")
    if not isinstance(members, list):
        return schema
    kept = [member for member in members if member != {"type": "null"}]
    if len(kept) != 1:
        return schema
    rest = {key: value for key, value in schema.items() if key != "anyOf" and not (key == "default" and value is None)}
    return {**kept[0], **rest}


def noun(schema_name: str) -> str:
    """The domain noun a schema describes: ``LinkView``, ``LinkPatch`` and ``LinkEnvelope`` are all ``Link``."""
    return _NOUN_SUFFIX.sub("", schema_name)


def _describe_properties(schemas: dict[str, Any]) -> None:
    """Each property its model left undescribed gets the shared description of its name (``api.glossary``)."""
    for name, schema in schemas.items():
        for field, member in schema.get("properties", {}).items():
            if not member.get("description"):
                text = described(noun(name), field)
                if text:
                    member["description"] = text
            if "examples" not in member and field in EXAMPLES and "$ref" not in member:
                member["examples"] = EXAMPLES[field]


def _query_parameters(model: type[BaseModel], defs: dict[str, Any]) -> list[dict[str, Any]]:
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}", schema_generator=SchemaGenerator)
    defs.update(schema.get("$defs", {}))
    required = set(schema.get("required", []))
    params = []
    for name, prop in schema.get("properties", {}).items():
        param: dict[str, Any] = {"name": name, "in": "query", "required": name in required,
                                 "schema": _not_null(prop)}
        description = prop.get("description") or described(noun(model.__name__), name)
        if description:
            param["description"] = description
        params.append(param)
    return params


REF_PREFIX = "#/components/schemas/"
# A body that is not JSON (an image, a CSV file): bytes of the media type named, which clients read as a file.
BINARY = {"schema": {"type": "string", "format": "binary"}}


def _named_by_title(document: dict[str, Any]) -> dict[str, Any]:
    """Components named by their model's title where pydantic names them by their generic origin
    (``Envelope_LinkView_`` → ``LinkEnvelope``, see ``api.schemas.Envelope.model_parametrized_name``): the names a
    generated client's classes take. A title another component already holds is left alone."""
    schemas = document["components"]["schemas"]
    titles = [schema.get("title") for schema in schemas.values()]
    renamed = {name: schema["title"] for name, schema in schemas.items()
               if isinstance(schema.get("title"), str) and schema["title"] != name
               and schema["title"] not in schemas and titles.count(schema["title"]) == 1}

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            out = {key: walk(value) for key, value in node.items()}
            ref = out.get("$ref")
            if isinstance(ref, str) and ref.startswith(REF_PREFIX) and ref[len(REF_PREFIX):] in renamed:
                out["$ref"] = REF_PREFIX + renamed[ref[len(REF_PREFIX):]]
            return out
        if isinstance(node, list):
            return [walk(value) for value in node]
        return node

    document = walk(document)
    document["components"]["schemas"] = {renamed.get(name, name): schema
                                         for name, schema in document["components"]["schemas"].items()}
    return document


@dataclass(frozen=True)
class Webhooks:
    """The requests the service sends (OpenAPI 3.1 ``webhooks``): each kind's body model, and the headers every
    one carries."""

    bodies: dict[str, type[BaseModel]]
    headers: tuple[Header, ...]
    description: str = ""


def _webhook_items(webhooks: Webhooks, refs: dict[Any, Any]) -> dict[str, Any]:
    return {kind: {"post": {
        "operationId": "webhook_" + re.sub(r"\W+", "_", kind),
        "summary": (body.__doc__ or kind).strip(),
        "description": webhooks.description,
        "tags": ["webhooks"],
        "parameters": [{"name": h.name, "in": "header", "required": h.required, "description": h.description,
                        "schema": {"type": "string"}} for h in webhooks.headers],
        "requestBody": {"required": True, "description": f"the `{kind}` webhook's body",
                        "content": {"application/json": {"schema": refs[(body, "serialization")]}}},
        "responses": {"2XX": {"description": "received: any 2xx ends the delivery; anything else, or no answer, "
                                             "is tried again later"}},
    }} for kind, body in webhooks.bodies.items()}


_MODEL_TITLE = re.compile(r"^[A-Z][A-Za-z0-9]*$")


def _hoisted(schemas: dict[str, Any]) -> dict[str, Any]:
    """A model's schema that a hook wrote inline (``Connection.config``'s destinations' models) becomes a component
    of its own, referred to by its title, as pydantic does for a field's model: one class in a generated client."""
    found: dict[str, Any] = {}

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            title = node.get("title")
            if isinstance(title, str) and _MODEL_TITLE.match(title) and "properties" in node and title not in schemas:
                found[title] = {key: walk(value) for key, value in node.items()}
                return {"$ref": REF_PREFIX + title}
            return {key: walk(value) for key, value in node.items()}
        if isinstance(node, list):
            return [walk(value) for value in node]
        return node

    out = {name: {key: walk(value) for key, value in schema.items()} for name, schema in schemas.items()}
    return {**out, **found}


_BUILT: dict[tuple[str, str, str, tuple[int, ...]], dict[str, Any]] = {}


def openapi_document(title: str, version: str, base_path: str, endpoints: list[Endpoint],
                     webhooks: Webhooks | None = None) -> dict[str, Any]:
    """:func:`build_openapi`, built once per process for the same declarations and shared by every app made
    from them: the document depends only on the code, and pydantic takes a few tenths of a second to write
    the schemas (every ``create_app`` paid it, each worker and each test). Read-only: nothing changes it."""
    key = (title, version, base_path, tuple(id(endpoint) for endpoint in endpoints))
    if key not in _BUILT:
        _BUILT[key] = build_openapi(title, version, base_path, endpoints, webhooks)
    return _BUILT[key]


def build_openapi(title: str, version: str, base_path: str, endpoints: list[Endpoint],
                  webhooks: Webhooks | None = None) -> dict[str, Any]:
    wanted: list[tuple[type[BaseModel], Any]] = [(Error, "serialization")]
    if webhooks is not None:
        wanted += [(body, "serialization") for body in webhooks.bodies.values()]
    for endpoint in endpoints:
        if endpoint.body is not None:
            wanted.append((endpoint.body, "validation"))
        if endpoint.response is not None:
            wanted.append((endpoint.response, "serialization"))
    refs, top = models_json_schema(wanted, ref_template="#/components/schemas/{model}",
                                     schema_generator=SchemaGenerator)
    defs: dict[str, Any] = _hoisted(dict(top.get("$defs", {})))
    error_ref = refs[(Error, "serialization")]
    paths: dict[str, dict[str, Any]] = {}
    for endpoint in endpoints:
        op: dict[str, Any] = {
            "operationId": re.sub(r"\W+", "_", f"{endpoint.method.lower()} {endpoint.path}").strip("_"),
            "summary": endpoint.summary,
            "tags": [endpoint.tag],
            "parameters": [
                {"name": name, "in": "path", "required": True, "schema": {"type": "string"},
                 "description": PATH_PARAMETERS.get(name, "")}
                for name in _PATH_PARAM.findall(endpoint.path)
            ],
            "responses": {},
        }
        if endpoint.query is not None:
            op["parameters"] += _query_parameters(endpoint.query, defs)
        for header in endpoint.headers:
            op["parameters"].append({"name": header.name, "in": "header", "required": header.required,
                                     "description": header.description, "schema": {"type": "string"}})
        if endpoint.body is not None:
            op["requestBody"] = {"required": True, "content": {
                "application/json": {"schema": refs[(endpoint.body, "validation")]}}}
        success: dict[str, Any] = {"description": _STATUS_TEXT.get(endpoint.status, "OK")}
        if endpoint.response is not None:  # and other media types when a query asks for them (CSV)
            success["content"] = {"application/json": {"schema": refs[(endpoint.response, "serialization")]},
                                  **{media_type: BINARY for media_type in endpoint.media_types}}
        elif endpoint.media_types:
            success["content"] = {media_type: BINARY for media_type in endpoint.media_types}
        elif endpoint.status != 204:
            success["content"] = {"application/json": {"schema": {"type": "object"}}}
        op["responses"][str(endpoint.status)] = success
        errors = set(endpoint.errors)
        if endpoint.query is not None or endpoint.body is not None or endpoint.headers:
            errors.add(400)
        if endpoint.body is not None:
            errors.update((413, 415))
        if endpoint.security is not None:
            errors.add(401)  # no credentials, or ones that are unknown, expired or revoked
        errors.update((408, 503))  # every route: the request timeout, and a store that cannot take it
        if endpoint.security in ("admin", "api_key"):
            errors.add(429)  # too many failed credential attempts from the client's address
        if endpoint.security == "admin":
            errors.add(403)  # the route's permission is not granted (the role, or a personal token's role)
        for status in sorted(errors):
            op["responses"][str(status)] = {
                "description": _STATUS_TEXT.get(status, "Error"),
                "content": {"application/json": {"schema": error_ref}},
            }
        if endpoint.security is not None:
            op["security"] = [{endpoint.security: []}, *([{"feed_ticket": []}] if endpoint.tickets else [])]
        if endpoint.security == "admin":
            # The permission the route needs (docs/decisions.md, "People and roles"): "operator", "self", or
            # "<area>:read|write" of the account its path names; the route-and-role test reads it from here.
            op["x-permission"] = endpoint.permission
            op["description"] = f"Needs the permission `{endpoint.permission}`."
        op["description"] = ((endpoint.description or endpoint.summary + ".") + " " + op.get("description", "")).strip()
        paths.setdefault(endpoint.path, {})[endpoint.method.lower()] = op
    _describe_properties(defs)
    used = {e.security for e in endpoints if e.security} | ({"feed_ticket"} if any(e.tickets for e in endpoints)
                                                              else set())
    return _named_by_title({
        **({"webhooks": _webhook_items(webhooks, refs)} if webhooks is not None else {}),
        "openapi": "3.1.0",
        "info": {"title": title, "version": version},
        "servers": [{"url": base_path}],
        "paths": paths,
        "components": {
            "schemas": defs,
            "securitySchemes": {name: SECURITY_SCHEMES[name] for name in sorted(used)},
        },
    })
