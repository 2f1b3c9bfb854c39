"""Attribution lineage and the event side of the conversion rollups: an event sent after a real click
(``GET /{code}``) stores where each attribution field came from beside the click's own value; the admin API's
event detail and customer path show it; events and purchases land in the rollups on the click's key, and a
reversal takes the purchase back out.

Clicks are stored through the resolver; until clicks record where their UTM came from, a test that needs a
click's ``utm_origin`` writes it on the stored row (the click writer of this branch leaves it NULL)."""

from __future__ import annotations

from dataclasses import asdict, replace
from decimal import Decimal
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import CLICKS, DB
from linksvc.app import create_app
from linksvc.jsoncodec import loads
from linksvc.seed import load_seed
from linksvc.settings import Settings
from storage.clicks import clicks_for_tracking_ids
from storage.db import execute, fetch_all
from tests.conftest import ADMIN, bearer, service_server, token_for
from tests.factories import A, B, ids, two_accounts

EVENTS = "/api/storefront/v1/behavior/events"
ADMIN_API = "/api/admin/v1/accounts"
CODE = f"lnk{A[:4]}"
CUSTOMER = ids(A)["customers"]
TERMS = ("tracking_id", "utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content")


IPHONE = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 Version/17.1 Mobile/15E148 "
          "Safari/604.1")


@pytest.fixture
async def held(aiohttp_client: Any, settings: Settings) -> TestClient:
    """The seeded service whose click writer waits an hour between writes (and never gathers its batch of
    500 here): a click answered stays in the recorder's buffer until something writes it."""
    client: TestClient = await aiohttp_client(service_server(create_app(replace(settings,
                                                                                click_flush_seconds=3600))))
    await load_seed(client.app[DB], two_accounts(), allow_private=True)
    return client


async def click(client: TestClient, query: str = "") -> dict[str, Any]:
    """A click through the resolver, stored; its row."""
    response = await client.get(f"/{CODE}{query}", headers={"User-Agent": IPHONE}, allow_redirects=False)
    assert response.status == 302
    await client.app[CLICKS].flush()
    rows = await fetch_all(client.app[DB].reader, "SELECT tracking_id FROM clicks ORDER BY id DESC LIMIT 1")
    found = await clicks_for_tracking_ids(client.app[DB].reader, A, [rows[0]["tracking_id"]])
    return asdict(found[rows[0]["tracking_id"]])


async def send(client: TestClient, event: dict[str, Any], account: str = A) -> str:
    response = await client.post(EVENTS, json=event, headers=bearer(await token_for(client, account)))
    assert response.status == 202, await response.text()
    return str((await response.json())["data"]["id"])


async def detail(client: TestClient, event_id: str, account: str = A, status: int = 200) -> dict[str, Any]:
    response = await client.get(f"{ADMIN_API}/{account}/events/{event_id}", headers=ADMIN)
    body = await response.json()
    assert response.status == status, body
    return dict(body)


def purchase(order: str, **fields: Any) -> dict[str, Any]:
    return {"type": "PURCHASE", "customer_id": CUSTOMER, "order_id": order, "currency": "COP", "value": "12.50",
            "products": [{"sku": "LATTE-12"}], **fields}


async def rollup(client: TestClient, table: str) -> list[dict[str, Any]]:
    rows = await fetch_all(client.app[DB].reader, f"SELECT * FROM {table} ORDER BY day, link_id, platform")
    return [dict(row) for row in rows]


async def test_each_field_says_where_it_came_from_beside_the_clicks_value(seeded: TestClient) -> None:
    stored = await click(seeded, "?tracking_id=trk-1&utm_campaign=spring")
    assert stored["utm"]["utm_campaign"] == "spring" and stored["utm"]["utm_medium"] == "email"
    event_id = await send(seeded, purchase(
        "o-1", tracking_id="trk-1", utm_source=stored["utm"]["utm_source"],
        attribution={"utm_medium": "newsletter", "utm_source": "ignored"},
        properties={"utm_campaign": "spring", "utm_term": "beans"}))
    data = (await detail(seeded, event_id))["data"]
    assert data["attribution"]["utm_medium"] == "newsletter"  # lineage explains, it changes nothing
    lineage = data["lineage"]
    assert lineage["click"] == {"tracking_id": "trk-1", "link_id": ids(A)["links"], "link_code": CODE,
                                "campaign_id": None, "clicked_at": stored["clicked_at"], "platform": "ios",
                                "answer": stored["answer"]}
    sources = {term: (lineage[term]["value"], lineage[term]["source"], lineage[term]["agrees"]) for term in TERMS}
    assert sources == {
        "tracking_id": ("trk-1", "event.top_level", True),
        "utm_source": (stored["utm"]["utm_source"], "event.top_level", True),
        "utm_medium": ("newsletter", "event.attribution", False),
        "utm_campaign": ("spring", "event.properties", True),
        "utm_term": ("beans", "event.properties", False),
        "utm_content": (None, None, None),
    }
    assert lineage["utm_source"]["rule"] == ("the event's top level wins over its attribution object and its "
                                             "properties")
    assert lineage["tracking_id"]["click"]["origin"] is None
    # Where the click got each value, as it recorded at click time: the email link's channel default, the
    # click's own query; no value, no origin.
    assert lineage["utm_medium"]["click"]["value"] == "email"
    assert lineage["utm_medium"]["click"]["origin"] == "defaults"
    assert lineage["utm_campaign"]["click"]["origin"] == "query"
    assert lineage["utm_term"]["click"]["value"] is None and lineage["utm_term"]["click"]["origin"] is None


async def test_the_clicks_recorded_origins_are_shown(seeded: TestClient) -> None:
    await click(seeded, "?tracking_id=trk-2&utm_campaign=spring")
    event_id = await send(seeded, {"type": "page_view", "customer_id": CUSTOMER,
                                   "attribution": {"tracking_id": "trk-2", "utm_campaign": "autumn"}})
    lineage = (await detail(seeded, event_id))["data"]["lineage"]
    assert lineage["tracking_id"]["source"] == "event.attribution"
    assert lineage["utm_campaign"]["click"]["value"] == "spring"
    assert lineage["utm_campaign"]["click"]["origin"] == "query"
    assert lineage["utm_campaign"]["agrees"] is False
    assert lineage["utm_medium"]["click"]["origin"] == "defaults"
    assert lineage["utm_medium"]["value"] is None and lineage["utm_medium"]["agrees"] is False


async def test_a_click_stored_before_origins_were_recorded_says_unknown(seeded: TestClient) -> None:
    await click(seeded, "?tracking_id=trk-3")
    async with seeded.app[DB].transaction() as tx:  # as a click stored before migration 0019 reads
        await execute(tx, "UPDATE clicks SET utm_origin = NULL WHERE tracking_id = ?", ("trk-3",))
    event_id = await send(seeded, {"type": "page_view", "customer_id": CUSTOMER, "tracking_id": "trk-3"})
    lineage = (await detail(seeded, event_id))["data"]["lineage"]
    assert lineage["utm_medium"]["click"]["value"] == "email"
    assert lineage["utm_medium"]["click"]["origin"] == "unknown"
    assert lineage["utm_term"]["click"]["value"] is None and lineage["utm_term"]["click"]["origin"] is None


async def test_an_event_without_a_click_has_no_click_in_its_lineage(seeded: TestClient) -> None:
    event_id = await send(seeded, purchase("o-2", tracking_id="nobody-clicked", utm_source="ads"))
    lineage = (await detail(seeded, event_id))["data"]["lineage"]
    assert lineage["click"] is None
    assert lineage["tracking_id"] == {"value": "nobody-clicked", "source": "event.top_level",
                                      "rule": lineage["tracking_id"]["rule"], "click": None, "agrees": None}
    [events] = await rollup(seeded, "conversion_events")
    assert (events["link_id"], events["platform"], events["utm_source"], events["type"], events["events"]) == (
        "", "", "ads", "PURCHASE", 1)


async def test_a_click_of_another_account_is_not_behind_an_event(seeded: TestClient) -> None:
    await click(seeded, "?tracking_id=shared")
    event_id = await send(seeded, {"type": "page_view", "customer_id": ids(B)["customers"],
                                   "tracking_id": "shared"}, account=B)
    assert (await detail(seeded, event_id, account=B))["data"]["lineage"]["click"] is None


async def test_an_event_sent_right_after_its_click_finds_it(held: TestClient) -> None:
    """The app opened by the click sends its event at once: the click still waits in the recorder's buffer."""
    response = await held.get(f"/{CODE}?tracking_id=trk-now&utm_source=mail", headers={"User-Agent": IPHONE},
                              allow_redirects=False)
    assert response.status == 302 and held.app[CLICKS].pending == 1
    event_id = await send(held, purchase("o-now", tracking_id="trk-now", utm_source="mail"))
    lineage = (await detail(held, event_id))["data"]["lineage"]
    assert lineage["click"] is not None
    assert (lineage["click"]["tracking_id"], lineage["click"]["link_code"], lineage["click"]["platform"]) == (
        "trk-now", CODE, "ios")
    assert lineage["utm_source"]["agrees"] is True
    [counted] = await rollup(held, "conversion_events")
    assert (counted["link_id"], counted["platform"]) == (ids(A)["links"], "ios")  # on the click's key
    # In a bulk request too; and a click of another account with the same tracking_id is never its click.
    response = await held.get(f"/{CODE}?tracking_id=trk-bulk", headers={"User-Agent": IPHONE},
                              allow_redirects=False)
    assert response.status == 302
    response = await held.post(f"{EVENTS}/bulk", json={"events": [
        {"type": "page_view", "customer_id": ids(B)["customers"], "tracking_id": "trk-bulk"}]},
        headers=bearer(await token_for(held, B)))
    assert response.status == 200, await response.text()
    other = (await response.json())["data"]["results"][0]["id"]
    assert (await detail(held, other, account=B))["data"]["lineage"]["click"] is None
    response = await held.post(f"{EVENTS}/bulk", json={"events": [
        {"type": "page_view", "customer_id": CUSTOMER, "tracking_id": "trk-bulk"}]},
        headers=bearer(await token_for(held, A)))
    assert response.status == 200, await response.text()
    mine = (await response.json())["data"]["results"][0]["id"]
    assert (await detail(held, mine))["data"]["lineage"]["click"]["tracking_id"] == "trk-bulk"


async def test_events_stored_before_lineage_show_null(seeded: TestClient) -> None:
    event_id = await send(seeded, purchase("o-3"))
    async with seeded.app[DB].transaction() as tx:
        await execute(tx, "UPDATE events SET lineage = NULL WHERE id = ?", (event_id,))
    assert (await detail(seeded, event_id))["data"]["lineage"] is None
    before = await rollup(seeded, "conversion_revenue")
    response = await seeded.post(f"{EVENTS}/{event_id}/reverse", json={"reason": "x"},
                                 headers=bearer(await token_for(seeded, A)))
    assert response.status == 200
    assert await rollup(seeded, "conversion_revenue") == before  # it was counted before rollups: nothing taken


async def test_rollups_count_events_and_purchases_on_the_clicks_key_and_a_reversal_takes_the_purchase_out(
        seeded: TestClient) -> None:
    stored = await click(seeded, "?tracking_id=trk-3&utm_source=mail")
    first = await send(seeded, purchase("o-4", tracking_id="trk-3", utm_source="mail", utm_medium="email",
                                        utm_campaign="spring"))
    await send(seeded, purchase("o-5", value="7.25", tracking_id="trk-3", utm_source="mail", utm_medium="email",
                                utm_campaign="spring"))
    await send(seeded, {"type": "page_view", "customer_id": CUSTOMER, "tracking_id": "trk-3",
                        "utm_source": "mail", "utm_medium": "email", "utm_campaign": "spring"})
    key = (A, stored["clicked_at"][:10], ids(A)["links"], "mail", "email", "spring", "ios")
    events = {tuple(row[k] for k in ("account_id", "day", "link_id", "utm_source", "utm_medium", "utm_campaign",
                                     "platform", "type")): row["events"] for row in await rollup(seeded,
                                                                                                "conversion_events")}
    assert events == {(*key, "PURCHASE"): 2, (*key, "page_view"): 1}
    [revenue] = await rollup(seeded, "conversion_revenue")
    assert tuple(revenue[k] for k in ("account_id", "day", "link_id", "utm_source", "utm_medium", "utm_campaign",
                                      "platform", "currency")) == (*key, "COP")
    assert (revenue["purchases"], Decimal(str(revenue["revenue"]))) == (2, Decimal("19.75"))
    assert sum(loads(revenue["delays"])) == 2 and loads(revenue["delays"])[0] == 2  # within a minute of the click

    response = await seeded.post(f"{EVENTS}/{first}/reverse", json={"reason": "returned"},
                                 headers=bearer(await token_for(seeded, A)))
    assert response.status == 200
    [revenue] = await rollup(seeded, "conversion_revenue")
    assert (revenue["purchases"], Decimal(str(revenue["revenue"])), loads(revenue["delays"])[0]) == (
        1, Decimal("7.25"), 1)
    # The reversed purchase was an event: events by type keep counting it.
    assert sum(row["events"] for row in await rollup(seeded, "conversion_events")) == 3


async def test_the_event_detail_is_the_accounts_own(seeded: TestClient) -> None:
    event_id = await send(seeded, purchase("o-6"))
    body = await detail(seeded, event_id, account=B, status=404)
    assert set(body) == {"error", "details"}
    await detail(seeded, "no-such-event", status=404)
    data = (await detail(seeded, event_id))["data"]
    assert (data["id"], data["type"], data["customer_id"], data["order_id"], data["reversed_at"]) == (
        event_id, "PURCHASE", CUSTOMER, "o-6", None)


async def test_the_customer_path_lists_events_newest_first_with_the_click_behind_each(seeded: TestClient) -> None:
    campaign = ids(A)["campaigns"]
    response = await seeded.put(f"{ADMIN_API}/{A}/links/{ids(A)['links']}", headers=ADMIN, json={
        "id": ids(A)["links"], "code": CODE, "kind": "email", "destination_url": "https://shop.example/p",
        "campaign_id": campaign})
    assert response.status == 200, await response.text()
    stored = await click(seeded, "?tracking_id=trk-4")
    older = await send(seeded, purchase("o-7", tracking_id="trk-4", issued_at="2026-01-02T10:00:00Z"))
    newer = await send(seeded, {"type": "page_view", "customer_id": CUSTOMER, "issued_at": "2026-01-03T10:00:00Z"})
    await send(seeded, {"type": "page_view", "customer_id": ids(B)["customers"]}, account=B)
    response = await seeded.get(f"{ADMIN_API}/{A}/customers/{CUSTOMER}/path", headers=ADMIN)
    body = await response.json()
    assert response.status == 200, body
    assert body["count"] == 2 and [step["event"]["id"] for step in body["data"]] == [newer, older]
    assert body["data"][0]["click"] is None
    assert body["data"][1]["event"] == {"id": older, "type": "PURCHASE", "issued_at": "2026-01-02T10:00:00.000000Z",
                                        "value": body["data"][1]["event"]["value"], "currency": "COP",
                                        "reversed_at": None}
    assert body["data"][1]["click"] == {
        "tracking_id": "trk-4", "link_id": ids(A)["links"], "link_code": CODE, "campaign_id": campaign,
        "campaign_name": "Welcome", "clicked_at": stored["clicked_at"], "platform": "ios", "utm": stored["utm"]}
    limited = await (await seeded.get(f"{ADMIN_API}/{A}/customers/{CUSTOMER}/path?limit=1", headers=ADMIN)).json()
    assert [step["event"]["id"] for step in limited["data"]] == [newer]


async def test_the_customer_path_checks_its_customer_and_limit(seeded: TestClient) -> None:
    for path in (f"{A}/customers/nobody/path", f"{A}/customers/{ids(B)['customers']}/path"):
        response = await seeded.get(f"{ADMIN_API}/{path}", headers=ADMIN)
        assert response.status == 404
        assert set(await response.json()) == {"error", "details"}
    for limit in ("0", "201", "many", "-1"):
        response = await seeded.get(f"{ADMIN_API}/{A}/customers/{CUSTOMER}/path?limit={limit}", headers=ADMIN)
        assert response.status == 400, limit
        assert set(await response.json()) == {"error", "details"}
    response = await seeded.get(f"{ADMIN_API}/{A}/customers/{CUSTOMER}/path?limit=200", headers=ADMIN)
    assert response.status == 200
    response = await seeded.get(f"{ADMIN_API}/{A}/customers/{CUSTOMER}/path")
    assert response.status == 401
