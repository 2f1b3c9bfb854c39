"""GET /customers and GET /contacts: every rule, the boundary values, the exact bodies of the spec."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import DB
from api.storefront.schemas import ContactOut, CustomerLookup
from linksvc.customers.service import MAX_LINES_WITH_CUSTOMER
from linksvc.seed import load_seed
from tests.conftest import bearer, token_for
from tests.factories import KEYS, A, B

REWARD = "aaaaaaaa-0003-4000-8000-000000000001"
LONG_DOC = "D" * 50
CONTACT_1 = "aaaaaaaa-0005-4000-8000-000000000001"


def seed_doc() -> dict[str, Any]:
    return {"accounts": [
        {"id": A, "name": "A", "api_keys": [{"kind": "SERVER", "key": KEYS[(A, "SERVER")]},
                                            {"kind": "CLIENT", "key": KEYS[(A, "CLIENT")]}],
         "rewards": [{"id": REWARD, "name": "Points", "attributes": {"conversion_factor": 0.01}}],
         "customers": [
             {"id": "ana", "name": "Ana", "document_number": "CC100", "phone": "+57 300 123 4567",
              "email": "ana@example.com", "external_id": "ext-ana",
              "wallet": {"lines": [
                  {"amount": 100, "reward_id": REWARD, "expiration_date": "2099-01-01T00:00:00Z"},
                  {"amount": 50.5, "reward_id": REWARD, "expiration_date": "2098-06-01T00:00:00Z"},
                  {"amount": 999, "reward_id": REWARD, "expiration_date": "2020-01-01T00:00:00Z"},
              ]}},
             {"id": "long-doc", "document_number": LONG_DOC, "phone": "1234567890"},
             {"id": "fifteen", "document_number": "F15", "phone": "+123 456 789 012 345"},
             {"id": "twin-1", "document_number": "T1", "phone": "+52-55-1234-5678"},
             {"id": "twin-2", "document_number": "T2", "phone": "525512345678"},
         ],
         "contacts": [
             {"id": CONTACT_1, "email": "Maria@Example.com", "document_number": "CC200", "document_type": "CC",
              "first_name": "María", "last_name": "Gómez", "second_last_name": "Ruiz", "dob": "1990-05-01",
              "phone": "+57 311 000 0000", "gender": "FEMALE", "country": "CO", "city": "Bogotá",
              "source": "web", "channel": "ecommerce", "external_id": "c-ext-1",
              "persona_id": "aaaaaaaa-0006-4000-8000-000000000001"},
             {"id": "aaaaaaaa-0005-4000-8000-000000000002", "email": "maria@example.com", "first_name": "Mario",
              "document_number": "CC201"},
             {"id": "aaaaaaaa-0005-4000-8000-000000000003", "email": "gone@example.com",
              "deleted_at": "2024-01-01T00:00:00Z"},
         ]},
        {"id": B, "name": "B", "api_keys": [{"kind": "SERVER", "key": KEYS[(B, "SERVER")]}],
         "customers": [{"id": "b-ana", "document_number": "CC100", "phone": "+57 300 123 4567"}],
         "contacts": [{"id": "bbbbbbbb-0005-4000-8000-000000000001", "email": "ana@b.example",
                       "document_number": "CC200"}]},
    ]}


@pytest.fixture
async def store(client: TestClient) -> tuple[TestClient, dict[str, str]]:
    await load_seed(client.app[DB], seed_doc(), allow_private=True)
    return client, bearer(await token_for(client, A))


async def lookup(store, query: str) -> tuple[int, Any]:
    client, headers = store
    response = await client.get(f"/api/storefront/v1/customers?{query}", headers=headers)
    return response.status, await response.json()


@pytest.mark.parametrize(
    ("query", "customer_id"),
    [
        ("document_number=CC100", "ana"),
        ("phone=573001234567", "ana"),
        ("phone=" + quote("+57 300 123 4567"), "ana"),
        ("phone=" + quote("+57-300-123-4567"), "ana"),
        ("phone=" + quote(" 57 300 1234567 "), "ana"),
        ("phone=" + quote("+57 (300) 123.4567"), "ana"),  # written the way phones are often stored
        ("document_number=CC100&phone=573001234567", "ana"),
        (f"document_number={LONG_DOC}", "long-doc"),  # 50 characters: allowed
        ("phone=1234567890", "long-doc"),  # 10 digits: allowed
        ("phone=123456789012345", "fifteen"),  # 15 digits: allowed
    ],
)
async def test_lookup_finds(store, query: str, customer_id: str) -> None:
    status, body = await lookup(store, query)
    assert status == 200, body
    assert body["data"]["customer_id"] == customer_id
    CustomerLookup.model_validate(body["data"])


@pytest.mark.parametrize(
    "query",
    [
        "",
        "document_number=",
        f"document_number={LONG_DOC}X",  # 51 characters
        "phone=123456789",  # 9 digits
        "phone=1234567890123456",  # 16 digits
        "phone=" + quote("+57 (300) 123"),  # 8 digits
        "phone=" + quote("+57 300 123 4567 ext"),
        "phone=" + quote("+57/300/123/4567"),
        "phone=57300abc4567",
        "phone=",
    ],
)
async def test_lookup_refuses(store, query: str) -> None:
    status, body = await lookup(store, query)
    assert status == 400
    assert set(body) == {"error", "details"} and isinstance(body["details"], str)


@pytest.mark.parametrize(
    "query",
    [
        "document_number=CC999",
        "document_number=cc100",  # exact match only
        "document_number=CC100&phone=1234567890",  # both must match
        "phone=3001234567",  # the digits as stored, country code included
    ],
)
async def test_lookup_not_found(store, query: str) -> None:
    status, body = await lookup(store, query)
    assert status == 404 and isinstance(body["details"], str)


async def test_ambiguous_phone_is_409_and_document_number_settles_it(store) -> None:
    status, body = await lookup(store, "phone=525512345678")
    assert status == 409 and isinstance(body["details"], str)
    status, body = await lookup(store, "phone=525512345678&document_number=T2")
    assert status == 200 and body["data"]["customer_id"] == "twin-2"


async def test_client_key_gets_403_before_validation(store) -> None:
    client, _ = store
    token = await token_for(client, A, "CLIENT")
    for query in ("document_number=CC100", "phone=1"):
        response = await client.get(f"/api/storefront/v1/customers?{query}", headers=bearer(token))
        assert response.status == 403
        assert set(await response.json()) == {"error", "details"}


async def test_lookup_stays_in_the_account(store) -> None:
    status, body = await lookup(store, "document_number=CC100")
    assert body["data"]["customer_id"] == "ana"
    client, _ = store
    other = bearer(await token_for(client, B))
    response = await client.get("/api/storefront/v1/customers?document_number=CC100", headers=other)
    assert (await response.json())["data"]["customer_id"] == "b-ana"


async def test_customer_shape_and_wallet(store) -> None:
    status, body = await lookup(store, "document_number=CC100")
    data = body["data"]
    assert set(data) == {"customer_id", "customer", "wallet"}
    assert set(data["customer"]) == {
        "id", "name", "email", "registration_date", "status", "is_anonymous", "phone_verified", "gender", "dob",
        "document_type", "document_number", "country", "phone", "tier_id", "tags", "metrics", "metadata", "consent",
    }
    wallet = data["wallet"]
    assert wallet["owner_id"] == "ana"
    assert sorted(line["amount"] for line in wallet["lines"]) == [50.5, 100]  # the expired line is gone
    [total] = wallet["totals"]
    assert total["total"] == 150.5
    assert total["expiration_date"] == "2098-06-01T00:00:00.000000Z"
    assert total["reward"]["id"] == REWARD and total["reward"]["attributes"]["conversion_factor"] == 0.01
    assert total["reward"]["account_id"] == A


CONTACTS = "/api/storefront/v1/contacts"


async def contacts(store, query: str, account: str | None = A) -> tuple[int, Any]:
    client, headers = store
    extra = {} if account is None else {"x-account-id": account}
    response = await client.get(f"{CONTACTS}?{query}", headers={**headers, **extra})
    return response.status, await response.json()


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (f"id={CONTACT_1}", [CONTACT_1]),
        ("email=maria@example.com", [CONTACT_1, "aaaaaaaa-0005-4000-8000-000000000002"]),
        ("email=MARIA@EXAMPLE.COM&first_name=Mar%C3%ADa", [CONTACT_1]),
        ("document_number=CC200", [CONTACT_1]),
        ("email=maria@example.com&phone=573110000000", [CONTACT_1]),
        ("email=maria@example.com&dob=1990-05-01", [CONTACT_1]),
        ("email=maria@example.com&last_name=G%C3%B3mez&second_last_name=Ruiz&document_type=CC&gender=FEMALE"
         "&country=CO&city=Bogot%C3%A1&source=web&channel=ecommerce&external_id=c-ext-1"
         "&persona_id=aaaaaaaa-0006-4000-8000-000000000001", [CONTACT_1]),
    ],
)
async def test_contact_search(store, query: str, expected: list[str]) -> None:
    status, body = await contacts(store, query)
    assert status == 200, body
    assert [c["id"] for c in body["data"]] == expected
    for contact in body["data"]:
        ContactOut.model_validate(contact)
        assert set(contact) == set(ContactOut.model_fields)


NOT_FOUND = {"error": "No contacts found", "details": "No contacts found"}


@pytest.mark.parametrize(
    "query",
    [
        "email=nobody@example.com",
        "email=maria@example.com&first_name=Nobody",
        "email=gone@example.com",  # deleted contacts are not returned
        "email=ana@b.example",  # another account's contact
        "id=not-a-uuid",
    ],
)
async def test_contact_not_found_body(store, query: str) -> None:
    status, body = await contacts(store, query)
    assert (status, body) == (404, NOT_FOUND)


VALIDATION = {
    "error": "Internal validation failed",
    "details": {"issues": [{
        "code": "custom",
        "message": "At least one of id, email or document_number is required",
        "path": ["searchParams"],
    }]},
}


@pytest.mark.parametrize("query", ["", "first_name=Mar%C3%ADa", "external_id=c-ext-1", "phone=573110000000", "email="])
async def test_contact_search_needs_an_identifier(store, query: str) -> None:
    status, body = await contacts(store, query)
    assert (status, body) == (400, VALIDATION)


async def test_contact_search_header_rules(store) -> None:
    status, body = await contacts(store, "email=maria@example.com", account=None)
    assert status == 400 and isinstance(body["details"], str)
    status, body = await contacts(store, "email=maria@example.com", account=B)
    assert status == 403
    status, body = await contacts(store, "dob=1990-02-31&email=maria@example.com")
    assert status == 400 and isinstance(body["details"], str) and "dob" in body["details"]


async def test_a_large_wallet_is_answered_whole(client: TestClient) -> None:
    """More lines than the lookup reads on the event loop: the wallet is read apart, and answered the same way."""
    count = MAX_LINES_WITH_CUSTOMER + 5
    seed = seed_doc()
    seed["accounts"][0]["customers"].append({
        "id": "heavy", "document_number": "HEAVY", "wallet": {"lines": [
            {"amount": 1, "reward_id": REWARD, "expiration_date": f"2099-01-{n % 28 + 1:02d}T00:00:00Z"}
            for n in range(count)]}})
    await load_seed(client.app[DB], seed, allow_private=True)
    status, body = await lookup((client, bearer(await token_for(client, A))), "document_number=HEAVY")
    assert status == 200, body
    wallet = body["data"]["wallet"]
    assert len(wallet["lines"]) == count
    assert [line["expiration_date"] for line in wallet["lines"]] == sorted(line["expiration_date"]
                                                                            for line in wallet["lines"])
    assert [(t["total"], t["reward_id"], t["expiration_date"]) for t in wallet["totals"]] == [
        (count, REWARD, "2099-01-01T00:00:00.000000Z")]
    assert wallet["totals"][0]["reward"]["id"] == REWARD
    CustomerLookup.model_validate(body["data"])
