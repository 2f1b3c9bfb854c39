from aiohttp.test_utils import TestClient

from tests.conftest import bearer, token_for
from tests.factories import A


async def test_brands_of_the_token_account(seeded: TestClient) -> None:
    token = await token_for(seeded, A)
    response = await seeded.get("/api/storefront/v1/brands", headers=bearer(token))
    assert response.status == 200
    body = await response.json()
    assert [b["name"] for b in body["data"]] == ["Brand of aaaa"]
