"""Every error path under /api/ answers ``{error, details}`` with the right status, and nothing a client
sends produces a 500. The bodies walk every endpoint that takes one, read from the endpoint tables."""

from __future__ import annotations

import re

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from api import admin, storefront
from api.routing import Endpoint
from linksvc.app import create_app
from linksvc.settings import Settings
from tests.conftest import ADMIN, bearer, service_server, token_for
from tests.factories import A, ids


async def _assert_error(response: web.Response, status: int) -> dict:
    assert response.status == status, await response.text()
    assert response.headers["Content-Type"].startswith("application/json")
    body = await response.json()
    assert set(body) == {"error", "details"}
    assert isinstance(body["error"], str) and body["error"]
    assert isinstance(body["details"], str | dict)
    return body


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/api/", 404),
        ("GET", "/api/nothing", 404),
        ("GET", "/api/storefront/v1/nothing", 404),
        ("GET", "/api/storefront/v2/brands", 404),
        ("GET", "/api/admin/v1/nothing", 404),
        ("POST", "/api/storefront/v1/brands", 405),
        ("DELETE", "/api/storefront/v1/auth/authorize", 405),
        ("PUT", "/api/admin/v1/accounts", 405),
        ("POST", "/api/admin/v1/openapi.json", 405),
        # Outside the APIs too: a path no route serves, or a method the route does not take.
        ("GET", "/foo/bar", 404),
        ("GET", "/.well-known/nothing", 404),
        ("GET", "/a/b/c", 404),
        ("POST", "/healthz", 405),
    ],
)
async def test_unknown_routes_and_methods(client: TestClient, method: str, path: str, status: int) -> None:
    body = await _assert_error(await client.request(method, path), status)
    assert path in body["details"]


async def test_405_names_the_allowed_methods(client: TestClient) -> None:
    response = await client.post("/api/storefront/v1/brands")
    assert "GET" in response.headers["Allow"]


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        (b"{bad", "Malformed JSON"),
        (b"", "Malformed JSON"),
        (b"   ", "Malformed JSON"),
        (b"\xff\xfe\x00", "Malformed JSON"),
        (b'{"name": "x",}', "Malformed JSON"),
        (b"[" * 100_000, "Malformed JSON"),
        (b"[]", "Invalid body"),
        (b"null", "Invalid body"),
        (b'"text"', "Invalid body"),
        (b"12", "Invalid body"),
        (b'{"name": 1e999}', "Malformed JSON"),
        (b'{"name": ""}', "Invalid body"),
        (b'{"name": "ok", "unknown": 1}', "Invalid body"),
    ],
)
async def test_bad_bodies(client: TestClient, raw: bytes, error: str) -> None:
    headers = {**ADMIN, "Content-Type": "application/json"}
    response = await client.post("/api/admin/v1/accounts", data=raw, headers=headers)
    body = await _assert_error(response, 400)
    assert body["error"] == error


async def test_validation_names_the_field(client: TestClient) -> None:
    response = await client.post("/api/admin/v1/accounts", json={"name": "x", "environment": "staging"}, headers=ADMIN)
    body = await _assert_error(response, 400)
    assert body["details"]["field"] == "environment"


@pytest.mark.parametrize(
    "query", ["limit=abc", "limit=0", "limit=100000", "offset=-1", "limit=1&limit=2", "offset=1.5", "limit="]
)
async def test_bad_query(client: TestClient, query: str) -> None:
    await _assert_error(await client.get(f"/api/admin/v1/accounts?{query}", headers=ADMIN), 400)


async def test_unknown_query_parameters_are_ignored(client: TestClient) -> None:
    response = await client.get("/api/admin/v1/accounts?_=1700000000&utm_source=x", headers=ADMIN)
    assert response.status == 200


async def test_body_over_the_limit_is_413(aiohttp_client, tmp_path) -> None:
    settings = Settings(db_path=str(tmp_path / "t.db"), admin_token="adm-token-0123456789", load_demo=False,
                        max_body_bytes=1000, max_bulk_body_bytes=5000)
    client = await aiohttp_client(service_server(create_app(settings)))
    headers = {"Authorization": "Bearer adm-token-0123456789", "Content-Type": "application/json"}
    big = b'{"name": "' + b"x" * 2000 + b'"}'
    await _assert_error(await client.post("/api/admin/v1/accounts", data=big, headers=headers), 413)

    async def chunks():
        yield big[:1000]
        yield big[1000:]

    # Without Content-Length (chunked): refused after reading, still 413.
    await _assert_error(await client.post("/api/admin/v1/accounts", data=chunks(), headers=headers), 413)
    # Past the app-wide ceiling aiohttp itself refuses; the shape is the same.
    huge = b'{"name": "' + b"x" * 6000 + b'"}'
    await _assert_error(await client.post("/api/admin/v1/accounts", data=huge, headers=headers), 413)


async def test_auth_errors_have_the_shape(seeded: TestClient) -> None:
    await _assert_error(await seeded.get("/api/storefront/v1/brands"), 401)
    await _assert_error(await seeded.get("/api/storefront/v1/auth/authorize"), 401)
    await _assert_error(await seeded.get("/api/admin/v1/accounts"), 401)
    token = await token_for(seeded, A)
    await _assert_error(await seeded.get("/api/storefront/v1/brands",
                                         headers={**bearer(token), "x-account-id": "other"}), 403)


async def test_not_found_and_conflict(seeded: TestClient) -> None:
    await _assert_error(await seeded.get(f"/api/admin/v1/accounts/{A}/brands/nope", headers=ADMIN), 404)
    await _assert_error(await seeded.get("/api/admin/v1/accounts/nope", headers=ADMIN), 404)
    again = {"id": ids(A)["brands"], "name": "Copy"}
    await _assert_error(await seeded.post(f"/api/admin/v1/accounts/{A}/brands", json=again, headers=ADMIN), 409)


NASTY_BODIES: list[object] = [
    None, [], "x", 0, True, {}, {"id": 5}, {"id": "not-a-uuid"}, {"id": None},
    {"name": None}, {"name": ["x"]}, {"name": {"$gt": ""}}, {"name": "x" * 10_000},
    {"name": "\u0000\ud7ff"}, {"config": "x"}, {"wallet": {"lines": [{"amount": "NaN"}]}},
    {"attributes": {"conditions": "x"}}, {"type": "BEHAVIOR", "name": "x", "attributes": {"conditions": [[1]]}},
    {"kind": "email", "destination_url": "javascript:alert(1)"}, {"level": True, "name": "x"},
    {"amount": 1e308, "reward_id": None}, {"stores": [None]}, {"code": "../../etc"},
]


def _bodied(endpoints: list[Endpoint]) -> list[Endpoint]:
    return [e for e in endpoints if e.body is not None]


@pytest.mark.parametrize(
    "endpoint", _bodied(admin.ENDPOINTS) + _bodied(storefront.ENDPOINTS), ids=lambda e: f"{e.method} {e.path}"
)
async def test_no_body_makes_a_500(seeded: TestClient, endpoint: Endpoint) -> None:
    prefix = admin.PREFIX if endpoint in admin.ENDPOINTS else storefront.PREFIX
    token = await token_for(seeded, A)
    headers = ADMIN if endpoint.security == "admin" else bearer(token)
    path = prefix + re.sub(r"{id}", ids(A)["brands"], re.sub(r"{account_id}", A, endpoint.path))
    path = path.replace("{key_id}", "nope")
    for body in NASTY_BODIES:
        response = await seeded.request(endpoint.method, path, json=body, headers=headers)
        assert response.status < 500, (body, await response.text())
        if response.status >= 400:
            await _assert_error(response, response.status)
