"""Every 401 and 403 of the storefront API (product decisions, section 2)."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import DB
from storage.db import dialect, fetch_one
from tests.conftest import ADMIN, bearer, token_for
from tests.factories import KEYS, A, B

AUTHORIZE = "/api/storefront/v1/auth/authorize"
BRANDS = "/api/storefront/v1/brands"


async def _error(response) -> dict:
    body = await response.json()
    assert set(body) == {"error", "details"}
    return body


async def test_token_from_each_key_kind(seeded: TestClient) -> None:
    for kind in ("SERVER", "CLIENT"):
        response = await seeded.get(AUTHORIZE, headers={"x-api-key": KEYS[(A, kind)]})
        assert response.status == 200
        assert response.headers["Cache-Control"] == "no-store"
        token = (await response.json())["data"]
        assert isinstance(token, str) and len(token) >= 43
        assert (await seeded.get(BRANDS, headers=bearer(token))).status == 200


async def test_each_authorize_gives_a_new_token(seeded: TestClient) -> None:
    assert await token_for(seeded, A) != await token_for(seeded, A)


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"x-api-key": ""},
        {"x-api-key": "   "},
        {"x-api-key": "lk_not_a_key_at_all_000000000000"},
        {"x-api-key": KEYS[(A, "SERVER")] + "x"},
    ],
    ids=["missing", "empty", "blank", "unknown", "altered"],
)
async def test_authorize_refuses_bad_keys(seeded: TestClient, headers: dict[str, str]) -> None:
    response = await seeded.get(AUTHORIZE, headers=headers)
    assert response.status == 401
    await _error(response)


async def test_api_key_is_not_a_bearer_token(seeded: TestClient) -> None:
    response = await seeded.get(BRANDS, headers=bearer(KEYS[(A, "SERVER")]))
    assert response.status == 401


@pytest.mark.parametrize(
    "authorization",
    [None, "", "Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "Bearer a b", "Token abc", "Bearer lt_unknown_token"],
    ids=["missing", "empty", "scheme-only", "scheme-space", "basic", "two-parts", "other-scheme", "unknown"],
)
async def test_bearer_refusals(seeded: TestClient, authorization: str | None) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    response = await seeded.get(BRANDS, headers=headers)
    assert response.status == 401
    await _error(response)


async def test_bearer_scheme_is_case_insensitive(seeded: TestClient) -> None:
    token = await token_for(seeded, A)
    assert (await seeded.get(BRANDS, headers={"Authorization": f"bearer {token}"})).status == 200


async def test_expired_token_is_refused(seeded: TestClient) -> None:
    token = await token_for(seeded, A)
    # Time passing, without sleeping: move every token's expiry into the past.
    async with seeded.app[DB].transaction() as tx:
        await tx.execute("UPDATE access_tokens SET expires_at = '2000-01-01T00:00:00.000000Z'")
    response = await seeded.get(BRANDS, headers=bearer(token))
    assert response.status == 401
    assert (await _error(response))["error"] == "Token expired"
    # A new token from the same key works.
    assert (await seeded.get(BRANDS, headers=bearer(await token_for(seeded, A)))).status == 200


async def test_token_lifetime_follows_the_setting(seeded: TestClient) -> None:
    await token_for(seeded, A)
    reader = seeded.app[DB].reader
    seconds = ("extract(epoch FROM expires_at::timestamptz - created_at::timestamptz)::float8"
               if dialect(reader) == "postgresql" else "(julianday(expires_at) - julianday(created_at)) * 86400")
    row = await fetch_one(reader, f"SELECT {seconds} FROM access_tokens")
    assert row is not None and abs(row[0] - 3600) < 1


async def test_revoking_a_key_stops_its_tokens_at_once(seeded: TestClient) -> None:
    token = await token_for(seeded, A)
    other = await token_for(seeded, A, "CLIENT")
    keys = await (await seeded.get(f"/api/admin/v1/accounts/{A}/api-keys", headers=ADMIN)).json()
    server_key = next(k for k in keys["data"] if k["kind"] == "SERVER")
    revoked = await seeded.delete(f"/api/admin/v1/accounts/{A}/api-keys/{server_key['id']}", headers=ADMIN)
    assert revoked.status == 200
    assert (await seeded.get(BRANDS, headers=bearer(token))).status == 401
    assert (await seeded.get(AUTHORIZE, headers={"x-api-key": KEYS[(A, "SERVER")]})).status == 401
    # The account's other key is untouched.
    assert (await seeded.get(BRANDS, headers=bearer(other))).status == 200


async def test_deleted_account_tokens_stop(seeded: TestClient) -> None:
    token = await token_for(seeded, B)
    assert (await seeded.delete(f"/api/admin/v1/accounts/{B}", headers=ADMIN)).status == 204
    assert (await seeded.get(BRANDS, headers=bearer(token))).status == 401


@pytest.mark.parametrize(
    ("claimed", "status"),
    [(A, 200), (A.upper(), 200), (B, 403), ("not-a-uuid", 403), ("", 403)],
    ids=["own", "own-upper", "other", "garbage", "empty"],
)
async def test_x_account_id_must_be_the_token_account(seeded: TestClient, claimed: str, status: int) -> None:
    token = await token_for(seeded, A)
    response = await seeded.get(BRANDS, headers={**bearer(token), "x-account-id": claimed})
    assert response.status == status
    if status == 403:
        assert (await _error(response))["error"] == "Account mismatch"


async def test_tokens_asked_for_at_once_are_each_issued(seeded: TestClient) -> None:
    # On PostgreSQL such requests conflict as not serializable: each is answered all the same.
    tokens = await asyncio.gather(*(token_for(seeded, A) for _ in range(25)))
    assert len(set(tokens)) == 25
    for token in tokens:
        assert (await seeded.get("/api/storefront/v1/brands", headers=bearer(token))).status == 200
