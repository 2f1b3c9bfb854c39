"""Admin API: accounts, API keys (secret shown once, revocation), the admin token, and account isolation."""

from __future__ import annotations

import re
import uuid

from aiohttp.test_utils import TestClient

from api.appkeys import DB
from tests.conftest import ADMIN, bearer, token_for
from tests.factories import KEYS, A, B, ids

API = "/api/admin/v1"
STOREFRONT = "/api/storefront/v1"
SEGMENTS = ["brands", "tiers", "rewards", "campaigns", "contacts", "customers", "custom-event-types", "connections",
            "links"]
NOWHERE = "99999999-0000-4000-8000-000000000009"
# A minimal valid body of each kind.
VALID = {
    "brands": {"name": "Other"}, "tiers": {"name": "Other", "level": 1}, "rewards": {"name": "Other"},
    "campaigns": {"name": "Other", "type": "COUPONS"}, "contacts": {"email": "x@other.example"},
    "customers": {"name": "Other"}, "custom-event-types": {"name": "other"},
    "connections": {"destination": "messaging"},
    "links": {"kind": "email", "destination_url": "https://other.example/"},
}


def item_id(account: str, segment: str) -> str:
    return ids(account)[segment.replace("-", "_")]


# --- accounts -------------------------------------------------------------------------------------------

async def test_account_create_read_list_patch_delete(client: TestClient) -> None:
    response = await client.post(f"{API}/accounts", json={"name": "Shop", "environment": "production"},
                                 headers=ADMIN)
    assert response.status == 201
    shop = (await response.json())["data"]
    assert (shop["name"], shop["environment"]) == ("Shop", "production")
    assert str(uuid.UUID(shop["id"])) == shop["id"]
    assert shop["created_at"] == shop["updated_at"]

    chosen = "cccccccc-0000-4000-8000-000000000003"
    response = await client.post(f"{API}/accounts", json={"id": chosen, "name": "Lab"}, headers=ADMIN)
    lab = (await response.json())["data"]
    assert (lab["id"], lab["environment"]) == (chosen, "sandbox")  # sandbox by default
    duplicate = await client.post(f"{API}/accounts", json={"id": chosen, "name": "Again"}, headers=ADMIN)
    assert duplicate.status == 409

    read = await client.get(f"{API}/accounts/{chosen}", headers=ADMIN)
    assert read.status == 200 and (await read.json())["data"] == lab

    page = await (await client.get(f"{API}/accounts", params={"limit": 1, "offset": 1}, headers=ADMIN)).json()
    assert page["count"] == 2 and len(page["data"]) == 1
    everything = await (await client.get(f"{API}/accounts", headers=ADMIN)).json()
    assert {a["id"] for a in everything["data"]} == {shop["id"], chosen}
    assert page["data"][0] == everything["data"][1]

    patched = await client.patch(f"{API}/accounts/{chosen}", json={"name": "Lab 2"}, headers=ADMIN)
    assert patched.status == 200
    lab2 = (await patched.json())["data"]
    assert (lab2["name"], lab2["environment"], lab2["created_at"]) == ("Lab 2", "sandbox", lab["created_at"])
    assert lab2["updated_at"] > lab["updated_at"]
    moved = await (await client.patch(f"{API}/accounts/{chosen}", json={"environment": "production"},
                                      headers=ADMIN)).json()
    assert (moved["data"]["name"], moved["data"]["environment"]) == ("Lab 2", "production")

    assert (await client.delete(f"{API}/accounts/{chosen}", headers=ADMIN)).status == 204
    for method in ("GET", "PATCH", "DELETE"):
        gone = await client.request(method, f"{API}/accounts/{chosen}", json={"name": "x"}, headers=ADMIN)
        assert gone.status == 404, method
    remaining = await (await client.get(f"{API}/accounts", headers=ADMIN)).json()
    assert [a["id"] for a in remaining["data"]] == [shop["id"]]


async def test_bad_account_bodies(client: TestClient) -> None:
    table = [
        ("POST", "/accounts", {"name": "X", "environment": "staging"}, "environment"),
        ("POST", "/accounts", {"environment": "sandbox"}, "name"),
        ("POST", "/accounts", {"name": ""}, "name"),
        ("POST", "/accounts", {"name": "X", "id": "not-a-uuid"}, "id"),
        ("POST", "/accounts", {"name": "X", "plan": "gold"}, "plan"),
    ]
    found = {}
    for n, (method, path, body, _) in enumerate(table):
        response = await client.request(method, f"{API}{path}", json=body, headers=ADMIN)
        found[n] = (response.status, (await response.json())["details"]["field"])
    assert found == {n: (400, field) for n, (_, _, _, field) in enumerate(table)}
    assert (await (await client.get(f"{API}/accounts", headers=ADMIN)).json())["count"] == 0


async def test_bad_account_patch(seeded: TestClient) -> None:
    for body, field in (({"environment": "staging"}, "environment"), ({"name": ""}, "name"), ({"id": B}, "id")):
        response = await seeded.patch(f"{API}/accounts/{A}", json=body, headers=ADMIN)
        assert response.status == 400, body
        assert (await response.json())["details"]["field"] == field
    account = (await (await seeded.get(f"{API}/accounts/{A}", headers=ADMIN)).json())["data"]
    assert (account["name"], account["environment"]) == ("Account aaaa", "production")


async def test_deleting_an_account_deletes_its_data_and_keys(seeded: TestClient) -> None:
    assert (await seeded.delete(f"{API}/accounts/{A}", headers=ADMIN)).status == 204
    for segment in SEGMENTS:
        response = await seeded.get(f"{API}/accounts/{A}/{segment}/{item_id(A, segment)}", headers=ADMIN)
        assert response.status == 404, segment
    refused = await seeded.get(f"{STOREFRONT}/auth/authorize", headers={"x-api-key": KEYS[(A, "SERVER")]})
    assert refused.status == 401
    # Account B is untouched.
    for segment in SEGMENTS:
        response = await seeded.get(f"{API}/accounts/{B}/{segment}/{item_id(B, segment)}", headers=ADMIN)
        assert response.status == 200, segment
    assert await token_for(seeded, B)


# --- API keys -------------------------------------------------------------------------------------------

async def test_key_secret_is_shown_once_and_works(seeded: TestClient) -> None:
    response = await seeded.post(f"{API}/accounts/{A}/api-keys", json={"kind": "SERVER", "name": "backend"},
                                 headers=ADMIN)
    assert response.status == 201
    created = (await response.json())["data"]
    secret = created["key"]
    assert len(secret) >= 40 and secret.startswith(created["prefix"])
    assert (created["account_id"], created["kind"], created["name"], created["revoked_at"]) == (
        A, "SERVER", "backend", None)

    listed = await seeded.get(f"{API}/accounts/{A}/api-keys", headers=ADMIN)
    read = await seeded.get(f"{API}/accounts/{A}/api-keys/{created['id']}", headers=ADMIN)
    for response in (listed, read):
        assert response.status == 200
        assert secret not in await response.text()
    keys = (await listed.json())["data"]
    assert len(keys) == 3  # the two seeded keys and the new one
    assert all("key" not in key for key in keys)
    view = (await read.json())["data"]
    assert view == {k: v for k, v in created.items() if k != "key"}

    token = await seeded.get(f"{STOREFRONT}/auth/authorize", headers={"x-api-key": secret})
    assert token.status == 200
    brands = await seeded.get(f"{STOREFRONT}/brands", headers=bearer((await token.json())["data"]))
    assert brands.status == 200
    assert [b["name"] for b in (await brands.json())["data"]] == ["Brand of aaaa"]


async def test_revoked_key_and_its_tokens_stop_working(seeded: TestClient) -> None:
    created = (await (await seeded.post(f"{API}/accounts/{A}/api-keys", json={"kind": "CLIENT"},
                                        headers=ADMIN)).json())["data"]
    token = (await (await seeded.get(f"{STOREFRONT}/auth/authorize",
                                     headers={"x-api-key": created["key"]})).json())["data"]
    assert (await seeded.get(f"{STOREFRONT}/brands", headers=bearer(token))).status == 200
    other_token = await token_for(seeded, A, "SERVER")

    revoked = await seeded.delete(f"{API}/accounts/{A}/api-keys/{created['id']}", headers=ADMIN)
    assert revoked.status == 200
    revoked_view = (await revoked.json())["data"]
    assert revoked_view["revoked_at"] is not None and "key" not in revoked_view
    read = (await (await seeded.get(f"{API}/accounts/{A}/api-keys/{created['id']}", headers=ADMIN)).json())["data"]
    assert read["revoked_at"] == revoked_view["revoked_at"]

    refused = await seeded.get(f"{STOREFRONT}/auth/authorize", headers={"x-api-key": created["key"]})
    assert refused.status == 401
    assert set(await refused.json()) == {"error", "details"}
    stale = await seeded.get(f"{STOREFRONT}/brands", headers=bearer(token))
    assert stale.status == 401
    # Other keys of the account, and their tokens, keep working.
    assert (await seeded.get(f"{STOREFRONT}/brands", headers=bearer(other_token))).status == 200

    # Revoking again keeps the first revocation time.
    again = await seeded.delete(f"{API}/accounts/{A}/api-keys/{created['id']}", headers=ADMIN)
    assert again.status == 200
    assert (await again.json())["data"]["revoked_at"] == revoked_view["revoked_at"]


async def test_bad_key_requests(seeded: TestClient) -> None:
    for body, field in (({"kind": "ADMIN"}, "kind"), ({}, "kind"),
                        ({"kind": "SERVER", "key": "lk_chosen_by_the_caller_0000000"}, "key")):
        response = await seeded.post(f"{API}/accounts/{A}/api-keys", json=body, headers=ADMIN)
        assert response.status == 400, body
        assert (await response.json())["details"]["field"] == field
    keys = (await (await seeded.get(f"{API}/accounts/{A}/api-keys", headers=ADMIN)).json())["data"]
    assert len(keys) == 2


async def test_keys_of_another_account_are_not_found(seeded: TestClient) -> None:
    b_keys = (await (await seeded.get(f"{API}/accounts/{B}/api-keys", headers=ADMIN)).json())["data"]
    b_key = b_keys[0]["id"]
    for method in ("GET", "DELETE"):
        response = await seeded.request(method, f"{API}/accounts/{A}/api-keys/{b_key}", headers=ADMIN)
        assert response.status == 404, method
    assert (await seeded.get(f"{API}/accounts/{B}/api-keys/{b_key}", headers=ADMIN)).status == 200
    assert await token_for(seeded, B, b_keys[0]["kind"])  # not revoked


# --- the admin token ------------------------------------------------------------------------------------

async def test_admin_api_needs_the_admin_token(seeded: TestClient) -> None:
    storefront_token = await token_for(seeded, A)
    credentials = {
        "missing": {},
        "wrong": {"Authorization": "Bearer not-the-admin-token"},
        "storefront token": bearer(storefront_token),
        "api key header": {"x-api-key": KEYS[(A, "SERVER")]},
        "basic scheme": {"Authorization": "Basic dGVzdDp0ZXN0"},
        "empty bearer": {"Authorization": "Bearer "},
        "prefix of the token": {"Authorization": ADMIN["Authorization"][:-1]},
    }
    requests = [
        ("GET", "/accounts", None),
        ("POST", "/accounts", {"name": "Intruder"}),
        ("GET", f"/accounts/{A}", None),
        ("DELETE", f"/accounts/{A}", None),
        ("GET", f"/accounts/{A}/api-keys", None),
        ("POST", f"/accounts/{A}/api-keys", {"kind": "SERVER"}),
        ("GET", f"/accounts/{A}/brands", None),
        ("DELETE", f"/accounts/{A}/brands/{item_id(A, 'brands')}", None),
        ("PATCH", f"/accounts/{A}/links/{item_id(A, 'links')}", {"disabled": True}),
    ]
    found = {}
    for label, headers in credentials.items():
        for method, path, body in requests:
            response = await seeded.request(method, f"{API}{path}", json=body, headers=headers)
            found[(label, method, path)] = (response.status, sorted(await response.json()))
        # Each credential from a clean slate: 30 failures close the address (tests/http/test_auth_throttle.py).
        async with seeded.app[DB].transaction() as tx:
            await tx.execute("DELETE FROM auth_failures")
    assert found == {key: (401, ["details", "error"]) for key in found}
    # Nothing was changed by the refused requests.
    accounts = (await (await seeded.get(f"{API}/accounts", headers=ADMIN)).json())["data"]
    assert sorted(a["id"] for a in accounts) == sorted([A, B])
    keys = (await (await seeded.get(f"{API}/accounts/{A}/api-keys", headers=ADMIN)).json())["data"]
    assert len(keys) == 2
    link = (await (await seeded.get(f"{API}/accounts/{A}/links/{item_id(A, 'links')}", headers=ADMIN)).json())
    assert link["data"]["disabled"] is False
    assert (await seeded.get(f"{API}/accounts/{A}/brands/{item_id(A, 'brands')}", headers=ADMIN)).status == 200


async def test_admin_token_does_not_open_the_storefront(seeded: TestClient) -> None:
    response = await seeded.get(f"{STOREFRONT}/brands", headers=ADMIN)
    assert response.status == 401


# --- isolation ------------------------------------------------------------------------------------------

async def test_unknown_account_in_the_path_is_404(seeded: TestClient) -> None:
    found = {}
    for segment in SEGMENTS:
        for method, path, body in (
            ("GET", f"/accounts/{NOWHERE}/{segment}", None),
            ("POST", f"/accounts/{NOWHERE}/{segment}", VALID[segment]),
            ("GET", f"/accounts/{NOWHERE}/{segment}/{item_id(A, segment)}", None),
            ("DELETE", f"/accounts/{NOWHERE}/{segment}/{item_id(A, segment)}", None),
        ):
            response = await seeded.request(method, f"{API}{path}", json=body, headers=ADMIN)
            found[(method, path)] = (response.status, (await response.json())["error"])
    for method, path, body in (("GET", f"/accounts/{NOWHERE}", None), ("GET", f"/accounts/{NOWHERE}/api-keys", None),
                               ("POST", f"/accounts/{NOWHERE}/api-keys", {"kind": "SERVER"}),
                               ("PATCH", f"/accounts/{NOWHERE}", {"name": "x"}),
                               ("DELETE", f"/accounts/{NOWHERE}", None)):
        response = await seeded.request(method, f"{API}{path}", json=body, headers=ADMIN)
        found[(method, path)] = (response.status, (await response.json())["error"])
    assert found == {key: (404, "Account not found") for key in found}


async def test_another_accounts_resources_are_not_found(seeded: TestClient) -> None:
    for segment in SEGMENTS:
        theirs = item_id(B, segment)
        own_url = f"{API}/accounts/{B}/{segment}/{theirs}"
        before = await (await seeded.get(own_url, headers=ADMIN)).json()
        wrong_url = f"{API}/accounts/{A}/{segment}/{theirs}"
        for method, body in (("GET", None), ("PUT", VALID[segment]), ("PATCH", {}), ("DELETE", None)):
            response = await seeded.request(method, wrong_url, json=body, headers=ADMIN)
            assert response.status == 404, (segment, method)
            text = await response.text()
            assert re.search(r"bbbb|Brand of|lnkbbbb|whsec", text.replace(theirs, "")) is None, text
        listed = await (await seeded.get(f"{API}/accounts/{A}/{segment}", headers=ADMIN)).json()
        assert theirs not in {item["id"] for item in listed["data"]}, segment
        assert await (await seeded.get(own_url, headers=ADMIN)).json() == before, segment
