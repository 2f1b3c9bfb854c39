"""Admin API validation: a bad body is a 400 ``{error, details}`` whose ``details.field`` names the bad field.

Each table runs in one test (building an app costs about 0.1 s); the assertion compares the whole table,
so a failure shows every case that went wrong at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from linksvc.app import create_app
from linksvc.settings import Settings
from tests.conftest import ADMIN, service_server
from tests.factories import ADMIN_TOKEN, A, B, ids

API = "/api/admin/v1"
WHSEC = "whsec_dGVzdHNlY3JldHRlc3RzZWNyZXR0ZXN0c2VjcmV0MTI="
SHORT_WHSEC = "whsec_MTIzNDU2Nzg5MDEyMzQ1Ng=="  # 16 bytes: below the 24 a signing secret needs
BAD_OP = [[{"type": "Order Value", "operator": "about", "value": 1}]]

# (resource segment, body, the field that details.field must name)
BAD_BODIES: list[tuple[str, dict[str, Any], str]] = [
    ("campaigns", {"name": "C", "type": "COUPONS", "stores": "x"}, "stores"),
    ("campaigns", {"name": "C", "type": "LOTTERY"}, "type"),
    ("campaigns", {"name": "C", "type": "COUPONS", "starts_at": "soon"}, "starts_at"),
    ("campaigns", {"name": "C", "type": "COUPONS", "tier_ids": ["not-a-uuid"]}, "tier_ids[0]"),
    ("campaigns", {"name": "C", "type": "COUPONS", "codes": [{"code": "A", "status": "LOST"}]}, "codes[0].status"),
    ("campaigns", {"type": "COUPONS"}, "name"),
    ("tiers", {"name": "T", "level": 1, "entry_conditions": BAD_OP}, "entry_conditions[0][0].operator"),
    ("tiers", {"name": "T", "level": 1, "exit_conditions": [[{"type": "Mood", "operator": "equal", "value": 1}]]},
     "exit_conditions[0][0].type"),
    ("tiers", {"name": "T"}, "level"),
    ("tiers", {"name": "T", "level": True}, "level"),
    ("links", {"kind": "email", "destination_url": "http://shop.example/"}, "destination_url"),
    ("links", {"kind": "email", "destination_url": "javascript:alert(1)"}, "destination_url"),
    ("links", {"kind": "email", "destination_url": "https:///no-host"}, "destination_url"),
    ("links", {"kind": "email", "destination_url": "https://s.example/", "fallback_url": "ftp://s.example/"},
     "fallback_url"),
    ("links", {"kind": "email", "destination_url": "https://s.example/", "android": {"package": "nodots"}},
     "android.package"),
    ("links", {"kind": "email", "destination_url": "https://s.example/",
               "ios": {"fallback_url": "mailto:a@b.example"}}, "ios.fallback_url"),
    ("links", {"kind": "email", "destination_url": "https://s.example/", "code": "a!"}, "code"),
    ("links", {"kind": "sms", "destination_url": "https://s.example/"}, "kind"),
    ("customers", {"document_number": "x" * 51}, "document_number"),
    ("customers", {"email": "not-an-email"}, "email"),
    ("customers", {"consent": {"purposes": {"telepathy": True}}}, "consent.purposes.telepathy"),
    ("customers", {"wallet": {"lines": [{"amount": 0, "reward_id": ids(A)["rewards"]}]}}, "wallet.lines[0].amount"),
    ("customers", {"id": "has space"}, "id"),
    ("brands", {"name": "B", "colour": "red"}, "colour"),
    ("brands", {"name": ""}, "name"),
    ("rewards", {"name": "R", "attributes": {"conversion_factor": -1}}, "attributes.conversion_factor"),
    ("contacts", {"dob": "yesterday"}, "dob"),
    ("connections", {"event_types": ["PURCHASE"], "destination": "slack"}, "destination"),
    ("connections", {"event_types": ["PURCHASE"],
                     "destination": "webhook", "config": {"endpoint_url": "https://h.example/",
                                                          "secret": SHORT_WHSEC}}, "config.secret"),
    ("connections", {"event_types": ["PURCHASE"],
                     "destination": "webhook", "config": {"endpoint_url": "https://h.example/",
                                                          "secret": "whsec_not base64!"}}, "config.secret"),
    ("connections", {"event_types": ["PURCHASE"],
                     "destination": "webhook", "config": {"endpoint_url": "https://h.example/", "secret": WHSEC,
                                                          "previous_secret": WHSEC}},
     "config.previous_secret_expires_at"),
    ("connections", {"event_types": ["PURCHASE"],
                     "destination": "webhook", "config": {"endpoint_url": "https://h.example/",
                                                          "secret": "not-a-whsec-secret"}}, "config.secret"),
    ("connections", {"event_types": ["PURCHASE"],
                     "destination": "webhook", "config": {"secret": WHSEC}}, "config.endpoint_url"),
    ("connections", {"event_types": ["PURCHASE"],
                     "destination": "messaging", "config": {"endpoint_url": 5}}, "config.endpoint_url"),
    ("connections", {"event_types": ["PURCHASE"],
                     "destination": "messaging", "config": {"endpoint_url": "ftp://h.example/"}},
     "config.endpoint_url"),
    ("custom-event-types", {"name": "1starts-with-a-digit"}, "name"),
    ("campaigns", {"name": "C", "type": "BEHAVIOR",
                   "attributes": {"reward_id": "0f0f0f0f-0000-4000-8000-000000000000"}}, "attributes.reward_id"),
]


async def bad_fields(client: TestClient, method: str, cases: list[tuple[str, Any, str]]) -> dict[int, Any]:
    """Sends each case; returns, by case index, (status, body keys, details.field)."""
    found = {}
    for n, (url, body, _) in enumerate(cases):
        response = await client.request(method, url, json=body, headers=ADMIN)
        payload = await response.json()
        details = payload.get("details")
        found[n] = (response.status, sorted(payload), details.get("field") if isinstance(details, dict) else details)
    return found


async def count(client: TestClient, account: str, segment: str) -> int:
    response = await client.get(f"{API}/accounts/{account}/{segment}", headers=ADMIN)
    return int((await response.json())["count"])


async def test_bad_create_bodies_name_the_field(seeded: TestClient) -> None:
    cases = [(f"{API}/accounts/{A}/{segment}", body, field) for segment, body, field in BAD_BODIES]
    found = await bad_fields(seeded, "POST", cases)
    assert found == {n: (400, ["details", "error"], field) for n, (_, _, field) in enumerate(cases)}
    for segment in {segment for segment, _, _ in BAD_BODIES}:
        assert await count(seeded, A, segment) == 1, segment  # only the seeded one


async def test_bad_patches_name_the_field_and_change_nothing(seeded: TestClient) -> None:
    mine = ids(A)
    table = [
        ("brands", {"colour": "red"}, "colour"),
        ("brands", {"name": None}, "name"),
        ("brands", {"id": mine["tiers"]}, "id"),
        ("tiers", {"entry_conditions": BAD_OP}, "entry_conditions[0][0].operator"),
        ("links", {"destination_url": "http://shop.example/"}, "destination_url"),
        ("links", {"code": "api"}, "code"),
        ("campaigns", {"stores": "x"}, "stores"),
        ("customers", {"document_number": "y" * 51}, "document_number"),
        ("connections", {"config": {"endpoint_url": "https://h.example/"}}, "config.secret"),
    ]
    before = {}
    for segment, _, _ in table:
        before[segment] = await (await seeded.get(f"{API}/accounts/{A}/{segment}/{mine[segment]}",
                                                  headers=ADMIN)).json()
    cases = [(f"{API}/accounts/{A}/{segment}/{mine[segment]}", body, field) for segment, body, field in table]
    found = await bad_fields(seeded, "PATCH", cases)
    assert found == {n: (400, ["details", "error"], field) for n, (_, _, field) in enumerate(cases)}
    for segment, _, _ in table:
        after = await (await seeded.get(f"{API}/accounts/{A}/{segment}/{mine[segment]}", headers=ADMIN)).json()
        assert after == before[segment], segment


async def test_bad_put_names_the_field(seeded: TestClient) -> None:
    url = f"{API}/accounts/{A}/tiers/{ids(A)['tiers']}"
    response = await seeded.put(url, json={"name": "Gold", "level": 2, "entry_conditions": BAD_OP}, headers=ADMIN)
    assert response.status == 400
    assert (await response.json())["details"]["field"] == "entry_conditions[0][0].operator"


@pytest.mark.parametrize(
    ("segment", "body", "field"),
    [
        pytest.param(
            "campaigns",
            {"name": "C", "type": "BEHAVIOR", "attributes": {"event_type": "PURCHASE", "conditions": BAD_OP}},
            "attributes.conditions[0][0].operator",
            id="behavior-attributes-condition",
        ),
        pytest.param(
            "campaigns", {"name": "C", "type": "BEHAVIOR", "attributes": {"amount": -1}}, "attributes.amount",
            id="behavior-attributes-amount",
        ),
        pytest.param(
            "campaigns", {"name": "C", "type": "BEHAVIOR", "codes": [{"code": "X1"}]}, "codes",
            id="codes-on-behavior",
        ),
        pytest.param(
            "custom-event-types", {"name": "purchase"}, "name",
            id="purchase-event-type",
        ),
    ],
)
async def test_model_rules_name_the_field(seeded: TestClient, segment: str, body: dict[str, Any], field: str) -> None:
    response = await seeded.post(f"{API}/accounts/{A}/{segment}", json=body, headers=ADMIN)
    assert response.status == 400
    assert (await response.json())["details"]["field"] == field


async def test_references_to_another_accounts_resources_are_refused(seeded: TestClient) -> None:
    theirs = ids(B)
    table = [
        ("campaigns", {"name": "C", "type": "COUPONS", "brand_id": theirs["brands"]}, "brand_id"),
        ("campaigns", {"name": "C", "type": "COUPONS", "tier_ids": [ids(A)["tiers"], theirs["tiers"]]},
         "tier_ids[1]"),
        ("campaigns", {"name": "C", "type": "BEHAVIOR", "attributes": {"reward_id": theirs["rewards"]}},
         "attributes.reward_id"),
        ("links", {"kind": "campaign", "destination_url": "https://s.example/", "campaign_id": theirs["campaigns"]},
         "campaign_id"),
        ("customers", {"tier_id": theirs["tiers"]}, "tier_id"),
        ("customers", {"wallet": {"lines": [{"amount": 1, "reward_id": theirs["rewards"]}]}},
         "wallet.lines[0].reward_id"),
    ]
    cases = [(f"{API}/accounts/{A}/{segment}", body, field) for segment, body, field in table]
    found = await bad_fields(seeded, "POST", cases)
    assert found == {n: (400, ["details", "error"], field) for n, (_, _, field) in enumerate(cases)}
    for segment in ("campaigns", "links", "customers"):
        assert await count(seeded, A, segment) == 1
    # The same references inside account B are fine.
    ok = await seeded.post(f"{API}/accounts/{B}/campaigns",
                           json={"name": "C", "type": "COUPONS", "brand_id": theirs["brands"]}, headers=ADMIN)
    assert ok.status == 201


async def test_an_id_of_another_account_cannot_be_taken(seeded: TestClient) -> None:
    response = await seeded.post(f"{API}/accounts/{A}/brands", json={"id": ids(B)["brands"], "name": "Mine"},
                                 headers=ADMIN)
    assert response.status == 409
    brand = await (await seeded.get(f"{API}/accounts/{B}/brands/{ids(B)['brands']}", headers=ADMIN)).json()
    assert brand["data"]["name"] == "Brand of bbbb"


async def test_a_body_that_is_not_a_json_object_is_400(seeded: TestClient) -> None:
    bodies = {"malformed": b"{not json", "empty": b"", "array": b"[1, 2]", "string": b'"a string"',
              "not utf-8": b"\xff\xfe", "null": b"null"}
    found = {}
    for label, raw in bodies.items():
        response = await seeded.post(f"{API}/accounts/{A}/brands", data=raw,
                                     headers={**ADMIN, "Content-Type": "application/json"})
        found[label] = (response.status, sorted(await response.json()))
    assert found == {label: (400, ["details", "error"]) for label in bodies}
    assert await count(seeded, A, "brands") == 1


# --- connections to private addresses, with private destinations not allowed ----------------------------

@pytest.fixture
async def strict_client(aiohttp_client: Any, tmp_path: Path) -> TestClient:
    settings = Settings(db_path=str(tmp_path / "strict.db"), admin_token=ADMIN_TOKEN, load_demo=False,
                        allow_private_destinations=False, db_synchronous="NORMAL")
    client: TestClient = await aiohttp_client(service_server(create_app(settings)))
    return client


PRIVATE_URLS = [
    "http://127.0.0.1/hook", "http://127.0.0.1:9000/x", "https://localhost/x", "http://LOCALHOST./x",
    "http://api.localhost/x", "http://printer.local/x", "http://10.0.0.5/x", "http://172.16.3.4/x",
    "http://192.168.1.10/x", "http://169.254.169.254/latest/meta-data", "http://[::1]:8080/x", "http://[fd00::1]/x",
    "http://0.0.0.0/x", "http://[::ffff:127.0.0.1]/x",
]


async def test_private_endpoints_are_refused_unless_allowed(strict_client: TestClient) -> None:
    created = await strict_client.post(f"{API}/accounts", json={"name": "Strict"}, headers=ADMIN)
    account = (await created.json())["data"]["id"]
    url = f"{API}/accounts/{account}/connections"
    cases = [(url, {"event_types": ["PURCHASE"],
                    "destination": "messaging", "config": {"endpoint_url": endpoint}}, "config.endpoint_url")
             for endpoint in PRIVATE_URLS]
    cases.append((url, {"event_types": ["PURCHASE"],
                        "destination": "webhook", "config": {"endpoint_url": "http://127.0.0.1/h", "secret": WHSEC}},
                  "config.endpoint_url"))
    found = await bad_fields(strict_client, "POST", cases)
    assert found == {n: (400, ["details", "error"], "config.endpoint_url") for n in range(len(cases))}
    assert await count(strict_client, account, "connections") == 0

    public = await strict_client.post(url, json={"event_types": ["PURCHASE"], "destination": "webhook", "config": {
        "endpoint_url": "https://hooks.example.com/in", "secret": WHSEC}}, headers=ADMIN)
    assert public.status == 201
    connection_id = (await public.json())["data"]["id"]
    moved = await strict_client.patch(f"{url}/{connection_id}", json={"config": {
        "endpoint_url": "http://192.168.0.2/in", "secret": "********"}}, headers=ADMIN)
    assert moved.status == 400
    assert (await moved.json())["details"]["field"] == "config.endpoint_url"
    kept = await (await strict_client.get(f"{url}/{connection_id}", headers=ADMIN)).json()
    assert kept["data"]["config"]["endpoint_url"] == "https://hooks.example.com/in"


async def test_private_endpoints_are_accepted_when_allowed(seeded: TestClient) -> None:
    # The shared fixtures turn LINKSVC_ALLOW_PRIVATE_DESTINATIONS on, as tests against local servers need.
    body = {"event_types": ["PURCHASE"],
            "destination": "webhook", "config": {"endpoint_url": "http://127.0.0.1:9000/x", "secret": WHSEC}}
    response = await seeded.post(f"{API}/accounts/{A}/connections", json=body, headers=ADMIN)
    assert response.status == 201
    assert (await response.json())["data"]["config"]["endpoint_url"] == "http://127.0.0.1:9000/x"


# --- values out of range: a 400 (or stored exactly), never a 500 ---------------------------------------

async def test_huge_numbers_are_not_a_500(seeded: TestClient) -> None:
    reward = ids(A)["rewards"]
    table = [
        ("tiers", {"name": "T", "level": 1e20}),
        ("tiers", {"name": "T", "level": 123456789012345678901234567890}),
        ("tiers", {"name": "T", "level": "1E+5000"}),
        ("tiers", {"name": "T", "level": 1, "entry_conditions": [[{"type": "Order Value", "operator": "equal",
                                                                     "value": 1e20}]]}),
        ("campaigns", {"name": "C", "type": "COUPONS", "order": 1e308}),
        ("rewards", {"name": "R", "attributes": {"conversion_factor": 1e30}}),
        ("customers", {"wallet": {"lines": [{"amount": 1e308, "reward_id": reward}]}}),
    ]
    found = {}
    for n, (segment, body) in enumerate(table):
        response = await seeded.post(f"{API}/accounts/{A}/{segment}", json=body, headers=ADMIN)
        found[n] = response.status
    assert {n: status for n, status in found.items() if status not in (201, 400)} == {}


async def test_date_times_beyond_the_calendar_are_400(seeded: TestClient) -> None:
    table = [
        ("campaigns", {"name": "C", "type": "COUPONS", "starts_at": "9999-12-31T23:59:59-05:00"}, "starts_at"),
        ("customers", {"registration_date": "0001-01-01T00:00:00+01:00"}, "registration_date"),
    ]
    cases = [(f"{API}/accounts/{A}/{segment}", body, field) for segment, body, field in table]
    found = await bad_fields(seeded, "POST", cases)
    assert found == {n: (400, ["details", "error"], field) for n, (_, _, field) in enumerate(cases)}


async def test_a_huge_offset_is_not_a_500(seeded: TestClient) -> None:
    for url in (f"{API}/accounts/{A}/brands", f"{API}/accounts"):
        response = await seeded.get(url, params={"offset": str(2**63)}, headers=ADMIN)
        assert response.status in (200, 400), url


async def test_destination_urls_with_invalid_hosts_are_refused(seeded: TestClient) -> None:
    table = [
        ("links", {"kind": "email", "destination_url": "https://exa mple.com/"}, "destination_url"),
        ("links", {"kind": "email", "destination_url": "https://\u0000.com/"}, "destination_url"),
    ]
    cases = [(f"{API}/accounts/{A}/{segment}", body, field) for segment, body, field in table]
    found = await bad_fields(seeded, "POST", cases)
    assert found == {n: (400, ["details", "error"], field) for n, (_, _, field) in enumerate(cases)}
