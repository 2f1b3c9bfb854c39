"""POST /behavior/events, /behavior/events/bulk and /behavior/events/{id}/reverse (product decisions 8 and 9).

Every test ends by checking the ledger: each wallet line's amount equals the sum of its entries.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import DB
from linksvc.clock import iso, utcnow
from linksvc.jsoncodec import loads
from storage import wallet as wallet_repo
from storage.db import fetch_all, fetch_one
from tests.conftest import ADMIN, bearer, token_for
from tests.factories import A, B, ids

API = "/api/storefront/v1"
EVENTS = f"{API}/behavior/events"
CUSTOMER = "cust-aaaa"
REWARD = ids(A)["rewards"]
WELCOME = ids(A)["campaigns"]  # BEHAVIOR, PURCHASE, a fixed 10
OPENING = Decimal(100)


def purchase(order: str = "o-1", **fields: Any) -> dict[str, Any]:
    event = {"type": "PURCHASE", "customer_id": CUSTOMER, "order_id": order, "currency": "COP", "value": 50,
             "products": [{"sku": "LATTE-12"}]}
    event.update(fields)
    return event


@pytest.fixture
async def api(seeded: TestClient) -> AsyncIterator[tuple[TestClient, dict[str, str]]]:
    client = seeded
    yield client, bearer(await token_for(client, A))
    # After every scenario the ledger adds up, in both accounts.
    for account in (A, B):
        assert await wallet_repo.ledger_mismatches(client.app[DB].reader, account) == []


async def send(client: TestClient, headers: dict[str, str], event: Any, status: int = 202) -> dict[str, Any]:
    response = await client.post(EVENTS, json=event, headers=headers)
    body = await response.json()
    assert response.status == status, body
    return dict(body)


async def balance(client: TestClient, customer: str = CUSTOMER, reward: str = REWARD, account: str = A) -> Decimal:
    lines = await wallet_repo.unexpired_lines(client.app[DB].reader, account, customer, iso(utcnow()))
    return sum((line.amount for line in lines if line.reward_id == reward), Decimal(0))


async def stored(client: TestClient, event_id: str) -> dict[str, Any]:
    row = await fetch_one(client.app[DB].reader, "SELECT * FROM events WHERE id = ?", (event_id,))
    assert row is not None
    return {**dict(row), "body": loads(row["body"]), "effects": loads(row["effects"]),
            "reversal": loads(row["reversal"]) if row["reversal"] else None}


async def event_count(client: TestClient) -> int:
    row = await fetch_one(client.app[DB].reader, "SELECT count(*) AS n FROM events")
    return int(row["n"]) if row else 0


async def admin_put(client: TestClient, kind: str, doc: dict[str, Any], account: str = A) -> None:
    """Create or replace a document through the admin API."""
    base = f"/api/admin/v1/accounts/{account}/{kind}"
    response = await client.put(f"{base}/{doc['id']}", json=doc, headers=ADMIN)
    if response.status == 404:
        response = await client.post(base, json=doc, headers=ADMIN)
    assert response.status in (200, 201), await response.text()


async def campaign(client: TestClient, **attributes: Any) -> str:
    doc = {"id": "c0000000-0000-4000-8000-00000000c001", "name": "Earn", "type": "BEHAVIOR",
           "attributes": {"event_type": "PURCHASE", "reward_id": REWARD, **attributes.pop("attributes", {})}}
    doc.update(attributes)
    await admin_put(client, "campaigns", doc)
    return str(doc["id"])


async def pause_welcome(client: TestClient) -> None:
    response = await client.patch(f"/api/admin/v1/accounts/{A}/campaigns/{WELCOME}", json={"paused": True},
                                  headers=ADMIN)
    assert response.status == 200, await response.text()


# Ingest -----------------------------------------------------------------------------------------------------


async def test_a_purchase_is_accepted_stored_and_earns(api: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = api
    body = await send(client, headers, purchase())
    assert body["data"]["status"] == "accepted"
    event = await stored(client, body["data"]["id"])
    assert event["type"] == "PURCHASE" and event["customer_id"] == CUSTOMER and event["key_kind"] == "SERVER"
    assert event["body"]["order_id"] == "o-1" and event["body"]["products"] == [{"sku": "LATTE-12"}]
    # The welcome campaign issued 10 points into the wallet, with the campaign and the event on the line.
    assert await balance(client) == OPENING + 10
    assert [(i["campaign_id"], i["amount"]) for i in event["effects"]["issued"]] == [(WELCOME, "10")]
    line = await wallet_repo.line(client.app[DB].reader, event["effects"]["issued"][0]["line_id"])
    assert line is not None and line.event_id == event["id"] and line.campaign_id == WELCOME
    # The customer lookup shows it.
    response = await client.get(f"{API}/customers", params={"document_number": "CC100"}, headers=headers)
    totals = (await response.json())["data"]["wallet"]["totals"]
    assert [Decimal(str(t["total"])) for t in totals] == [OPENING + 10]


async def test_purchase_needs_a_server_key(api: tuple[TestClient, dict[str, str]]) -> None:
    client, _ = api
    client_headers = bearer(await token_for(client, A, "CLIENT"))
    body = await send(client, client_headers, purchase(), status=403)
    assert set(body) == {"error", "details"}
    assert await event_count(client) == 0
    # A CLIENT key may send custom events.
    await send(client, client_headers, {"type": "page_view", "customer_id": CUSTOMER})


@pytest.mark.parametrize(("missing", "field"), [("order_id", "order_id"), ("currency", "currency"),
                                                 ("products", "products")])
async def test_purchase_required_fields(api: tuple[TestClient, dict[str, str]], missing: str, field: str) -> None:
    client, headers = api
    event = purchase()
    del event[missing]
    body = await send(client, headers, event, status=400)
    assert body["details"]["field"] == field
    body = await send(client, headers, purchase(products=[]), status=400)
    assert body["details"]["field"] == "products"
    assert await event_count(client) == 0


@pytest.mark.parametrize(("event", "field"), [
    ({"type": "PURCHASE", "customer_id": CUSTOMER, "order_id": "x", "currency": "cop", "products": [{"sku": "a"}]},
     "currency"),
    ({"type": "PURCHASE", "customer_id": CUSTOMER, "order_id": "x", "currency": "COP", "products": [{"name": "a"}]},
     "products[0].sku"),
    ({"type": "PURCHASE", "customer_id": CUSTOMER, "order_id": "x", "currency": "COP", "products": [{"sku": "a"}],
      "value": -1}, "value"),
    ({"type": "page_view", "order_id": "x"}, "order_id"),
    ({"type": "page_view", "colour": "red"}, "colour"),
    ({"type": ""}, "type"),
    ({"type": "page_view", "issued_at": "yesterday"}, "issued_at"),
    ({"type": "page_view", "attribution": {"utm_source": 7}}, "attribution.utm_source"),
])
async def test_bad_fields_are_named(api: tuple[TestClient, dict[str, str]], event: dict[str, Any], field: str) -> None:
    client, headers = api
    body = await send(client, headers, event, status=400)
    assert body["details"]["field"] == field, body
    assert await event_count(client) == 0


async def test_a_body_that_is_not_an_event(api: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = api
    for raw in ([1, 2], "text", 3):
        body = await send(client, headers, raw, status=400)
        assert set(body) == {"error", "details"}


async def test_custom_types_must_be_active_in_the_account(api: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = api
    await send(client, headers, {"type": "page_view", "customer_id": CUSTOMER})
    body = await send(client, headers, {"type": "app_open", "customer_id": CUSTOMER}, status=400)
    assert body["details"]["field"] == "type"
    await admin_put(client, "custom-event-types", {"id": ids(A)["custom_event_types"], "name": "page_view",
                                                   "active": False})
    await send(client, headers, {"type": "page_view", "customer_id": CUSTOMER}, status=400)
    # Account B's types do not count for A.
    await admin_put(client, "custom-event-types", {"id": "b0000000-0000-4000-8000-0000000000e1", "name": "only_b"},
                    account=B)
    await send(client, headers, {"type": "only_b"}, status=400)


async def test_issued_at_defaults_to_now_and_may_not_be_far_ahead(api: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = api
    before = utcnow()
    body = await send(client, headers, {"type": "page_view"})
    event = await stored(client, body["data"]["id"])
    assert iso(before) <= event["issued_at"] <= iso(utcnow())
    assert event["customer_id"] is None  # no customer named: stored without one, earns nothing
    ahead = iso(utcnow() + timedelta(minutes=4))
    await send(client, headers, {"type": "page_view", "issued_at": ahead})
    body = await send(client, headers, {"type": "page_view", "issued_at": iso(utcnow() + timedelta(minutes=6))},
                      status=400)
    assert body["details"]["field"] == "issued_at"
    past = "2024-01-02T03:04:05.000000Z"
    body = await send(client, headers, {"type": "page_view", "issued_at": past})
    assert (await stored(client, body["data"]["id"]))["issued_at"] == past


async def test_the_same_order_again(api: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = api
    first = (await send(client, headers, purchase()))["data"]["id"]
    again = (await send(client, headers, purchase()))["data"]["id"]
    assert again == first
    assert await balance(client) == OPENING + 10  # earned once
    body = await send(client, headers, purchase(value=51), status=409)
    assert first in body["details"]
    assert await event_count(client) == 1
    # Order ids are per account: B may use the same one.
    b_headers = bearer(await token_for(client, B))
    await send(client, b_headers, purchase(customer_id="cust-bbbb"))


async def test_unknown_customer_is_stored_and_earns_nothing(api: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = api
    body = await send(client, headers, purchase(customer_id="nobody"))
    event = await stored(client, body["data"]["id"])
    assert event["customer_id"] is None and event["effects"]["issued"] == []
    # Identifiers that point at different customers name nobody.
    body = await send(client, headers, purchase("o-2", customer_id=None, document_number="CC100", phone="0000000000"))
    assert (await stored(client, body["data"]["id"]))["customer_id"] is None
    # Found by document number and phone digits.
    body = await send(client, headers, purchase("o-3", customer_id=None, document_number="CC100",
                                                 phone="573001234567"))
    assert (await stored(client, body["data"]["id"]))["customer_id"] == CUSTOMER
    # Another account's customer is not found.
    body = await send(client, headers, purchase("o-4", customer_id="cust-bbbb"))
    assert (await stored(client, body["data"]["id"]))["customer_id"] is None
    assert await balance(client, "cust-bbbb", ids(B)["rewards"], account=B) == OPENING


# Attribution ------------------------------------------------------------------------------------------------


ATTRIBUTION_CASES = [
    # (top level, attribution, properties) -> resolved
    ({"utm_source": "top"}, {"utm_source": "attr"}, {"utm_source": "legacy"}, {"utm_source": "top"}),
    ({"utm_source": ""}, {"utm_source": "attr"}, {"utm_source": "legacy"}, {"utm_source": "attr"}),
    ({"utm_source": None}, {"utm_source": "  "}, {"utm_source": "legacy"}, {"utm_source": "legacy"}),
    ({}, {"utm_medium": "email"}, {"utm_campaign": "spring"}, {"utm_medium": "email", "utm_campaign": "spring"}),
    ({"tracking_id": "t-1"}, {}, {}, {"tracking_id": "t-1"}),  # a tracking id alone fills nothing else
    ({}, {"utm_term": "", "revenue": 12.5, "cost": 3, "currency": "COP", "channel_group": "paid"}, {},
     {"revenue": 12.5, "cost": 3, "currency": "COP", "channel_group": "paid"}),
]


@pytest.mark.parametrize(("top", "nested", "legacy", "resolved"), ATTRIBUTION_CASES)
async def test_attribution_precedence(api: tuple[TestClient, dict[str, str]], top: dict[str, Any],
                                      nested: dict[str, Any], legacy: dict[str, Any],
                                      resolved: dict[str, Any]) -> None:
    client, headers = api
    event = {"type": "page_view", "customer_id": CUSTOMER, **top, "attribution": copy.deepcopy(nested),
             "properties": legacy}
    body = await send(client, headers, event)
    stored_event = (await stored(client, body["data"]["id"]))["body"]
    assert stored_event["attribution"] == resolved
    assert stored_event["attribution_original"] == nested  # untouched, empty values included
    assert stored_event["properties"] == legacy


async def test_analytics_identity_and_click_ids_are_stored_as_sent(api: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = api
    analytics = {"client_id": "123.456", "session_id": 1700000000, "session_number": 3, "engaged": True}
    click_ids = {"gclid": "Cj0KCQ", "fbp": "fb.1.1700000000.1"}
    body = await send(client, headers, purchase(analytics=analytics, click_ids=click_ids))
    event = (await stored(client, body["data"]["id"]))["body"]
    assert event["analytics"] == analytics and event["click_ids"] == click_ids
    assert "fbc" not in event["click_ids"]  # nothing made up
    body = await send(client, headers, purchase("o-2", click_ids={"fbc": "x", "made_up": "y"}), status=400)
    assert body["details"]["field"] == "click_ids.made_up"


# Earning ----------------------------------------------------------------------------------------------------


async def test_fixed_plus_per_currency_unit_with_expiry(api: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = api
    await pause_welcome(client)
    await campaign(client, attributes={"amount": 5, "per_currency_unit": "0.1", "expires_in_days": 30})
    body = await send(client, headers, purchase(value="123.45"))
    issued = (await stored(client, body["data"]["id"]))["effects"]["issued"]
    assert [Decimal(i["amount"]) for i in issued] == [Decimal("17.345")]
    expires = issued[0]["expiration_date"]
    assert iso(utcnow() + timedelta(days=29)) < expires < iso(utcnow() + timedelta(days=31))
    assert await balance(client) == OPENING + Decimal("17.345")


@pytest.mark.parametrize(("change", "earns"), [
    ({}, True),
    ({"stores": ["S1", "S2"]}, True),
    ({"stores": ["S9"]}, False),
    ({"stores": []}, False),
    ({"channels": ["app"]}, True),
    ({"channels": ["web"]}, False),
    ({"products": ["LATTE-12"]}, True),
    ({"products": ["TEA"]}, False),
    ({"paused": True}, False),
    ({"starts_at": "2999-01-01T00:00:00Z"}, False),
    ({"ends_at": "2001-01-01T00:00:00Z"}, False),
    ({"tier_ids": [ids(A)["tiers"]]}, False),  # the customer holds no tier
    ({"attributes": {"event_type": "page_view"}}, False),
    ({"attributes": {"conditions": [[{"type": "Order Value", "operator": "greater than", "value": 40}]]}}, True),
    ({"attributes": {"conditions": [[{"type": "Order Value", "operator": "grater than", "value": 50}]]}}, False),
    ({"attributes": {"conditions": [[{"type": "Order Value", "operator": "greater than", "value": 99}],
                                    [{"type": "Purchase Count", "operator": "equal", "value": 1}]]}}, True),
    ({"attributes": {"conditions": [[{"type": "Points Balance", "operator": "greater than or equal", "value": 100},
                                     {"type": "Total Order Value", "operator": "less than", "value": 50}]]}}, False),
])
async def test_who_earns(api: tuple[TestClient, dict[str, str]], change: dict[str, Any], earns: bool) -> None:
    client, headers = api
    await pause_welcome(client)
    attributes = {"amount": 7, **change.pop("attributes", {})}
    await campaign(client, attributes=attributes, **change)
    await send(client, headers, purchase(store_id="S1", channel_id="app"))
    assert await balance(client) == OPENING + (7 if earns else 0)


async def test_consent_refused_earns_nothing(api: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = api
    response = await client.patch(f"/api/admin/v1/accounts/{A}/customers/{CUSTOMER}",
                                  json={"consent": {"purposes": {"behavioral_campaigns": False}}}, headers=ADMIN)
    assert response.status == 200, await response.text()
    await send(client, headers, purchase())
    assert await balance(client) == OPENING


async def test_custom_events_earn_from_their_campaigns(api: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = api
    await campaign(client, attributes={"event_type": "page_view", "amount": 2})
    await send(client, headers, {"type": "page_view", "customer_id": CUSTOMER})
    assert await balance(client) == OPENING + 2


# Redeem ------------------------------------------------------------------------------------------------------


async def _lines(client: TestClient) -> list[dict[str, Any]]:
    rows = await fetch_all(client.app[DB].reader, "SELECT * FROM wallet_lines WHERE customer_id = ? ORDER BY id",
                           (CUSTOMER,))
    return [dict(r) for r in rows]


async def test_redeem_spends_the_earliest_expiring_first(api: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = api
    await pause_welcome(client)
    await campaign(client, attributes={"amount": 20, "expires_in_days": 10})
    await send(client, headers, purchase("o-1"))  # 20 expiring in 10 days, before the opening 100 (never)
    body = await send(client, headers, purchase("o-2", redeem=[{"id": REWARD, "amount": 30}]))
    spent = (await stored(client, body["data"]["id"]))["effects"]["spent"]
    by_line = {line["id"]: line for line in await _lines(client)}
    assert [(by_line[s["line_id"]]["source"], s["amount"]) for s in spent] == [("event", "20"), ("opening", "10")]
    assert await balance(client) == OPENING + 20 + 20 - 30  # the second purchase earned 20 too


async def test_redeeming_more_than_the_balance_is_refused_whole(api: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = api
    body = await send(client, headers, purchase(redeem=[{"id": REWARD, "amount": 101}]), status=400)
    assert body["details"]["field"] == "redeem[0].amount"
    assert await event_count(client) == 0 and await balance(client) == OPENING


# Tiers -------------------------------------------------------------------------------------------------------


SILVER = "a0000000-0000-4000-8000-0000000051e1"
GOLD = ids(A)["tiers"]


async def _tiers(client: TestClient) -> None:
    await admin_put(client, "tiers", {"id": SILVER, "name": "Silver", "level": 1})
    await admin_put(client, "tiers", {
        "id": GOLD, "name": "Gold", "level": 2,
        "entry_conditions": [[{"type": "Total Order Value", "operator": "greater than or equal", "value": 100}]],
        "exit_conditions": [[{"type": "Total Order Value", "operator": "less than", "value": 80}]],
    })


async def customer_tier(client: TestClient) -> str | None:
    row = await fetch_one(client.app[DB].reader, "SELECT tier_id, body FROM customers WHERE id = ?", (CUSTOMER,))
    assert row is not None and loads(row["body"]).get("tier_id") == row["tier_id"]
    return row["tier_id"]


async def test_tiers_follow_purchases_and_reversals(api: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = api
    await _tiers(client)
    first = (await send(client, headers, purchase("o-1", value=60)))["data"]["id"]
    assert await customer_tier(client) == SILVER  # no entry conditions: everyone
    second = (await send(client, headers, purchase("o-2", value=45)))["data"]["id"]
    assert await customer_tier(client) == GOLD  # 105 in total
    assert (await stored(client, second))["effects"]["tier"] == {"from": SILVER, "to": GOLD}
    # Reversing the 45 leaves 60 < 80: the exit conditions hold.
    response = await client.post(f"{EVENTS}/{second}/reverse", json={"reason": "returned"}, headers=headers)
    assert response.status == 200
    assert await customer_tier(client) == SILVER
    assert (await stored(client, second))["reversal"]["tier"] == {"from": GOLD, "to": SILVER}
    assert (await stored(client, first))["effects"]["tier"] == {"from": None, "to": SILVER}


async def test_a_tier_is_kept_until_its_exit_conditions_hold(api: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = api
    await _tiers(client)
    await send(client, headers, purchase("o-1", value=85))
    second = (await send(client, headers, purchase("o-2", value=20)))["data"]["id"]
    assert await customer_tier(client) == GOLD
    await client.post(f"{EVENTS}/{second}/reverse", json={"reason": "x"}, headers=headers)
    assert await customer_tier(client) == GOLD  # 85: below the entry, not below the exit
    assert (await stored(client, second))["reversal"]["tier"] is None


# Reversal -----------------------------------------------------------------------------------------------------


async def reverse(client: TestClient, headers: dict[str, str], event_id: str, status: int = 200,
                  reason: str = "customer returned it") -> dict[str, Any]:
    response = await client.post(f"{EVENTS}/{event_id}/reverse", json={"reason": reason}, headers=headers)
    body = await response.json()
    assert response.status == status, body
    return dict(body)


async def test_reversal_takes_back_and_gives_back(api: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = api
    event_id = (await send(client, headers, purchase(redeem=[{"id": REWARD, "amount": 30}])))["data"]["id"]
    assert await balance(client) == OPENING - 30 + 10
    body = await reverse(client, headers, event_id)
    assert body["data"]["id"] == event_id and body["data"]["reason"] == "customer returned it"
    assert body["data"]["reversed_at"].endswith("Z")
    assert await balance(client) == OPENING
    reversal = (await stored(client, event_id))["reversal"]
    assert [t["amount"] for t in reversal["taken_back"]] == ["10"] and reversal["shortfall"] == []
    assert [r["amount"] for r in reversal["returned"]] == ["30"]
    kinds = [e.kind for e in await wallet_repo.entries_of_customer(client.app[DB].reader, A, CUSTOMER)]
    assert kinds == ["opening", "spend", "issue", "reverse_issue", "reverse_spend"]
    # A second reversal is a conflict and changes nothing.
    body = await reverse(client, headers, event_id, status=409)
    assert set(body) == {"error", "details"}
    assert await balance(client) == OPENING


async def test_reversal_never_goes_below_zero_and_records_the_shortfall(
    api: tuple[TestClient, dict[str, str]],
) -> None:
    client, headers = api
    await pause_welcome(client)
    await campaign(client, attributes={"amount": 50})
    earned = (await send(client, headers, purchase("o-1")))["data"]["id"]
    # Spend everything, including the 50 just earned (no earning on this one: a custom event type, no campaign).
    await pause_welcome(client)
    await campaign(client, paused=True, attributes={"amount": 50})
    await send(client, headers, purchase("o-2", redeem=[{"id": REWARD, "amount": 140}]))
    assert await balance(client) == 10
    await reverse(client, headers, earned)
    assert await balance(client) == 0
    reversal = (await stored(client, earned))["reversal"]
    assert sum(Decimal(t["amount"]) for t in reversal["taken_back"]) == 10
    assert sum(Decimal(s["amount"]) for s in reversal["shortfall"]) == 40


async def test_only_purchases_of_the_account_can_be_reversed(api: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = api
    view = (await send(client, headers, {"type": "page_view", "customer_id": CUSTOMER}))["data"]["id"]
    await reverse(client, headers, view, status=400)
    await reverse(client, headers, "00000000-0000-4000-8000-000000000000", status=404)
    b_headers = bearer(await token_for(client, B))
    b_event = (await send(client, b_headers, purchase(customer_id="cust-bbbb")))["data"]["id"]
    await reverse(client, headers, b_event, status=404)  # A cannot see B's event
    client_headers = bearer(await token_for(client, A, "CLIENT"))
    mine = (await send(client, headers, purchase("o-9")))["data"]["id"]
    await reverse(client, client_headers, mine, status=403)
    response = await client.post(f"{EVENTS}/{mine}/reverse", json={}, headers=headers)
    assert response.status == 400
    assert (await stored(client, b_event))["reversed_at"] is None
    assert (await stored(client, mine))["reversed_at"] is None


# Bulk ----------------------------------------------------------------------------------------------------------


async def test_bulk_results_in_order_one_bad_event_does_not_fail_the_others(
    api: tuple[TestClient, dict[str, str]],
) -> None:
    client, headers = api
    events = [purchase("b-1"), {"type": "nope"}, {"type": "page_view", "customer_id": CUSTOMER}, purchase("b-1"),
              purchase("b-1", value=1), "not an object", purchase("b-2", redeem=[{"id": REWARD, "amount": 9999}])]
    response = await client.post(f"{EVENTS}/bulk", json={"events": events}, headers=headers)
    body = await response.json()
    assert response.status == 200, body
    results = body["data"]["results"]
    assert [r["index"] for r in results] == list(range(len(events)))
    assert [r["status"] for r in results] == [202, 400, 202, 202, 409, 400, 400]
    assert results[0]["id"] == results[3]["id"]  # the same order twice: one event
    assert results[1]["details"]["field"] == "events[1].type"
    assert results[1]["details"]["issues"][0]["type"] == "enum"
    assert results[6]["details"]["field"] == "events[6].redeem[0].amount"
    assert results[6]["details"]["issues"][0]["type"] == "insufficient_balance"
    assert body["data"]["accepted"] == 3 and body["data"]["rejected"] == 4
    assert await event_count(client) == 2
    assert await balance(client) == OPENING + 10


async def test_bulk_limits(api: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = api
    for payload in ({"events": []}, {"events": [{"type": "page_view"}] * 1001}, {"items": []}, [1]):
        response = await client.post(f"{EVENTS}/bulk", json=payload, headers=headers)
        assert response.status == 400, payload
        assert set(await response.json()) == {"error", "details"}
    client_headers = bearer(await token_for(client, A, "CLIENT"))
    response = await client.post(f"{EVENTS}/bulk", json={"events": [purchase()]}, headers=client_headers)
    assert (await response.json())["data"]["results"][0]["status"] == 403


async def test_max_per_day(api: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = api
    await campaign(client, attributes={"event_type": "page_view", "amount": 5, "max_per_day": 2})
    for _ in range(3):
        await send(client, headers, {"type": "page_view", "customer_id": CUSTOMER})
    assert await balance(client) == OPENING + 10


async def test_custom_events_carry_store_and_channel_for_restrictions(api: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = api
    await campaign(client, channels=["app"], attributes={"event_type": "page_view", "amount": 3})
    await send(client, headers, {"type": "page_view", "customer_id": CUSTOMER, "channel_id": "web"})
    await send(client, headers, {"type": "page_view", "customer_id": CUSTOMER, "channel_id": "app"})
    assert await balance(client) == OPENING + 3


async def test_running_totals_are_built_once_then_kept(api: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = api
    first = (await send(client, headers, purchase("t-1", value=30)))["data"]["id"]
    await send(client, headers, purchase("t-2", value=20, redeem=[{"id": REWARD, "amount": 15}]))
    await reverse(client, headers, first)
    row = await fetch_one(client.app[DB].reader, "SELECT * FROM customer_stats WHERE customer_id = ?", (CUSTOMER,))
    assert row is not None
    assert (Decimal(row["purchase_total"]), row["purchase_count"]) == (Decimal(20), 1)
    assert Decimal(row["points"]) == await balance(client) == OPENING + 10 + 10 - 15 - 10
