"""POST /auth/totp and /auth/totp/verify over HTTP."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import TestClient

from api.storefront.schemas import TotpCode
from tests.conftest import bearer, token_for
from tests.factories import A, B

TOTP = "/api/storefront/v1/auth/totp"


@pytest.fixture
async def headers(seeded: TestClient) -> dict[str, str]:
    return bearer(await token_for(seeded, A, "CLIENT"))


@pytest.mark.parametrize(
    "body",
    [{"customer_id": "cust-aaaa"}, {"document_number": "CC100"}, {"phone": "+57 300 123 4567"},
     {"phone": "573001234567"}],
)
async def test_issue_and_verify(seeded: TestClient, headers, body) -> None:
    issued = await seeded.post(TOTP, json=body, headers=headers)
    assert issued.status == 200, await issued.text()
    data = (await issued.json())["data"]
    assert set(data) == {"code", "expired_at", "seconds_left"}
    TotpCode.model_validate(data)
    assert len(data["code"]) == 6 and data["code"].isdigit()
    assert 0 <= data["seconds_left"] <= 300
    check = {"customer_id": "cust-aaaa", "code": data["code"]}
    first = await seeded.post(f"{TOTP}/verify", json=check, headers=headers)
    assert (await first.json()) == {"data": {"valid": True}}
    second = await seeded.post(f"{TOTP}/verify", json=check, headers=headers)
    assert (await second.json()) == {"data": {"valid": False}}


async def test_attempt_limit_answers_429(seeded: TestClient, headers) -> None:
    code = (await (await seeded.post(TOTP, json={"customer_id": "cust-aaaa"}, headers=headers)).json())["data"]["code"]
    wrong = "000000" if code != "000000" else "111111"
    answers = []
    for _ in range(6):
        response = await seeded.post(f"{TOTP}/verify", json={"customer_id": "cust-aaaa", "code": wrong},
                                     headers=headers)
        answers.append(response.status)
    # Five wrong tries are answered; the sixth is refused until the step ends (unless a step boundary
    # passed during the loop, which restarts the count).
    assert answers[:5] == [200] * 5
    assert answers[5] in (429, 200)
    if answers[5] == 429:
        assert 1 <= int(response.headers["Retry-After"]) <= 300


@pytest.mark.parametrize(
    "body",
    [{}, {"customer_id": ""}, {"phone": "123"}, {"customer_id": "cust-aaaa", "extra": 1}, {"customer_id": 5}],
)
async def test_issue_refuses_bad_bodies(seeded: TestClient, headers, body) -> None:
    response = await seeded.post(TOTP, json=body, headers=headers)
    assert response.status == 400
    assert set(await response.json()) == {"error", "details"}


@pytest.mark.parametrize("code", ["12345", "1234567", "abcdef", "", 123456])
async def test_verify_refuses_malformed_codes(seeded: TestClient, headers, code) -> None:
    response = await seeded.post(f"{TOTP}/verify", json={"customer_id": "cust-aaaa", "code": code}, headers=headers)
    assert response.status == 400


async def test_customers_of_other_accounts_are_not_found(seeded: TestClient, headers) -> None:
    for body in ({"customer_id": "cust-bbbb"}, {"customer_id": "nobody"}):
        assert (await seeded.post(TOTP, json=body, headers=headers)).status == 404
    response = await seeded.post(f"{TOTP}/verify", json={"customer_id": "cust-bbbb", "code": "123456"},
                                 headers=headers)
    assert response.status == 404
    # B's own token reaches B's customer.
    other = bearer(await token_for(seeded, B))
    assert (await seeded.post(TOTP, json={"customer_id": "cust-bbbb"}, headers=other)).status == 200
