"""POST /customers/migrate: bulk upsert with per-item results, and the two rate limits."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import DB
from linksvc.app import create_app
from linksvc.settings import Settings
from storage.db import execute_many
from tests.conftest import ADMIN, bearer, service_server, token_for
from tests.factories import A, B, ids

MIGRATE = "/api/storefront/v1/customers/migrate"
REWARD_A = ids(A)["rewards"]


async def migrate(client: TestClient, headers: dict[str, str], customers: Any) -> tuple[int, Any, Any]:
    response = await client.post(MIGRATE, json={"customers": customers}, headers=headers)
    return response.status, await response.json(), response.headers


@pytest.fixture
async def server_a(seeded: TestClient) -> dict[str, str]:
    return bearer(await token_for(seeded, A))


async def test_creates_updates_and_reports_each_failure(seeded: TestClient, server_a) -> None:
    status, body, _ = await migrate(seeded, server_a, [
        {"external_id": "legacy-1", "name": "Luis", "phone": "+52 55 1111 2222",
         "wallet": {"lines": [{"amount": 40, "reward_id": REWARD_A}]}},
        {"name": "no identifier"},
        {"document_number": "M-2", "email": "not-an-email"},
        "not an object",
        {"document_number": "M-3", "tier_id": "aaaaaaaa-9999-4000-8000-000000000000"},
        {"document_number": "CC100", "name": "Ana Updated"},
    ])
    assert status == 200
    data = body["data"]
    assert (data["created"], data["updated"], data["unchanged"]) == (1, 1, 0)
    assert [f["index"] for f in data["failed"]] == [1, 2, 3, 4]
    assert all(isinstance(f["error"], str) and f["error"] for f in data["failed"])
    assert "email" in data["failed"][1]["error"] and "tier_id" in data["failed"][3]["error"]
    # What was accepted is readable; what failed is not there.
    lookup = await seeded.get("/api/storefront/v1/customers?phone=525511112222", headers=server_a)
    found = (await lookup.json())["data"]
    assert found["customer"]["name"] == "Luis" and found["wallet"]["totals"][0]["total"] == 40
    assert (await seeded.get("/api/storefront/v1/customers?document_number=M-2", headers=server_a)).status == 404
    ana = await (await seeded.get("/api/storefront/v1/customers?document_number=CC100", headers=server_a)).json()
    # Matched by document number: the given field changed, the others stayed.
    assert ana["data"]["customer"]["name"] == "Ana Updated"
    assert ana["data"]["customer"]["phone"] == "+57 300 123 4567"
    assert ana["data"]["customer_id"] == "cust-aaaa"


async def test_the_same_migration_twice_changes_nothing(seeded: TestClient, server_a) -> None:
    batch = [{"external_id": f"legacy-{i}", "name": f"N{i}"} for i in range(5)]
    assert (await migrate(seeded, server_a, batch))[1]["data"]["created"] == 5
    again = (await migrate(seeded, server_a, batch))[1]["data"]
    assert (again["created"], again["updated"], again["unchanged"]) == (0, 0, 5)


async def test_external_id_wins_over_document_number(seeded: TestClient, server_a) -> None:
    await migrate(seeded, server_a, [{"external_id": "x-1", "document_number": "D-1", "name": "first"}])
    status, body, _ = await migrate(seeded, server_a, [{"external_id": "x-1", "document_number": "D-2"}])
    assert body["data"]["updated"] == 1
    found = await (await seeded.get("/api/storefront/v1/customers?document_number=D-2", headers=server_a)).json()
    assert found["data"]["customer"]["name"] == "first"


async def test_client_key_is_403(seeded: TestClient) -> None:
    client_headers = bearer(await token_for(seeded, A, "CLIENT"))
    status, body, _ = await migrate(seeded, client_headers, [{"external_id": "x"}])
    assert status == 403 and set(body) == {"error", "details"}


@pytest.mark.parametrize("customers", [[], "x", None, [{}] * 501])
async def test_bad_batches_are_400_with_string_details(seeded: TestClient, server_a, customers) -> None:
    status, body, _ = await migrate(seeded, server_a, customers)
    assert status == 400 and isinstance(body["details"], str)


async def test_a_batch_of_500_is_accepted(seeded: TestClient, server_a) -> None:
    status, body, _ = await migrate(seeded, server_a, [{"external_id": f"bulk-{i}"} for i in range(500)])
    assert status == 200 and body["data"]["created"] == 500


async def _shift_rate_log(client: TestClient, seconds: float) -> None:
    """Time passing, without sleeping: move every recorded request back."""
    async with client.app[DB].transaction() as tx:
        await tx.execute("UPDATE rate_events SET at_ms = at_ms - ?", (int(seconds * 1000),))


async def test_15th_request_in_5_seconds_passes_16th_is_429(seeded: TestClient, server_a) -> None:
    statuses = [(await migrate(seeded, server_a, [{"external_id": "r"}]))[0] for _ in range(15)]
    assert statuses == [200] * 15
    status, body, headers = await migrate(seeded, server_a, [{"external_id": "r"}])
    assert status == 429 and set(body) == {"error", "details"}
    assert 1 <= int(headers["Retry-After"]) <= 5
    # Refused requests are not counted: once the window slides past the first 15, requests pass again.
    await _shift_rate_log(seeded, 5.001)
    assert (await migrate(seeded, server_a, [{"external_id": "r"}]))[0] == 200


async def test_window_slides_one_request_at_a_time(seeded: TestClient, server_a) -> None:
    for _ in range(14):
        await migrate(seeded, server_a, [{"external_id": "r"}])
    await _shift_rate_log(seeded, 4)  # 14 requests 4 s ago
    assert (await migrate(seeded, server_a, [{"external_id": "r"}]))[0] == 200  # the 15th, now
    status, _, headers = await migrate(seeded, server_a, [{"external_id": "r"}])
    assert status == 429 and int(headers["Retry-After"]) == 1  # the old 14 leave the window in ~1 s
    await _shift_rate_log(seeded, 1.001)
    assert (await migrate(seeded, server_a, [{"external_id": "r"}]))[0] == 200


async def test_hourly_limit(seeded: TestClient, server_a) -> None:
    now_ms = int(time.time() * 1000)
    async with seeded.app[DB].transaction() as tx:
        await execute_many(  # either store's transaction
            tx, "INSERT INTO rate_events (account_id, scope, at_ms) VALUES (?, 'customers.migrate', ?)",
            [(A, now_ms - 3_000_000 + i) for i in range(9_999)],  # 50 minutes ago
        )
    assert (await migrate(seeded, server_a, [{"external_id": "r"}]))[0] == 200  # the 10,000th
    status, _, headers = await migrate(seeded, server_a, [{"external_id": "r"}])
    assert status == 429
    assert 595 <= int(headers["Retry-After"]) <= 601  # the oldest leave the hour in about 10 minutes


async def test_concurrent_requests_admit_exactly_15(seeded: TestClient, server_a) -> None:
    results = await asyncio.gather(*(migrate(seeded, server_a, [{"external_id": "c"}]) for _ in range(30)))
    statuses = sorted(status for status, _, _ in results)
    assert statuses == [200] * 15 + [429] * 15


async def test_sandbox_accounts_are_not_limited(seeded: TestClient) -> None:
    headers = bearer(await token_for(seeded, B))
    statuses = [(await migrate(seeded, headers, [{"external_id": "s"}]))[0] for _ in range(20)]
    assert statuses == [200] * 20


async def test_limit_survives_a_restart(aiohttp_client, settings: Settings, seeded: TestClient, server_a) -> None:
    for _ in range(15):
        await migrate(seeded, server_a, [{"external_id": "r"}])
    await seeded.close()
    restarted = await aiohttp_client(service_server(create_app(settings)))
    headers = bearer(await token_for(restarted, A))
    assert (await migrate(restarted, headers, [{"external_id": "r"}]))[0] == 429


async def test_limit_is_per_account_and_follows_the_environment(seeded: TestClient, server_a) -> None:
    for _ in range(15):
        await migrate(seeded, server_a, [{"external_id": "r"}])
    assert (await migrate(seeded, server_a, [{"external_id": "r"}]))[0] == 429
    # Switching A to sandbox lifts the limit.
    patched = await seeded.patch(f"/api/admin/v1/accounts/{A}", json={"environment": "sandbox"}, headers=ADMIN)
    assert patched.status == 200
    assert (await migrate(seeded, server_a, [{"external_id": "r"}]))[0] == 200
