"""Credential guesses are throttled per client address: after 30 failed admin-token, API-key or sign-in
attempts within 10 minutes, every attempt of that kind from that address answers 429 with Retry-After.

The test client always connects from 127.0.0.1; tests that need other client addresses trust it as a
proxy and say who the client is in X-Forwarded-For.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient

from api.appkeys import DB
from linksvc.app import create_app
from linksvc.settings import Settings
from storage.db import dialect, fetch_all
from tests.conftest import ADMIN, bearer
from tests.factories import ADMIN_TOKEN, KEYS, A

ACCOUNTS = "/api/admin/v1/accounts"
AUTHORIZE = "/api/storefront/v1/auth/authorize"
SESSION = "/dashboard/session"
DASHBOARD = {"X-Requested-With": "linksvc-dashboard"}
WRONG = {"Authorization": "Bearer not-the-admin-token"}
LIMIT = 30


def _from(address: str, headers: dict[str, str] | None = None) -> dict[str, str]:
    return {**(headers or {}), "X-Forwarded-For": address}


async def _failures(client: TestClient) -> list[tuple[str, str]]:
    reader = client.app[DB].reader
    order = "at_ms" if dialect(reader) == "postgresql" else "rowid"  # PostgreSQL has no rowid
    rows = await fetch_all(reader, f"SELECT kind, client FROM auth_failures ORDER BY {order}")
    return [(row["kind"], row["client"]) for row in rows]


async def _assert_throttled(response: ClientResponse) -> None:
    assert response.status == 429, await response.text()
    assert response.content_type == "application/json"
    assert 1 <= int(response.headers["Retry-After"]) <= 600
    body = await response.json()
    assert sorted(body) == ["details", "error"]
    assert body["error"] == "Too many requests"
    assert f"at most {LIMIT} in 600 seconds" in body["details"]


async def _fail_admin(client: TestClient, times: int, **headers: str) -> None:
    for _ in range(times):
        response = await client.get(ACCOUNTS, headers={**WRONG, **headers})
        assert response.status == 401, await response.text()


async def _trusting_proxy(aiohttp_client: Any, settings: Settings) -> TestClient:
    client: TestClient = await aiohttp_client(create_app(replace(settings, trusted_proxies="127.0.0.1")))
    return client


async def test_thirty_wrong_admin_tokens_close_the_address_even_to_the_right_one(client: TestClient) -> None:
    await _fail_admin(client, LIMIT)
    await _assert_throttled(await client.get(ACCOUNTS, headers=ADMIN))
    await _assert_throttled(await client.get(ACCOUNTS, headers=WRONG))
    # A refused attempt is not looked at, so it is not counted either.
    assert await _failures(client) == [("admin", "127.0.0.1")] * LIMIT
    # A request without any admin credential is not an attempt: its usual 401.
    assert (await client.get(ACCOUNTS)).status == 401


async def test_other_addresses_behind_a_trusted_proxy_are_not_affected(aiohttp_client: Any,
                                                                     settings: Settings) -> None:
    client = await _trusting_proxy(aiohttp_client, settings)
    await _fail_admin(client, LIMIT, **_from("198.51.100.1"))
    await _assert_throttled(await client.get(ACCOUNTS, headers=_from("198.51.100.1", ADMIN)))
    # What the client wrote before the address the proxy appended changes nothing.
    await _assert_throttled(await client.get(ACCOUNTS, headers=_from("198.51.100.2, 198.51.100.1", ADMIN)))
    assert (await client.get(ACCOUNTS, headers=_from("198.51.100.2", ADMIN))).status == 200
    assert (await client.get(ACCOUNTS, headers=ADMIN)).status == 200  # the proxy itself
    assert {address for _, address in await _failures(client)} == {"198.51.100.1"}


async def test_the_forwarded_for_of_an_untrusted_peer_is_ignored(aiohttp_client: Any, settings: Settings) -> None:
    for trusted in ("", "10.0.0.0/8"):
        client: TestClient = await aiohttp_client(create_app(replace(settings, trusted_proxies=trusted)))
        for n in range(LIMIT):
            response = await client.get(ACCOUNTS, headers=_from(f"198.51.100.{n}", WRONG))
            assert response.status == 401
        await _assert_throttled(await client.get(ACCOUNTS, headers=_from("198.51.100.200", ADMIN)))
        assert {address for _, address in await _failures(client)} == {"127.0.0.1"}
        async with client.app[DB].transaction() as tx:
            await tx.execute("DELETE FROM auth_failures")


async def test_thirty_bad_api_keys_close_authorize(seeded: TestClient) -> None:
    bad = ["lk_unknown_" + "0" * 32, "x", "lk_" + "é" * 40, "lk_ with spaces"]
    for n in range(LIMIT):
        response = await seeded.get(AUTHORIZE, headers={"x-api-key": bad[n % len(bad)]})
        assert response.status == 401, await response.text()
    await _assert_throttled(await seeded.get(AUTHORIZE, headers={"x-api-key": KEYS[(A, "SERVER")]}))
    # A missing key is not an attempt: it is refused as before, and other kinds are open.
    assert (await seeded.get(AUTHORIZE)).status == 401
    assert (await seeded.get(ACCOUNTS, headers=ADMIN)).status == 200
    assert (await seeded.post(SESSION, json={"token": ADMIN_TOKEN})).status == 200


async def test_a_revoked_api_key_counts(seeded: TestClient) -> None:
    server_key = KEYS[(A, "SERVER")]
    keys = (await (await seeded.get(f"{ACCOUNTS}/{A}/api-keys", headers=ADMIN)).json())["data"]
    key_id = next(key["id"] for key in keys if key["prefix"] == server_key[:7])
    assert (await seeded.delete(f"{ACCOUNTS}/{A}/api-keys/{key_id}", headers=ADMIN)).status == 200
    for _ in range(LIMIT):
        assert (await seeded.get(AUTHORIZE, headers={"x-api-key": server_key})).status == 401
    await _assert_throttled(await seeded.get(AUTHORIZE, headers={"x-api-key": KEYS[(A, "CLIENT")]}))


async def test_thirty_wrong_sign_ins_close_the_sign_in(client: TestClient) -> None:
    for n in range(LIMIT):
        assert (await client.post(SESSION, json={"token": f"guess-{n}"})).status == 401
    response = await client.post(SESSION, json={"token": ADMIN_TOKEN})
    await _assert_throttled(response)
    assert "Set-Cookie" not in response.headers
    # The admin API is another kind: still open to the admin token.
    assert (await client.get(ACCOUNTS, headers=ADMIN)).status == 200


async def test_stale_session_cookies_are_not_counted(client: TestClient) -> None:
    """A session id is 32 random bytes looked up in the store: a wrong one says nothing about the admin
    token, and an expired one is what a returning browser sends. Neither counts, so neither locks anyone out."""
    stale = {"Cookie": "linksvc_admin=" + "A" * 43}
    for _ in range(LIMIT + 5):
        assert (await (await client.get(SESSION, headers=stale)).json())["data"] == {"signed_in": False}
        assert (await client.get(ACCOUNTS, headers={**stale, **DASHBOARD})).status == 401
    assert await _failures(client) == []
    assert (await client.post(SESSION, json={"token": ADMIN_TOKEN})).status == 200


async def test_attempts_work_again_once_the_failures_leave_the_window(client: TestClient) -> None:
    await _fail_admin(client, LIMIT)
    await _assert_throttled(await client.get(ACCOUNTS, headers=ADMIN))
    # Time passing, without sleeping: move every failure ten minutes into the past.
    async with client.app[DB].transaction() as tx:
        await tx.execute("UPDATE auth_failures SET at_ms = at_ms - 600000")
    assert (await client.get(ACCOUNTS, headers=ADMIN)).status == 200
    # One more wrong token writes one row and prunes the thirty that aged out.
    await _fail_admin(client, 1)
    assert len(await _failures(client)) == 1


async def test_workers_on_one_database_share_the_count(aiohttp_client: Any, settings: Settings) -> None:
    first: TestClient = await aiohttp_client(create_app(settings))
    second: TestClient = await aiohttp_client(create_app(settings))
    await _fail_admin(first, LIMIT // 2)
    await _fail_admin(second, LIMIT - LIMIT // 2)
    await _assert_throttled(await first.get(ACCOUNTS, headers=ADMIN))
    await _assert_throttled(await second.get(ACCOUNTS, headers=ADMIN))


async def test_metrics_count_failures_and_refusals_by_kind(client: TestClient) -> None:
    before = await (await client.get("/metrics")).text()
    for kind in ("admin", "api_key", "sign_in"):
        assert f'linksvc_auth_failures_total{{kind="{kind}"}} 0.0' in before
        assert f'linksvc_auth_throttled_total{{kind="{kind}"}} 0.0' in before
    await _fail_admin(client, LIMIT)
    for _ in range(2):
        await client.get(ACCOUNTS, headers=ADMIN)
    await client.post(SESSION, json={"token": "guess"})
    text = await (await client.get("/metrics")).text()
    assert 'linksvc_auth_failures_total{kind="admin"} 30.0' in text
    assert 'linksvc_auth_throttled_total{kind="admin"} 2.0' in text
    assert 'linksvc_auth_failures_total{kind="sign_in"} 1.0' in text
    assert 'linksvc_auth_throttled_total{kind="sign_in"} 0.0' in text


async def test_successful_and_credential_less_requests_write_nothing(seeded: TestClient) -> None:
    assert (await seeded.get(ACCOUNTS, headers=ADMIN)).status == 200
    token_response = await seeded.get(AUTHORIZE, headers={"x-api-key": KEYS[(A, "SERVER")]})
    assert token_response.status == 200
    token = (await token_response.json())["data"]
    assert (await seeded.get("/api/storefront/v1/brands", headers=bearer(token))).status == 200
    signed_in = await seeded.post(SESSION, json={"token": ADMIN_TOKEN})
    assert signed_in.status == 200
    assert (await (await seeded.get(SESSION)).json())["data"] == {"signed_in": True}
    assert (await seeded.get(ACCOUNTS, headers=DASHBOARD)).status == 200
    seeded.session.cookie_jar.clear()
    # No credential of the kind: refused as ever, not counted.
    assert (await seeded.get(ACCOUNTS)).status == 401
    assert (await seeded.get(AUTHORIZE)).status == 401
    assert (await seeded.get(SESSION)).status == 200
    assert (await seeded.post(SESSION, json={})).status == 400
    # Storefront bearer tokens are not counted (32 random bytes; see api.auth).
    assert (await seeded.get("/api/storefront/v1/brands", headers=bearer("lt_unknown"))).status == 401
    assert await _failures(seeded) == []


async def test_the_openapi_documents_announce_429_on_credential_checks(client: TestClient) -> None:
    admin = await (await client.get("/api/admin/v1/openapi.json")).json()
    storefront = await (await client.get("/api/storefront/v1/openapi.json")).json()
    assert "429" in admin["paths"]["/accounts"]["get"]["responses"]
    assert "429" in storefront["paths"]["/auth/authorize"]["get"]["responses"]
    assert "429" not in storefront["paths"]["/brands"]["get"]["responses"]


async def test_failures_at_once_are_each_counted(client: TestClient) -> None:
    # On PostgreSQL concurrent failures conflict as not serializable: each is recorded all the same, none is a 500.
    wrong = _from("203.0.113.9", WRONG)
    responses = await asyncio.gather(*(client.get("/api/admin/v1/accounts", headers=wrong) for _ in range(25)))
    assert {response.status for response in responses} == {401}
    assert len(await _failures(client)) == 25
