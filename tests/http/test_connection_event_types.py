"""A connection says which event types it forwards (issue 32): the admin API refuses one without
``event_types`` (400 naming it), ``["*"]`` forwards every type, the counts of a connection's deliveries show
the filtered ones by reason, and filtered deliveries are sent once the connection lets them through (all of
the connection's at once, or one by hand). A connection stored before the field was required forwards none,
as it always did, and says so."""

from __future__ import annotations

from typing import Any

from aiohttp.test_utils import TestClient

from api.appkeys import DB
from linksvc.jsoncodec import dumps
from storage import documents
from storage.db import execute
from tests.conftest import ADMIN
from tests.factories import A
from tests.http.conftest import Receiver
from tests.http.test_forwarding import ADMIN_API, CUSTOMER, SECRET, purchase, send, settled

PAGE_VIEW = {"type": "page_view", "customer_id": CUSTOMER}


def webhook(receiver: Receiver, **fields: Any) -> dict[str, Any]:
    return {"destination": "webhook", "config": {"endpoint_url": receiver.url(), "secret": SECRET}, **fields}


async def create(client: TestClient, body: dict[str, Any], status: int = 201) -> dict[str, Any]:
    response = await client.post(f"{ADMIN_API}/connections", json=body, headers=ADMIN)
    answer = await response.json()
    assert response.status == status, answer
    return dict(answer)


async def counts(client: TestClient, connection_id: str) -> dict[str, Any]:
    response = await client.get(f"{ADMIN_API}/connections/{connection_id}/deliveries/counts", headers=ADMIN)
    body = await response.json()
    assert response.status == 200, body
    return dict(body["data"])


async def test_a_connection_must_say_which_types_it_forwards(service: TestClient, receiver: Receiver) -> None:
    for given, rule in ((None, "missing"), ([], "too_few_items"), (["*", "PURCHASE"], "not_allowed"),
                        ([" "], "string_too_short"), ("*", "type"), ("all", "type"), ({"*": True}, "type")):
        body = webhook(receiver) if given is None else webhook(receiver, event_types=given)
        refused = await create(service, body, 400)
        assert set(refused) == {"error", "details"}
        assert refused["details"]["field"] == "event_types", given
        assert [(i["path"], i["type"]) for i in refused["details"]["issues"]] == [("event_types", rule)], given
    # Hostile lists: 400 naming the item or the list, never a 500.
    for given, path, rule in (([5], "event_types[0]", "type"), (["x" * 65], "event_types[0]", "string_too_long"),
                              ([f"t{n}" for n in range(501)], "event_types", "too_many_items"),
                              ([["PURCHASE"]], "event_types[0]", "type")):
        refused = await create(service, webhook(receiver, event_types=given), 400)
        assert [(i["path"], i["type"]) for i in refused["details"]["issues"]] == [(path, rule)]
    created = (await create(service, webhook(receiver, event_types=["*"])))["data"]
    assert created["event_types"] == ["*"]
    response = await service.patch(f"{ADMIN_API}/connections/{created['id']}", json={"event_types": []},
                                   headers=ADMIN)
    assert response.status == 400 and (await response.json())["details"]["field"] == "event_types"


async def test_every_type_forwards_purchases_and_custom_events(service: TestClient, receiver: Receiver) -> None:
    await create(service, webhook(receiver, event_types=["*"]))
    for event in (purchase(), PAGE_VIEW):
        found = await settled(service, await send(service, event))
        assert found and {d["state"] for d in found} == {"delivered"}, found
    assert {r["json"]["data"]["type"] for r in receiver.received if r["json"]["type"] == "event.accepted"} == {
        "PURCHASE", "page_view"}


async def test_filtered_deliveries_are_counted_by_reason_and_sent_once_the_connection_allows_them(
        service: TestClient, receiver: Receiver) -> None:
    connection = (await create(service, webhook(receiver, event_types=["PURCHASE"])))["data"]["id"]
    first = await send(service, PAGE_VIEW)
    await send(service, PAGE_VIEW)
    [filtered] = await settled(service, first)
    assert (filtered["state"], filtered["reason"]) == (
        "filtered", "event type page_view is not allowed by the connection")
    shown = await counts(service, connection)
    assert shown["by_state"] == {"pending": 0, "delivered": 0, "filtered": 2, "skipped": 0, "failed": 0, "dead": 0}
    assert shown["filtered"] == [{"reason": "event type page_view is not allowed by the connection",
                                  "deliveries": 2, "sendable": False}]
    # While the connection still filters it, a retry by hand says why.
    response = await service.post(f"{ADMIN_API}/deliveries/{filtered['id']}/retry", headers=ADMIN)
    body = await response.json()
    assert response.status == 409 and set(body) == {"error", "details"}
    assert "event type page_view is not allowed" in body["details"]
    response = await service.post(f"{ADMIN_API}/connections/{connection}/deliveries/retry-filtered", headers=ADMIN)
    assert (await response.json())["data"] == {"retried": 0, "reasons": []}
    assert receiver.received == []

    response = await service.patch(f"{ADMIN_API}/connections/{connection}",
                                   json={"event_types": ["PURCHASE", "page_view"]}, headers=ADMIN)
    assert response.status == 200, await response.text()
    assert (await counts(service, connection))["filtered"][0]["sendable"] is True
    # One by hand, then the rest of the connection's.
    response = await service.post(f"{ADMIN_API}/deliveries/{filtered['id']}/retry", headers=ADMIN)
    assert response.status == 200, await response.text()
    [again] = await settled(service, first)
    assert again["state"] == "delivered"
    response = await service.post(f"{ADMIN_API}/connections/{connection}/deliveries/retry-filtered", headers=ADMIN)
    assert (await response.json())["data"] == {
        "retried": 1, "reasons": ["event type page_view is not allowed by the connection"]}
    await settled(service, first, lambda _: receiver_count(receiver) == 2)
    shown = await counts(service, connection)
    assert (shown["by_state"]["delivered"], shown["by_state"]["filtered"], shown["filtered"]) == (2, 0, [])


def receiver_count(receiver: Receiver) -> int:
    return sum(1 for r in receiver.received if r["json"]["type"] == "event.accepted")


async def test_a_connection_stored_without_event_types_forwards_none_and_says_why(service: TestClient,
                                                                                  receiver: Receiver) -> None:
    connection = (await create(service, webhook(receiver, event_types=["*"])))["data"]["id"]
    stored = await documents.get(service.app[DB].reader, "connections", A, connection)
    assert stored is not None
    body = {k: v for k, v in stored.body.items() if k != "event_types"}
    async with service.app[DB].transaction() as tx:  # as a connection stored before the field was required
        await execute(tx, "UPDATE connections SET body = ? WHERE id = ?", (dumps(body), connection))
    response = await service.get(f"{ADMIN_API}/connections/{connection}", headers=ADMIN)
    assert response.status == 200 and "event_types" not in (await response.json())["data"]
    [delivery] = await settled(service, await send(service, PAGE_VIEW))
    assert (delivery["state"], delivery["reason"]) == ("filtered", "event type page_view is not allowed by the "
                                                                    "connection")
    assert (await counts(service, connection))["filtered"][0]["deliveries"] == 1
    # An edit must make the choice: a patch of anything else names event_types.
    response = await service.patch(f"{ADMIN_API}/connections/{connection}", json={"name": "orders"}, headers=ADMIN)
    assert response.status == 400 and (await response.json())["details"]["field"] == "event_types"
    response = await service.patch(f"{ADMIN_API}/connections/{connection}", json={"event_types": ["*"]},
                                   headers=ADMIN)
    assert response.status == 200, await response.text()
    response = await service.post(f"{ADMIN_API}/connections/{connection}/deliveries/retry-filtered", headers=ADMIN)
    assert (await response.json())["data"]["retried"] == 1
    [delivery] = await settled(service, delivery["event_id"], lambda found: found[0]["state"] == "delivered")
    assert receiver_count(receiver) == 1


async def test_counts_and_retries_are_the_accounts_own(service: TestClient, receiver: Receiver) -> None:
    connection = (await create(service, webhook(receiver, event_types=["PURCHASE"])))["data"]["id"]
    other = "bbbbbbbb-0000-4000-8000-000000000002"
    for method, path in (("GET", f"connections/{connection}/deliveries/counts"),
                         ("POST", f"connections/{connection}/deliveries/retry-filtered"),
                         ("GET", "connections/no-such-connection/deliveries/counts")):
        account = other if "no-such" not in path else ADMIN_API.rsplit("/", 1)[1]
        response = await service.request(method, f"/api/admin/v1/accounts/{account}/{path}", headers=ADMIN)
        assert response.status == 404, (method, path)
        assert set(await response.json()) == {"error", "details"}


async def test_each_type_named_is_one_of_the_accounts_types(service: TestClient, receiver: Receiver) -> None:
    """Issue 32, second look: a name of no type (a lower-case PURCHASE, a space, a typo, another account's
    custom type) forwarded nothing, silently, as a connection without event_types did. Each name must be
    PURCHASE or one of the account's custom event types, and named once; 400 naming the item."""
    for given, path, rule in ((["purchase"], "event_types[0]", "unknown_reference"),
                              (["PURCHASE", " page_view"], "event_types[1]", "unknown_reference"),
                              (["page_view", "pageview"], "event_types[1]", "unknown_reference"),
                              (["PURCHASE", "page_view", "PURCHASE"], "event_types[2]", "duplicate")):
        refused = await create(service, webhook(receiver, event_types=given), 400)
        assert set(refused) == {"error", "details"}
        assert [(i["path"], i["type"]) for i in refused["details"]["issues"]] == [(path, rule)], given
    created = (await create(service, webhook(receiver, event_types=["PURCHASE", "page_view"])))["data"]
    response = await service.patch(f"{ADMIN_API}/connections/{created['id']}", json={"event_types": ["PAGE_VIEW"]},
                                   headers=ADMIN)
    assert response.status == 400 and (await response.json())["details"]["field"] == "event_types[0]"
    found = await settled(service, await send(service, PAGE_VIEW))
    assert found and {d["state"] for d in found} == {"delivered"}, found
