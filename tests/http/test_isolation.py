"""Tenant isolation: a token of account A reaches nothing of account B, through any storefront route.

The routes are read from the storefront's own endpoint table, so a route added later is walked too.
"""

from __future__ import annotations

import re

import pytest
from aiohttp.test_utils import TestClient

from api.storefront import ENDPOINTS
from tests.conftest import bearer, token_for
from tests.factories import A, B, account_doc, ids

BEARER_ROUTES = [e for e in ENDPOINTS if e.security == "bearer"]


def _fingerprints(account_id: str) -> set[str]:
    """Strings that can only come from this account's data."""
    doc = account_doc(account_id, "sandbox")
    found = set(ids(account_id).values()) | {account_id}
    found |= {b["name"] for b in doc["brands"]}
    found |= {c["email"] for c in doc["contacts"]}
    return found


def _fill(path: str, account_id: str) -> str:
    # Path parameters get ids of the *other* account: they must not be found.
    return re.sub(r"{\w+}", ids(account_id)["customers"], path)


@pytest.mark.parametrize("endpoint", BEARER_ROUTES, ids=lambda e: f"{e.method} {e.path}")
async def test_token_of_a_sees_nothing_of_b(seeded: TestClient, endpoint) -> None:
    token = await token_for(seeded, A)
    path = "/api/storefront/v1" + _fill(endpoint.path, B)
    response = await seeded.request(endpoint.method, path, headers={**bearer(token), "x-account-id": A}, json={})
    text = await response.text()
    assert response.status < 500
    for secret in _fingerprints(B):
        assert secret not in text, f"{endpoint.method} {endpoint.path} leaked {secret}"


@pytest.mark.parametrize("endpoint", BEARER_ROUTES, ids=lambda e: f"{e.method} {e.path}")
async def test_claiming_another_account_is_forbidden(seeded: TestClient, endpoint) -> None:
    token = await token_for(seeded, A)
    path = "/api/storefront/v1" + _fill(endpoint.path, A)
    response = await seeded.request(endpoint.method, path, headers={**bearer(token), "x-account-id": B}, json={})
    assert response.status == 403


async def test_each_account_sees_its_own_catalog(seeded: TestClient) -> None:
    for own, other in ((A, B), (B, A)):
        token = await token_for(seeded, own)
        for resource in ("brands", "tiers"):
            body = await (await seeded.get(f"/api/storefront/v1/{resource}", headers=bearer(token))).json()
            assert [item["id"] for item in body["data"]] == [ids(own)[resource]]
            assert ids(other)[resource] not in str(body)
