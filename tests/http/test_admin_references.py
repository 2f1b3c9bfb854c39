"""Deleting a resource that others still refer to is refused; once they let go, it can be deleted."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import TestClient

from tests.conftest import ADMIN
from tests.factories import A, ids

API = f"/api/admin/v1/accounts/{A}"


@pytest.mark.parametrize(
    ("kind", "users"),
    [("brands", "campaigns"), ("rewards", "wallet lines"), ("campaigns", "links")],
)
async def test_delete_in_use_is_409(seeded: TestClient, kind: str, users: str) -> None:
    link = await seeded.patch(f"{API}/links/{ids(A)['links']}", json={"campaign_id": ids(A)["campaigns"]},
                              headers=ADMIN)
    assert link.status == 200
    response = await seeded.delete(f"{API}/{kind}/{ids(A)[kind]}", headers=ADMIN)
    assert response.status == 409
    body = await response.json()
    assert users in body["details"]
    assert (await seeded.get(f"{API}/{kind}/{ids(A)[kind]}", headers=ADMIN)).status == 200


async def test_tier_in_use_by_a_customer(seeded: TestClient) -> None:
    customer = ids(A)["customers"]
    tier = ids(A)["tiers"]
    assert (await seeded.patch(f"{API}/customers/{customer}", json={"tier_id": tier}, headers=ADMIN)).status == 200
    assert (await seeded.delete(f"{API}/tiers/{tier}", headers=ADMIN)).status == 409
    assert (await seeded.patch(f"{API}/customers/{customer}", json={"tier_id": None}, headers=ADMIN)).status == 200
    assert (await seeded.delete(f"{API}/tiers/{tier}", headers=ADMIN)).status == 204


async def test_brand_can_go_once_no_campaign_uses_it(seeded: TestClient) -> None:
    campaign = ids(A)["campaigns"]
    assert (await seeded.patch(f"{API}/campaigns/{campaign}", json={"brand_id": None}, headers=ADMIN)).status == 200
    assert (await seeded.delete(f"{API}/brands/{ids(A)['brands']}", headers=ADMIN)).status == 204
