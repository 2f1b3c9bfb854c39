"""GET /brands and GET /tiers: the token account's catalog, in the shapes of the specification."""

from aiohttp.test_utils import TestClient

from tests.conftest import bearer, token_for
from tests.factories import A


async def test_brands_of_the_token_account(seeded: TestClient) -> None:
    token = await token_for(seeded, A)
    response = await seeded.get("/api/storefront/v1/brands", headers=bearer(token))
    assert response.status == 200
    body = await response.json()
    assert [b["name"] for b in body["data"]] == ["Brand of aaaa"]


async def test_brand_and_tier_shapes_are_the_spec_tables(seeded: TestClient) -> None:
    token = await token_for(seeded, A)
    brands = await (await seeded.get("/api/storefront/v1/brands", headers=bearer(token))).json()
    tiers = await (await seeded.get("/api/storefront/v1/tiers", headers=bearer(token))).json()
    assert set(brands) == {"data"} and set(tiers) == {"data"}
    assert [set(b) for b in brands["data"]] == [{"id", "name", "status"}]
    assert [set(t) for t in tiers["data"]] == [
        {"id", "name", "description", "status", "level", "entry_conditions", "exit_conditions"}
    ]
