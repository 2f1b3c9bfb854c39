"""The admin API's nine resource kinds: create, read, list with paging, replace, patch and delete.

Every kind runs through the same table-driven tests with a minimal valid body; what differs per kind is
in :data:`CASES`. Kind-specific behaviour (link codes, connection secrets) is tested below the table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import DB
from storage import documents
from tests.conftest import ADMIN
from tests.factories import A, B, ids

API = "/api/admin/v1"
ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")


@dataclass(frozen=True)
class Case:
    segment: str  # URL segment (dashes)
    create: dict[str, Any]  # a minimal valid body; "{n}" in string values is replaced by a number
    replace: dict[str, Any]  # a full body for PUT
    dropped: tuple[str, Any]  # a field set by `create`, absent from `replace`: its value after PUT
    patch: tuple[str, Any]  # one field and its new value

    def body(self, n: int = 0) -> dict[str, Any]:
        return {k: v.replace("{n}", str(n)) if isinstance(v, str) else v for k, v in self.create.items()}


CASES = [
    Case("brands", {"name": "Brand {n}", "status": "INACTIVE"}, {"name": "Renamed"}, ("status", "ACTIVE"),
         ("name", "Patched")),
    Case("tiers", {"name": "Silver {n}", "level": 1, "description": "second"}, {"name": "Silver+", "level": 3},
         ("description", ""), ("level", 5)),
    Case("rewards", {"name": "Stars {n}", "labels": ["x"]}, {"name": "Stars 2"}, ("labels", []),
         ("description", "shiny")),
    Case("campaigns", {"name": "Campaign {n}", "type": "COUPONS", "labels": ["a"]},
         {"name": "C2", "type": "COUPONS"}, ("labels", []), ("paused", True)),
    Case("contacts", {"email": "ana{n}@x.example", "first_name": "Ana"}, {"email": "bo@x.example"},
         ("first_name", None), ("city", "Bogota")),
    Case("customers", {"name": "Ana {n}", "country": "CO"}, {"name": "Bo"}, ("country", None),
         ("gender", "F")),
    Case("custom-event-types", {"name": "signup_{n}", "description": "d"}, {"name": "signed_up"},
         ("description", ""), ("active", False)),
    # a fresh account, with no custom event type: PURCHASE is the only type a list may name
    Case("connections", {"destination": "messaging", "name": "crm {n}", "event_types": ["PURCHASE"]},
         {"destination": "ga4", "event_types": ["*"]}, ("name", ""), ("event_types", ["PURCHASE"])),
    Case("links", {"kind": "email", "destination_url": "https://shop.example/{n}", "deeplink": "app://p"},
         {"kind": "push", "destination_url": "https://shop.example/b"}, ("deeplink", None), ("disabled", True)),
]
BY_SEGMENT = {case.segment: case for case in CASES}
ALL = pytest.mark.parametrize("case", CASES, ids=[c.segment for c in CASES])


async def new_account(client: TestClient, name: str = "Fresh") -> str:
    response = await client.post(f"{API}/accounts", json={"name": name}, headers=ADMIN)
    assert response.status == 201, await response.text()
    return str((await response.json())["data"]["id"])


async def create(client: TestClient, account: str, segment: str, body: dict[str, Any]) -> dict[str, Any]:
    response = await client.post(f"{API}/accounts/{account}/{segment}", json=body, headers=ADMIN)
    assert response.status == 201, await response.text()
    return dict((await response.json())["data"])


async def read(client: TestClient, account: str, segment: str, doc_id: str) -> dict[str, Any]:
    response = await client.get(f"{API}/accounts/{account}/{segment}/{doc_id}", headers=ADMIN)
    assert response.status == 200, await response.text()
    return dict((await response.json())["data"])


# --- the generic flow, for every kind ------------------------------------------------------------------
# A test builds an app (about 0.1 s), so each test below walks through several steps of one kind.

@ALL
async def test_create_read_list_replace_patch_delete(client: TestClient, case: Case) -> None:
    await create_read_and_list(client, case)
    await replace_patch_and_delete(client, case)


async def create_read_and_list(client: TestClient, case: Case) -> None:
    account = await new_account(client)
    url = f"{API}/accounts/{account}/{case.segment}"

    response = await client.post(url, json=case.body(0), headers=ADMIN)
    assert response.status == 201
    created = (await response.json())["data"]
    for field, value in case.body(0).items():
        assert created[field] == value, field
    assert isinstance(created["id"], str) and created["id"]
    assert ISO.match(created["created_at"]) and ISO.match(created["updated_at"])
    assert created["created_at"] == created["updated_at"]
    assert await read(client, account, case.segment, created["id"]) == created

    # A chosen id is kept; creating it again is a conflict that leaves the first one untouched.
    chosen = "0c0c0c0c-1111-4222-8333-444444444444" if case.segment != "customers" else "cust-chosen-1"
    with_id = await create(client, account, case.segment, {**case.body(1), "id": chosen})
    assert with_id["id"] == chosen
    again = await client.post(url, json={**case.body(2), "id": chosen}, headers=ADMIN)
    assert again.status == 409
    assert set(await again.json()) == {"error", "details"}
    assert await read(client, account, case.segment, chosen) == with_id

    made = [created["id"], chosen, (await create(client, account, case.segment, case.body(3)))["id"]]
    seen: list[str] = []
    for offset, expected_len in ((0, 2), (2, 1), (3, 0)):
        response = await client.get(url, params={"limit": 2, "offset": offset}, headers=ADMIN)
        assert response.status == 200
        page = await response.json()
        assert (page["count"], page["limit"], page["offset"]) == (3, 2, offset)
        assert len(page["data"]) == expected_len
        seen += [item["id"] for item in page["data"]]
    assert sorted(seen) == sorted(made)  # every item once, none twice
    everything = await (await client.get(url, headers=ADMIN)).json()
    assert everything["count"] == 3 and [i["id"] for i in everything["data"]] == seen


async def test_list_refuses_bad_paging(seeded: TestClient) -> None:
    table = {"limit=0": "limit", "limit=501": "limit", "offset=-1": "offset", "limit=ten": "limit",
             "limit=1&limit=2": "limit"}
    found = {}
    for query in table:
        response = await seeded.get(f"{API}/accounts/{A}/brands?{query}", headers=ADMIN)
        found[query] = (response.status, (await response.json())["details"]["field"])
    assert found == {query: (400, field) for query, field in table.items()}


async def replace_patch_and_delete(client: TestClient, case: Case) -> None:
    account = await new_account(client)
    created = await create(client, account, case.segment, case.body())
    url = f"{API}/accounts/{account}/{case.segment}/{created['id']}"

    response = await client.put(url, json=case.replace, headers=ADMIN)
    assert response.status == 200, await response.text()
    replaced = (await response.json())["data"]
    for field, value in case.replace.items():
        assert replaced[field] == value, field
    field, default = case.dropped
    assert created[field] != default and replaced[field] == default
    assert replaced["id"] == created["id"] and replaced["created_at"] == created["created_at"]
    assert replaced["updated_at"] > created["updated_at"]
    assert await read(client, account, case.segment, created["id"]) == replaced

    field, value = case.patch
    assert replaced[field] != value
    response = await client.patch(url, json={field: value}, headers=ADMIN)
    assert response.status == 200, await response.text()
    patched = (await response.json())["data"]
    assert patched[field] == value
    assert patched["updated_at"] > replaced["updated_at"]
    untouched = {k: v for k, v in replaced.items() if k not in {field, "updated_at", "status"}}
    assert {k: patched[k] for k in untouched} == untouched
    assert await read(client, account, case.segment, created["id"]) == patched

    # A patch that changes nothing is not an update.
    response = await client.patch(url, json={field: value}, headers=ADMIN)
    assert response.status == 200
    assert (await response.json())["data"] == patched

    # Delete: 204, then every item method is 404, as for an id that never existed; the other item stays.
    kept = await create(client, account, case.segment, case.body(1))
    response = await client.delete(url, headers=ADMIN)
    assert response.status == 204
    never = f"{API}/accounts/{account}/{case.segment}/0f0f0f0f-0000-4000-8000-000000000000"
    for target in (url, never):
        for method, body in (("GET", None), ("PUT", case.replace), ("PATCH", dict([case.patch])),
                             ("DELETE", None)):
            gone = await client.request(method, target, json=body, headers=ADMIN)
            assert gone.status == 404, (method, target)
            assert set(await gone.json()) == {"error", "details"}
    listed = await (await client.get(f"{API}/accounts/{account}/{case.segment}", headers=ADMIN)).json()
    assert listed["count"] == 1 and listed["data"] == [kept]


async def test_tiers_list_by_level_and_campaigns_by_order(client: TestClient) -> None:
    account = await new_account(client)
    for name, level in (("Gold", 3), ("Bronze", 1), ("Silver", 2.5)):
        await create(client, account, "tiers", {"name": name, "level": level})
    for name, order in (("Late", 9), ("First", -1), ("Middle", 1.5)):
        await create(client, account, "campaigns", {"name": name, "type": "COUPONS", "order": order})
    tiers = await (await client.get(f"{API}/accounts/{account}/tiers", headers=ADMIN)).json()
    campaigns = await (await client.get(f"{API}/accounts/{account}/campaigns", headers=ADMIN)).json()
    assert [t["name"] for t in tiers["data"]] == ["Bronze", "Silver", "Gold"]
    assert [c["name"] for c in campaigns["data"]] == ["First", "Middle", "Late"]


# --- links ----------------------------------------------------------------------------------------------

async def test_generated_link_code_is_seven_base62_characters_and_kept_on_replace(client: TestClient) -> None:
    account = await new_account(client)
    codes = set()
    for n in range(5):
        link = await create(client, account, "links", BY_SEGMENT["links"].body(n))
        assert re.fullmatch(r"[A-Za-z0-9]{7}", link["code"]), link["code"]
        codes.add(link["code"])
    assert len(codes) == 5
    url = f"{API}/accounts/{account}/links/{link['id']}"
    replaced = (await (await client.put(url, json=BY_SEGMENT["links"].replace, headers=ADMIN)).json())["data"]
    assert replaced["code"] == link["code"]


async def test_taken_link_code_is_409_in_any_account(seeded: TestClient) -> None:
    # tests.factories gives account A's link the code "lnkaaaa"; codes are unique across accounts.
    body = {"kind": "email", "destination_url": "https://shop.example/", "code": "lnkaaaa"}
    for owner in (A, B):
        response = await seeded.post(f"{API}/accounts/{owner}/links", json=body, headers=ADMIN)
        assert response.status == 409, owner
        assert (await response.json())["details"]["field"] == "code"


async def test_changing_a_link_code_to_a_taken_one_is_409(seeded: TestClient) -> None:
    url = f"{API}/accounts/{B}/links/{ids(B)['links']}"
    response = await seeded.patch(url, json={"code": "lnkaaaa"}, headers=ADMIN)
    assert response.status == 409
    assert (await read(seeded, B, "links", ids(B)["links"]))["code"] == "lnkbbbb"


async def test_reserved_link_codes_are_refused(seeded: TestClient) -> None:
    codes = ["api", "API", "healthz", "metrics", "readyz", "static", "dashboard"]
    found = {}
    for code in codes:
        body = {"kind": "email", "destination_url": "https://shop.example/", "code": code}
        response = await seeded.post(f"{API}/accounts/{A}/links", json=body, headers=ADMIN)
        found[code] = (response.status, (await response.json())["details"]["field"])
    assert found == {code: (400, "code") for code in codes}


async def test_a_chosen_link_code_is_kept(seeded: TestClient) -> None:
    body = {"kind": "whatsapp", "destination_url": "https://shop.example/?utm_source=x#frag", "code": "Promo-2025"}
    link = await create(seeded, A, "links", body)
    assert link["code"] == "Promo-2025"
    assert link["destination_url"] == "https://shop.example/?utm_source=x#frag"


# --- connections: secrets -----------------------------------------------------------------------------

SECRET = "whsec_dGVzdHNlY3JldHRlc3RzZWNyZXR0ZXN0c2VjcmV0MTI="


async def stored_connection(client: TestClient, account: str, doc_id: str) -> dict[str, Any]:
    row = await documents.get(client.app[DB].reader, "connections", account, doc_id)
    assert row is not None
    return dict(row.body)


async def test_connection_secrets_are_masked_in_every_response(seeded: TestClient) -> None:
    body = {"event_types": ["PURCHASE"],
            "destination": "meta", "config": {"endpoint_url": "https://graph.example.com/v1",
                                              "access_token": "EAAB-very-secret", "pixel_id": "123"}}
    created = await create(seeded, A, "connections", body)
    assert created["config"] == {"endpoint_url": "https://graph.example.com/v1", "access_token": "********",
                                 "pixel_id": "123"}
    for url in (f"{API}/accounts/{A}/connections/{created['id']}", f"{API}/accounts/{A}/connections"):
        text = await (await seeded.get(url, headers=ADMIN)).text()
        assert "EAAB-very-secret" not in text and SECRET not in text
    seeded_view = await read(seeded, A, "connections", ids(A)["connections"])
    assert seeded_view["config"]["secret"] == "********"


async def test_patch_sending_the_mask_back_keeps_the_stored_secret(seeded: TestClient) -> None:
    doc_id = ids(A)["connections"]
    shown = await read(seeded, A, "connections", doc_id)
    config = {**shown["config"], "endpoint_url": "https://hooks.example.com/v2"}
    assert config["secret"] == "********"
    response = await seeded.patch(f"{API}/accounts/{A}/connections/{doc_id}",
                                  json={"config": config, "enabled": True}, headers=ADMIN)
    assert response.status == 200, await response.text()
    assert (await response.json())["data"]["config"]["endpoint_url"] == "https://hooks.example.com/v2"
    stored = await stored_connection(seeded, A, doc_id)
    assert stored["config"] == {"endpoint_url": "https://hooks.example.com/v2", "secret": SECRET}
    assert stored["enabled"] is True


async def test_patch_with_a_new_secret_replaces_it(seeded: TestClient) -> None:
    doc_id = ids(A)["connections"]
    new_secret = "whsec_bmV3c2VjcmV0bmV3c2VjcmV0bmV3c2VjcmV0bmV3MTI="
    config = {"endpoint_url": "https://hooks.example.com/in", "secret": new_secret}
    response = await seeded.patch(f"{API}/accounts/{A}/connections/{doc_id}", json={"config": config},
                                  headers=ADMIN)
    assert response.status == 200
    assert (await response.json())["data"]["config"]["secret"] == "********"
    assert (await stored_connection(seeded, A, doc_id))["config"]["secret"] == new_secret


async def test_nested_connection_secrets_are_masked(seeded: TestClient) -> None:
    body = {"event_types": ["PURCHASE"], "destination": "s3_export",
            "config": {"bucket": "exports", "credentials": {"access_key_id": "AKIA1", "secret_access_key": "s3cr3t"}}}
    created = await create(seeded, A, "connections", body)
    text = await (await seeded.get(f"{API}/accounts/{A}/connections/{created['id']}", headers=ADMIN)).text()
    assert created["config"]["bucket"] == "exports"
    assert "s3cr3t" not in text


async def test_secrets_held_in_lists_objects_and_header_names_are_masked_and_kept(seeded: TestClient) -> None:
    config = {"endpoint_url": "https://hooks.example.com/in", "api_keys": ["sk-one", "sk-two"],
              "tokens": {"refresh": "rt-1", "scope": "ads"}, "headers": {"X-Api-Key": "hk-1", "Accept": "json"},
              "Authorization": "Bearer ab-1", "passwd": "pw-1", "apikey": "ak-1", "use_tokens": True, "secret": SECRET}
    created = await create(seeded, A, "connections", {"event_types": ["PURCHASE"],
                                                      "destination": "webhook", "config": config})
    assert created["config"] == {
        "endpoint_url": "https://hooks.example.com/in", "api_keys": ["********", "********"],
        "tokens": {"refresh": "********", "scope": "********"}, "headers": {"X-Api-Key": "********",
                                                                          "Accept": "json"},
        "Authorization": "********", "passwd": "********", "apikey": "********", "use_tokens": True,
        "secret": "********"}
    # The shown config sent back with one list item changed keeps every other stored secret.
    edited = {**created["config"], "api_keys": ["********", "sk-three"]}
    response = await seeded.patch(f"{API}/accounts/{A}/connections/{created['id']}", json={"config": edited},
                                  headers=ADMIN)
    assert response.status == 200, await response.text()
    assert (await stored_connection(seeded, A, created["id"]))["config"] == {**config,
                                                                             "api_keys": ["sk-one", "sk-three"]}


async def test_put_sending_the_mask_back_keeps_the_stored_secret(seeded: TestClient) -> None:
    body = {"event_types": ["PURCHASE"],
            "destination": "meta", "config": {"endpoint_url": "https://graph.example.com/v1",
                                              "access_token": "EAAB-very-secret"}}
    created = await create(seeded, A, "connections", body)
    editable = {k: v for k, v in created.items() if k not in {"created_at", "updated_at"}}
    response = await seeded.put(f"{API}/accounts/{A}/connections/{created['id']}",
                                json={**editable, "enabled": False}, headers=ADMIN)
    assert response.status == 200
    assert (await stored_connection(seeded, A, created["id"]))["config"]["access_token"] == "EAAB-very-secret"


# --- campaigns: computed status and coupon codes -------------------------------------------------------

PAST, LONG_AGO, FUTURE = "2001-01-01T00:00:00Z", "2000-01-01T00:00:00Z", "2999-01-01T00:00:00Z"


STATUS_TABLE: list[tuple[dict[str, Any], str]] = [
    ({"finished_at": PAST}, "FINISHED"),
    ({"finished_at": PAST, "starts_at": LONG_AGO, "ends_at": FUTURE}, "FINISHED"),
    ({"ends_at": PAST}, "FINISHED"),
    ({"ends_at": PAST, "paused": True}, "FINISHED"),
    ({"paused": True}, "PAUSED"),
    ({"paused": True, "starts_at": FUTURE}, "PAUSED"),
    ({"starts_at": FUTURE}, "SCHEDULED"),
    ({"starts_at": FUTURE, "ends_at": "2999-06-01T00:00:00Z"}, "SCHEDULED"),
    ({}, "RUNNING"),
    ({"starts_at": PAST, "ends_at": FUTURE}, "RUNNING"),
]


async def test_campaign_status_is_computed_on_read(seeded: TestClient) -> None:
    expected, created, read_back = {}, {}, {}
    for n, (fields, status) in enumerate(STATUS_TABLE):
        campaign = await create(seeded, A, "campaigns", {"name": f"S{n}", "type": "PUNCH_CARDS", **fields})
        expected[campaign["id"]] = status
        created[campaign["id"]] = campaign["status"]
        read_back[campaign["id"]] = (await read(seeded, A, "campaigns", campaign["id"]))["status"]
    assert created == expected
    assert read_back == expected
    listed = await (await seeded.get(f"{API}/accounts/{A}/campaigns", headers=ADMIN)).json()
    assert {c["id"]: c["status"] for c in listed["data"] if c["id"] in expected} == expected


async def test_status_follows_a_patch(seeded: TestClient) -> None:
    created = await create(seeded, A, "campaigns", {"name": "S", "type": "PUNCH_CARDS"})
    url = f"{API}/accounts/{A}/campaigns/{created['id']}"
    for patch, status in (({"paused": True}, "PAUSED"), ({"paused": False}, "RUNNING"),
                          ({"finished_at": PAST}, "FINISHED"), ({"finished_at": None}, "RUNNING")):
        response = await seeded.patch(url, json=patch, headers=ADMIN)
        assert (await response.json())["data"]["status"] == status, patch


async def test_coupon_codes_are_returned_and_survive_a_patch(seeded: TestClient) -> None:
    body = {"name": "Coupons", "type": "COUPONS", "codes": [
        {"code": "B-2", "status": "REDEEMED"},
        {"code": "A-1"},
        {"code": "C-3", "status": "RESERVED", "expires_at": "2030-01-01T00:00:00Z"},
    ]}
    expected = [
        {"code": "A-1", "status": "AVAILABLE", "expires_at": None},
        {"code": "B-2", "status": "REDEEMED", "expires_at": None},
        {"code": "C-3", "status": "RESERVED", "expires_at": "2030-01-01T00:00:00.000000Z"},
    ]
    created = await create(seeded, A, "campaigns", body)
    assert created["codes"] == expected
    url = f"{API}/accounts/{A}/campaigns/{created['id']}"
    patched = (await (await seeded.patch(url, json={"name": "Renamed"}, headers=ADMIN)).json())["data"]
    assert patched["codes"] == expected
    replaced = (await (await seeded.patch(url, json={"codes": [{"code": "Z-9"}]}, headers=ADMIN)).json())["data"]
    assert replaced["codes"] == [{"code": "Z-9", "status": "AVAILABLE", "expires_at": None}]


async def test_other_campaign_types_have_no_codes(seeded: TestClient) -> None:
    campaign = await read(seeded, A, "campaigns", ids(A)["campaigns"])
    assert campaign["type"] == "BEHAVIOR"
    assert campaign.get("codes") is None
    response = await seeded.post(f"{API}/accounts/{A}/campaigns",
                                 json={"name": "P", "type": "PUNCH_CARDS", "codes": [{"code": "X"}]}, headers=ADMIN)
    assert response.status == 400


# --- customers: the wallet ----------------------------------------------------------------------------

async def test_customer_wallet_lines_and_totals(seeded: TestClient) -> None:
    points = ids(A)["rewards"]
    stars = (await create(seeded, A, "rewards", {"name": "Stars"}))["id"]
    lines = [
        {"amount": 100, "reward_id": points, "expiration_date": "2031-01-01T00:00:00Z"},
        {"amount": 50, "reward_id": points, "expiration_date": "2030-06-01T00:00:00Z"},
        {"amount": 25, "reward_id": points},
        {"amount": 1000, "reward_id": points, "expiration_date": "2001-01-01T00:00:00Z"},  # expired
        {"amount": 0.1, "reward_id": stars},
        {"amount": 0.2, "reward_id": stars},
    ]
    customer = await create(seeded, A, "customers", {"id": "wallet-1", "name": "W", "wallet": {"lines": lines}})
    assert customer == await read(seeded, A, "customers", "wallet-1")
    wallet = customer["wallet"]
    assert wallet["owner_id"] == "wallet-1"
    assert sorted(line["amount"] for line in wallet["lines"]) == [0.1, 0.2, 25, 50, 100]
    assert all(line["expiration_date"] != "2001-01-01T00:00:00.000000Z" for line in wallet["lines"])
    totals = {t["reward_id"]: t for t in wallet["totals"]}
    assert set(totals) == {points, stars}
    assert totals[points]["total"] == 175
    assert totals[points]["expiration_date"] == "2030-06-01T00:00:00.000000Z"
    assert totals[points]["reward"]["name"] == "Points"
    assert totals[points]["reward"]["account_id"] == A
    assert totals[stars]["total"] == 0.3  # decimal arithmetic: not 0.30000000000000004
    assert totals[stars]["expiration_date"] is None


async def test_patching_a_customer_keeps_its_wallet(seeded: TestClient) -> None:
    before = await read(seeded, A, "customers", ids(A)["customers"])
    assert [t["total"] for t in before["wallet"]["totals"]] == [100]
    response = await seeded.patch(f"{API}/accounts/{A}/customers/{ids(A)['customers']}", json={"name": "Ana M"},
                                  headers=ADMIN)
    after = (await response.json())["data"]
    assert after["name"] == "Ana M"
    assert after["wallet"] == before["wallet"]


async def test_customer_without_lines_has_an_empty_wallet(seeded: TestClient) -> None:
    customer = await create(seeded, A, "customers", {"name": "Empty"})
    assert customer["wallet"]["lines"] == [] and customer["wallet"]["totals"] == []
    assert customer["wallet"]["owner_id"] == customer["id"]


async def test_duplicate_customer_document_number_is_409(seeded: TestClient) -> None:
    response = await seeded.post(f"{API}/accounts/{A}/customers", json={"document_number": "CC100"}, headers=ADMIN)
    assert response.status == 409
    assert (await response.json())["details"]["field"] == "document_number"
