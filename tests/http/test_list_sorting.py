"""The ``sort`` parameter of the paged lists (issue 36): the links list, the campaigns list and a connection's
deliveries, each ordered as a whole before paging, with every filter, and paging under any order showing each
item once. On both stores (the suite's store follows LINKSVC_TEST_DATABASE_URL)."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from linksvc.links.overview import PREVIEW_DEVICES
from tests.conftest import ADMIN
from tests.factories import A, B
from tests.http.conftest import Receiver
from tests.http.test_forwarding import connect, send, settled

API = f"/api/admin/v1/accounts/{A}"
DESKTOP = PREVIEW_DEVICES[0][2]
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
# Codes and their clicks by people; ties on purpose. "s-d" gets a bot's click only.
CLICKS = {"s-a": 3, "s-b": 1, "s-c": 3, "s-d": 0, "s-e": 2, "s-f": 3, "s-g": 0}
LINK_SORTS = ("created", "-created", "updated", "-updated", "code", "-code", "clicks", "-clicks", "last_clicked",
              "-last_clicked")


async def listed(client: TestClient, path: str, params: dict[str, Any]) -> Any:
    response = await client.get(f"{API}{path}", params=params, headers=ADMIN)
    assert response.status == 200, await response.text()
    return await response.json()


async def every_page(client: TestClient, path: str, params: dict[str, Any], limit: int = 2) -> list[dict[str, Any]]:
    """The list read a page at a time, to its end."""
    items: list[dict[str, Any]] = []
    while True:
        page = await listed(client, path, {**params, "limit": limit, "offset": len(items)})
        data = page["data"]
        items.extend(data)
        if len(data) < limit:
            return items


async def make_links(client: TestClient) -> dict[str, dict[str, Any]]:
    made = {}
    for code in CLICKS:
        tags = ["odd"] if code in ("s-a", "s-c", "s-e", "s-g") else []
        folder = "spring" if code in ("s-a", "s-e") else None
        response = await client.post(f"{API}/links", headers=ADMIN, json={
            "code": code, "kind": "external", "destination_url": f"https://shop.example/{code}", "tags": tags,
            "folder": folder})
        assert response.status == 201, await response.text()
        made[code] = (await response.json())["data"]
    for code, clicks in CLICKS.items():
        for _ in range(clicks):
            response = await client.get(f"/{code}", headers={"User-Agent": DESKTOP}, allow_redirects=False)
            assert response.status == 302
    response = await client.get("/s-d", headers={"User-Agent": GOOGLEBOT}, allow_redirects=False)
    assert response.status == 302
    # "s-b" changed last: the newest by update, not by creation
    response = await client.patch(f"{API}/links/{made['s-b']['id']}", headers=ADMIN,
                                  json={"destination_url": "https://shop.example/s-b?v=2"})
    assert response.status == 200, await response.text()
    return made


def expected(links: list[dict[str, Any]], sort: str) -> list[str]:
    """The order a sort names, worked out from what the list shows of each link: ties by id, the same way; links
    never clicked last either way."""
    key, descending = (sort[1:], True) if sort.startswith("-") else (sort, False)
    field = {"created": "created_at", "updated": "updated_at", "code": "code", "clicks": "clicks",
             "last_clicked": "last_clicked_at"}[key]
    valued = [link for link in links if link[field] is not None]
    never = [link for link in links if link[field] is None]
    ordered = sorted(valued, key=lambda link: (link[field], link["id"]), reverse=descending)
    ordered += sorted(never, key=lambda link: link["id"], reverse=descending)
    return [link["code"] for link in ordered]


async def test_links_sort_by_clicks_counts_people_of_all_time(seeded: TestClient) -> None:
    await make_links(seeded)
    page = await listed(seeded, "/links/overview", {"sort": "-clicks", "limit": 3})
    assert page["count"] == 8
    assert {link["code"] for link in page["data"]} == {"s-a", "s-c", "s-f"}
    assert [link["clicks"] for link in page["data"]] == [3, 3, 3]
    assert [link["id"] for link in page["data"]] == sorted((link["id"] for link in page["data"]), reverse=True)
    every = await every_page(seeded, "/links/overview", {"sort": "-clicks"}, limit=50)
    by_code = {link["code"]: link for link in every}
    assert {code: by_code[code]["clicks"] for code in CLICKS} == CLICKS  # the bot's click is not counted
    assert by_code["s-d"]["last_clicked_at"] is None and by_code["s-a"]["last_clicked_at"] is not None
    assert [link["clicks"] for link in every] == sorted((link["clicks"] for link in every), reverse=True)
    fewest = await listed(seeded, "/links/overview", {"sort": "clicks", "limit": 50})
    assert [link["clicks"] for link in fewest["data"]] == sorted(link["clicks"] for link in every)


@pytest.mark.parametrize("sort", LINK_SORTS)
async def test_links_pages_under_each_sort_show_each_link_once_in_order(seeded: TestClient, sort: str) -> None:
    await make_links(seeded)
    whole = (await listed(seeded, "/links/overview", {"sort": sort, "limit": 50}))["data"]
    assert [link["code"] for link in whole] == expected(whole, sort)
    paged = await every_page(seeded, "/links/overview", {"sort": sort})
    assert [link["id"] for link in paged] == [link["id"] for link in whole]
    assert len({link["id"] for link in paged}) == len(whole) == 8


async def test_links_sorted_by_update_and_code_and_last_click(seeded: TestClient) -> None:
    await make_links(seeded)
    codes = [link["code"] for link in (await listed(seeded, "/links/overview", {"sort": "-updated"}))["data"]]
    assert codes[0] == "s-b"
    codes = [link["code"] for link in (await listed(seeded, "/links/overview", {"sort": "code"}))["data"]]
    assert codes == sorted(codes) and codes[0] == "lnkaaaa"
    for sort in ("last_clicked", "-last_clicked"):  # never clicked (by a person): last, either way
        codes = [link["code"] for link in (await listed(seeded, "/links/overview", {"sort": sort}))["data"]]
        assert set(codes[-3:]) == {"s-d", "s-g", "lnkaaaa"}
    assert codes[0] == "s-f"  # the last one clicked


async def test_links_sort_keeps_the_search_tag_and_folder(seeded: TestClient) -> None:
    await make_links(seeded)
    for params, codes in (({"tag": "odd", "sort": "-clicks"}, ["s-a|s-c", "s-a|s-c", "s-e", "s-g"]),
                          ({"folder": "spring", "sort": "clicks"}, ["s-e", "s-a"]),
                          ({"q": "shop.example/s-", "sort": "-code"}, ["s-g", "s-f", "s-e", "s-d", "s-c", "s-b",
                                                                        "s-a"])):
        paged = await every_page(seeded, "/links/overview", params)
        assert len(paged) == len(codes), params
        assert all(link["code"] in want.split("|") for link, want in zip(paged, codes, strict=True)), params
        assert (await listed(seeded, "/links/overview", {**params, "limit": 1}))["count"] == len(codes)


async def test_links_sort_stays_in_the_account(seeded: TestClient) -> None:
    await make_links(seeded)
    response = await seeded.get(f"/api/admin/v1/accounts/{B}/links/overview", params={"sort": "-clicks"},
                                headers=ADMIN)
    assert response.status == 200
    assert [link["code"] for link in (await response.json())["data"]] == ["lnkbbbb"]


@pytest.mark.parametrize(("path", "allowed"), [
    ("/links/overview", "-last_clicked"), ("/campaigns/overview", "-status"), ("/links/overview", "code")])
async def test_an_unknown_sort_is_a_400_naming_the_allowed_ones(seeded: TestClient, path: str,
                                                                allowed: str) -> None:
    for sort in ("bogus", "--code", "clicks_7d", "-"):
        response = await seeded.get(f"{API}{path}", params={"sort": sort}, headers=ADMIN)
        assert response.status == 400, sort
        body = await response.json()
        assert set(body) == {"error", "details"}
        assert allowed in str(body["details"]), body


async def campaign_names(client: TestClient, sort: str, limit: int = 2) -> list[str]:
    return [c["name"] for c in await every_page(client, "/campaigns/overview", {"sort": sort}, limit)]


async def test_campaigns_sort_by_name_dates_and_status_across_pages(seeded: TestClient) -> None:
    for name, fields in (("later", {"type": "COUPONS", "starts_at": "2999-01-01T00:00:00Z"}),
                         ("Over", {"type": "COUPONS", "starts_at": "2000-01-01T00:00:00Z",
                                   "ends_at": "2001-01-01T00:00:00Z"}),
                         ("Held", {"type": "PUNCH_CARDS", "paused": True, "ends_at": "2998-01-01T00:00:00Z"}),
                         ("apple", {"type": "BEHAVIOR", "starts_at": "2020-01-01T00:00:00Z"})):
        response = await seeded.post(f"{API}/campaigns", json={"name": name, **fields}, headers=ADMIN)
        assert response.status == 201, await response.text()
    assert await campaign_names(seeded, "name") == ["apple", "Held", "later", "Over", "Welcome"]
    assert await campaign_names(seeded, "-name") == ["Welcome", "Over", "later", "Held", "apple"]
    assert (await campaign_names(seeded, "starts"))[:3] == ["Over", "apple", "later"]
    assert (await campaign_names(seeded, "-starts"))[:3] == ["later", "apple", "Over"]
    assert (await campaign_names(seeded, "ends"))[:2] == ["Over", "Held"]  # without an end: last
    assert (await campaign_names(seeded, "-created"))[0] == "apple"
    statuses = [c["status"] for c in await every_page(seeded, "/campaigns/overview", {"sort": "status"})]
    assert statuses == ["RUNNING", "RUNNING", "SCHEDULED", "PAUSED", "FINISHED"]
    for sort in ("order", "-order", "created", "status", "-status", "ends", "-ends", "starts"):
        whole = await campaign_names(seeded, sort, 50)
        assert await campaign_names(seeded, sort, 2) == whole and sorted(whole) == sorted(set(whole)), sort
    response = await seeded.get(f"{API}/campaigns/overview", params={"sort": "name", "type": "COUPONS"},
                                headers=ADMIN)
    assert [c["name"] for c in (await response.json())["data"]] == ["later", "Over"]


async def test_deliveries_sort_by_time_state_and_tries(service: TestClient, receiver: Receiver) -> None:
    connection = await connect(service, "webhook", {"endpoint_url": receiver.url(), "secret": SECRET},
                               event_types=["page_view"])
    receiver.script = [(200, {}), (401, {}), (200, {}), (401, {}), (200, {})]
    events = []
    for _ in range(5):  # one at a time, so the receiver's answers go in this order
        events.append(await send(service, {"type": "page_view", "customer_id": "cust-aaaa"}))
        await settled(service, events[-1])
    path = f"/connections/{connection}/deliveries"
    newest = await every_page(service, path, {})
    assert [d["event_id"] for d in newest] == events[::-1]
    oldest = await every_page(service, path, {"sort": "created"})
    assert [d["event_id"] for d in oldest] == events
    by_state = await every_page(service, path, {"sort": "state"})
    assert [d["state"] for d in by_state] == ["delivered"] * 3 + ["failed"] * 2
    assert [d["event_id"] for d in by_state] == [events[0], events[2], events[4], events[1], events[3]]
    assert [d["state"] for d in await every_page(service, path, {"sort": "-state"})] == ["failed"] * 2 + [
        "delivered"] * 3
    # Retrying events[3]'s failed delivery makes it the latest updated and the most tried
    failed = next(d for d in newest if d["event_id"] == events[3])
    response = await service.post(f"{API}/deliveries/{failed['id']}/retry", headers=ADMIN)
    assert response.status == 200, await response.text()
    await settled(service, events[3])
    assert (await every_page(service, path, {"sort": "-tries"}))[0]["event_id"] == events[3]
    assert (await every_page(service, path, {"sort": "-updated"}))[0]["event_id"] == events[3]
    assert [d["event_id"] for d in await every_page(service, path, {"sort": "tries"})][:2] == [events[0], events[1]]
    response = await service.get(f"{API}{path}", params={"sort": "name"}, headers=ADMIN)
    assert response.status == 400 and "-tries" in str((await response.json())["details"])
