"""U+0000 in any text the service is given (a body's strings and keys, a query's values) is a 400 naming the
field, on either store: PostgreSQL's text and jsonb cannot hold the character, and the same input gets the same
answer from both. A part judged item by item (a migrated customer, a bulk request's event) fails alone. This
file runs on both stores in CI."""

from __future__ import annotations

from typing import Any

from aiohttp.test_utils import TestClient

from tests.conftest import ADMIN, bearer, token_for
from tests.factories import A

SF = "/api/storefront/v1"
AD = f"/api/admin/v1/accounts/{A}"
NUL = "may not contain the character U+0000"

# (label, method, path, body, who, the path the answer names)
CASES: list[tuple[str, str, str, Any, str, str]] = [
    ("event property value", "POST", f"{SF}/behavior/events",
     {"type": "PURCHASE", "document_number": "CC100", "value": 4, "currency": "USD", "order_id": "o-nul-1",
      "products": [{"sku": "s"}], "properties": {"note": "x\x00y"}}, "server", "properties.note"),
    ("event property key", "POST", f"{SF}/behavior/events",
     {"type": "PURCHASE", "document_number": "CC100", "value": 4, "currency": "USD", "order_id": "o-nul-2",
      "products": [{"sku": "s"}], "properties": {"a\x00": 1}}, "server", "properties.a\x00"),
    ("event identifier", "POST", f"{SF}/behavior/events",
     {"type": "PURCHASE", "document_number": "CC\x00100", "value": 4, "currency": "USD", "order_id": "o-nul-3",
      "products": [{"sku": "s"}]}, "server", "document_number"),
    ("admin account name", "POST", "/api/admin/v1/accounts", {"name": "Shop\x00", "environment": "sandbox"},
     "admin", "name"),
    ("admin brand name", "POST", f"{AD}/brands", {"name": "Brand\x00"}, "admin", "name"),
]


async def test_every_text_with_u0000_is_a_400_naming_it(seeded: TestClient) -> None:
    server = bearer(await token_for(seeded, A))
    wrong = []
    for label, method, path, body, who, named in CASES:
        response = await seeded.request(method, path, json=body, headers=ADMIN if who == "admin" else server)
        answer = await response.json()
        issues = answer.get("details", {}).get("issues", []) if isinstance(answer.get("details"), dict) else []
        if response.status != 400 or {"path": named, "message": NUL, "type": "format"} not in issues:
            wrong.append((label, response.status, answer))
    assert not wrong


async def test_a_query_value_with_u0000_is_a_400(seeded: TestClient) -> None:
    server = bearer(await token_for(seeded, A))
    response = await seeded.get(f"{SF}/customers?document_number=CC%00100", headers=server)
    assert response.status == 400
    assert await response.json() == {"error": "Invalid query", "details": f"document_number: {NUL}"}


async def test_a_bulk_event_with_u0000_fails_alone(seeded: TestClient) -> None:
    server = bearer(await token_for(seeded, A))
    event = {"type": "PURCHASE", "document_number": "CC100", "value": 4, "currency": "USD",
             "products": [{"sku": "s"}]}
    response = await seeded.post(f"{SF}/behavior/events/bulk", headers=server, json={"events": [
        {**event, "order_id": "o-nul-4", "utm_source": "a\x00"}, {**event, "order_id": "o-nul-6"}]})
    assert response.status == 200
    data = (await response.json())["data"]
    assert (data["accepted"], data["rejected"]) == (1, 1)
    refused = data["results"][0]
    assert refused["status"] == 400
    assert refused["details"]["issues"] == [{"path": "events[0].utm_source", "message": NUL, "type": "format"}]


async def test_a_migrated_customer_with_u0000_fails_alone(seeded: TestClient) -> None:
    server = bearer(await token_for(seeded, A))
    response = await seeded.post(f"{SF}/customers/migrate", headers=server, json={"customers": [
        {"external_id": "nul-1", "name": "Luis\x00"}, {"external_id": "nul-2", "name": "Ana"}]})
    assert response.status == 200
    data = (await response.json())["data"]
    assert (data["created"], data["updated"], data["unchanged"]) == (1, 0, 0)
    assert data["failed"] == [{"index": 0, "error": f"customers[0].name: {NUL}",
                               "issues": [{"path": "customers[0].name", "message": NUL, "type": "format"}]}]


async def test_a_backslash_before_u0000_is_ordinary_text(seeded: TestClient) -> None:
    server = bearer(await token_for(seeded, A))
    response = await seeded.post(f"{SF}/behavior/events", headers=server, json={
        "type": "PURCHASE", "document_number": "CC100", "value": 4, "currency": "USD", "order_id": "o-nul-5",
        "products": [{"sku": "s"}], "properties": {"note": "C:\\u0000"}})
    assert response.status == 202, await response.text()
