"""Organising links (issue 36) through the admin API, on the store of the run: the list searched by code,
destination, tag, folder and UTM; the bulk actions on a selection (tags, folder, disable, CSV export), all or
nothing, each changed link in the audit log, never touching another account's links, refused to a viewer; and the
conversion report grouped by tag and by folder."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from tests.conftest import ADMIN, bearer, token_for
from tests.factories import A, B, ids
from tests.http.test_link_variants import purchase, tracking_of
from tests.people import make_person, session_of

API = f"/api/admin/v1/accounts/{A}"
DESKTOP = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"
LINKS = [
    {"code": "spring-mail", "kind": "external", "tags": ["spring", "Email"], "folder": "Campaigns",
     "destination_url": "https://shop.example/spring?utm_source=Newsletter&utm_medium=email&utm_campaign=spring%20sale"},
    {"code": "spring-ads", "kind": "external", "tags": ["spring"],
     "destination_url": "https://shop.example/ads?utm_source=google&utm_medium=cpc&utm_campaign=spring+sale#top"},
    {"code": "winter", "kind": "external", "folder": "Archive",
     "destination_url": "https://shop.example/winter?utm_term=coats&utm_content=banner/1"},
]


async def make_links(client: TestClient) -> dict[str, str]:
    made = {}
    for body in LINKS:
        response = await client.post(f"{API}/links", json=body, headers=ADMIN)
        assert response.status == 201, await response.text()
        made[body["code"]] = (await response.json())["data"]["id"]
    return made


async def codes(client: TestClient, query: str) -> list[str]:
    response = await client.get(f"{API}/links/overview?{query}", headers=ADMIN)
    assert response.status == 200, await response.text()
    page = await response.json()
    assert page["count"] == len(page["data"])
    return sorted(link["code"] for link in page["data"])


@pytest.mark.parametrize(("query", "found"), [
    ("q=SPRING", ["spring-ads", "spring-mail"]),  # code (and tag)
    ("q=email", ["spring-mail"]),  # a tag's name, whatever the case, and a UTM value
    ("q=archiv", ["winter"]),  # the folder
    ("q=coats", ["winter"]),  # a UTM value in the destination
    ("tag=spring", ["spring-ads", "spring-mail"]),
    ("tag=Email", ["spring-mail"]),
    ("tag=email", []),  # a tag is named exactly
    ("folder=Campaigns", ["spring-mail"]),
    ("folder=Nothing", []),
    ("utm_source=newsletter", ["spring-mail"]),
    ("utm_source=news", []),  # a UTM field matches whole values only
    ("utm_campaign=spring sale", ["spring-ads", "spring-mail"]),  # %20 and + alike
    ("utm_medium=cpc&tag=spring", ["spring-ads"]),
    ("utm_content=banner/1", ["winter"]),
    ("utm_term=coats&folder=Campaigns", []),
    ("q=spring&folder=Campaigns&tag=spring", ["spring-mail"]),
])
async def test_the_list_searches_code_destination_tag_folder_and_utm(seeded: TestClient, query: str,
                                                                     found: list[str]) -> None:
    await make_links(seeded)
    assert await codes(seeded, query) == found


async def test_overview_rows_carry_tags_and_folder_and_the_account_lists_them(seeded: TestClient) -> None:
    await make_links(seeded)
    response = await seeded.get(f"{API}/links/overview?tag=spring&limit=1&offset=1", headers=ADMIN)
    page = await response.json()
    assert page["count"] == 2 and [row["code"] for row in page["data"]] == ["spring-mail"]  # paging as before
    assert (page["data"][0]["tags"], page["data"][0]["folder"]) == (["spring", "Email"], "Campaigns")
    listed = (await (await seeded.get(f"{API}/links/tags", headers=ADMIN)).json())["data"]
    assert listed == {"tags": [{"name": "Email", "links": 1, "color": None},
                               {"name": "spring", "links": 2, "color": None}],
                      "folders": [{"name": "Archive", "links": 1}, {"name": "Campaigns", "links": 1}]}
    other = (await (await seeded.get(f"/api/admin/v1/accounts/{B}/links/tags", headers=ADMIN)).json())["data"]
    assert other == {"tags": [], "folders": []}


@pytest.mark.parametrize(("tag", "body", "status", "answer"), [
    ("spring", {"color": "green"}, 200, {"name": "spring", "links": 2, "color": "green"}),
    ("unused", {"color": "red"}, 200, {"name": "unused", "links": 0, "color": "red"}),  # before any link has it
    ("spring", {"color": None}, 200, {"name": "spring", "links": 2, "color": None}),
    ("spring", {"color": "teal"}, 400, None),
    ("a,b", {"color": "red"}, 400, None),
    ("spring", {}, 400, None),
])
async def test_a_tag_gets_a_colour_in_its_account(seeded: TestClient, tag: str, body: Any, status: int,
                                                  answer: Any) -> None:
    await make_links(seeded)
    response = await seeded.put(f"{API}/links/tags/{tag}", json=body, headers=ADMIN)
    assert response.status == status, await response.text()
    listed = (await (await seeded.get(f"{API}/links/tags", headers=ADMIN)).json())["data"]["tags"]
    if answer is not None:
        assert (await response.json())["data"] == answer
        assert answer in listed or answer["color"] is None
    other = (await (await seeded.get(f"/api/admin/v1/accounts/{B}/links/tags", headers=ADMIN)).json())["data"]
    assert other["tags"] == []  # another account's tags and colours are its own


async def test_the_resource_list_takes_the_same_search_and_pages_as_before(seeded: TestClient) -> None:
    await make_links(seeded)
    response = await seeded.get(f"{API}/links?tag=spring&utm_medium=CPC", headers=ADMIN)
    page = await response.json()
    assert response.status == 200 and page["count"] == 1
    assert (page["data"][0]["code"], page["data"][0]["tags"]) == ("spring-ads", ["spring"])
    response = await seeded.get(f"{API}/links?q=shop.example&limit=2&offset=1", headers=ADMIN)
    page = await response.json()  # oldest first, as the list always was: the seed's link, then these three
    assert (page["count"], [link["code"] for link in page["data"]]) == (4, ["spring-mail", "spring-ads"])
    response = await seeded.get(f"/api/admin/v1/accounts/{B}/links?q=spring", headers=ADMIN)
    assert (await response.json())["count"] == 0


async def bulk(client: TestClient, action: str, body: dict[str, Any], headers: dict[str, str] = ADMIN,
               account: str = A) -> tuple[int, Any]:
    response = await client.post(f"/api/admin/v1/accounts/{account}/links/bulk/{action}", json=body, headers=headers)
    return response.status, await response.json()


async def link_of(client: TestClient, link_id: str, account: str = A) -> dict[str, Any]:
    response = await client.get(f"/api/admin/v1/accounts/{account}/links/{link_id}", headers=ADMIN)
    return dict((await response.json())["data"])


async def test_bulk_tags_folder_and_disable_change_the_selection_and_are_audited(seeded: TestClient) -> None:
    made = await make_links(seeded)
    selection = [made["spring-ads"], made["winter"], made["spring-ads"]]  # named twice: once
    status, body = await bulk(seeded, "tags", {"link_ids": selection, "add": ["q3", " sale "], "remove": ["spring"]})
    assert status == 200, body
    assert body["data"] == {"selected": 2, "changed": 2, "changed_ids": [made["spring-ads"], made["winter"]]}
    assert (await link_of(seeded, made["spring-ads"]))["tags"] == ["q3", "sale"]
    assert (await link_of(seeded, made["winter"]))["tags"] == ["q3", "sale"]
    assert (await link_of(seeded, made["spring-mail"]))["tags"] == ["spring", "Email"]  # not selected
    assert await codes(seeded, "tag=q3") == ["spring-ads", "winter"]

    status, body = await bulk(seeded, "folder", {"link_ids": [made["spring-ads"], made["winter"]],
                                                 "folder": "Q3"})
    assert status == 200 and body["data"]["changed"] == 2
    assert await codes(seeded, "folder=Q3") == ["spring-ads", "winter"]
    status, body = await bulk(seeded, "folder", {"link_ids": [made["winter"]], "folder": None})
    assert (await link_of(seeded, made["winter"]))["folder"] is None

    status, body = await bulk(seeded, "disable", {"link_ids": [made["spring-ads"]]})
    assert status == 200 and body["data"]["changed"] == 1
    assert (await seeded.get("/spring-ads", allow_redirects=False)).status == 410
    status, body = await bulk(seeded, "disable", {"link_ids": [made["spring-ads"]], "disabled": True})
    assert body["data"] == {"selected": 1, "changed": 0, "changed_ids": []}  # already so: nothing written
    status, body = await bulk(seeded, "disable", {"link_ids": [made["spring-ads"]], "disabled": False})
    assert (await seeded.get("/spring-ads", allow_redirects=False, headers={"User-Agent": DESKTOP})).status == 302

    response = await seeded.get(f"{API}/audit-log", params={"object_id": made["winter"]}, headers=ADMIN)
    entries = (await response.json())["data"]
    assert [(e["action"], e["fields"]) for e in entries] == [
        ("bulk-move", {"folder": None}), ("bulk-move", {"folder": "Q3"}),
        ("bulk-tag", {"add": ["q3", "sale"], "remove": ["spring"]}), ("create", entries[-1]["fields"])]
    response = await seeded.get(f"{API}/audit-log", params={"action": "bulk-disable"}, headers=ADMIN)
    assert [e["fields"] for e in (await response.json())["data"]] == [{"disabled": False}, {"disabled": True}]


async def test_a_selection_naming_another_accounts_or_an_unknown_link_changes_nothing(seeded: TestClient) -> None:
    made = await make_links(seeded)
    theirs = ids(B)["links"]
    unknown = "cccccccc-0000-4000-8000-000000000009"
    for action, extra in (("tags", {"add": ["x"]}), ("folder", {"folder": "X"}), ("disable", {}), ("export", {})):
        response = await seeded.post(f"{API}/links/bulk/{action}", headers=ADMIN,
                                     json={"link_ids": [made["winter"], theirs, unknown], **extra})
        assert response.status == 400, action
        body = await response.json()
        assert body["error"] == "Unknown links"
        assert [(i["path"], i["message"]) for i in body["details"]["issues"]] == [
            ("link_ids[1]", f"no link with id {theirs} in this account"),
            ("link_ids[2]", f"no link with id {unknown} in this account")]
    assert (await link_of(seeded, made["winter"]))["tags"] == []  # the valid one was not changed either
    theirs_now = await link_of(seeded, theirs, B)
    assert (theirs_now["tags"], theirs_now["folder"], theirs_now["disabled"]) == ([], None, False)
    # B's own bulk action on A's link is refused the same way
    status, body = await bulk(seeded, "disable", {"link_ids": [made["winter"]]}, account=B)
    assert status == 400 and (await link_of(seeded, made["winter"]))["disabled"] is False
    response = await seeded.get(f"{API}/audit-log", params={"action": "bulk-tag"}, headers=ADMIN)
    assert (await response.json())["count"] == 0


@pytest.mark.parametrize(("action", "body", "path"), [
    ("tags", {"link_ids": [], "add": ["x"]}, "link_ids"),
    ("tags", {"link_ids": ["not-a-uuid"]}, "link_ids[0]"),
    ("tags", {"link_ids": [ids(A)["links"]], "add": ["a,b"]}, "add[0]"),
    ("folder", {"link_ids": [ids(A)["links"]]}, "folder"),
    ("disable", {"link_ids": [ids(A)["links"]] * 501}, "link_ids"),
    ("export", {"link_ids": [ids(A)["links"]], "extra": 1}, "extra"),
])
async def test_bulk_bodies_are_checked(seeded: TestClient, action: str, body: Any, path: str) -> None:
    status, answer = await bulk(seeded, action, body)
    assert status == 400 and set(answer) == {"error", "details"}
    assert path in [issue["path"] for issue in answer["details"]["issues"]]


async def test_a_read_only_role_may_search_and_export_but_not_change(seeded: TestClient) -> None:
    made = await make_links(seeded)
    await make_person(seeded, "analyst@example.com", A, "analyst")
    viewer = await session_of(seeded, "analyst@example.com")
    selection = {"link_ids": [made["winter"]]}
    for action, extra in (("tags", {"add": ["x"]}), ("folder", {"folder": "X"}), ("disable", {})):
        status, body = await bulk(seeded, action, {**selection, **extra}, headers=viewer)
        assert status == 403 and set(body) == {"error", "details"}, (action, body)
    assert (await link_of(seeded, made["winter"]))["folder"] == "Archive"
    response = await seeded.get(f"{API}/links/overview?tag=spring", headers=viewer)
    assert response.status == 200
    response = await seeded.post(f"{API}/links/bulk/export", json=selection, headers=viewer)
    assert response.status == 200 and response.content_type == "text/csv"


async def test_export_writes_the_selection_as_csv_in_the_order_named(seeded: TestClient) -> None:
    made = await make_links(seeded)
    response = await seeded.post(f"{API}/links", headers=ADMIN, json={
        "code": "formula", "kind": "external", "tags": ["=HYPERLINK(1)"], "destination_url": "https://shop.example/"})
    formula = (await response.json())["data"]["id"]
    response = await seeded.post(f"{API}/links/bulk/export", headers=ADMIN,
                                 json={"link_ids": [made["spring-mail"], made["winter"], formula]})
    assert response.status == 200 and "attachment" in response.headers["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(await response.text())))
    assert [row["code"] for row in rows] == ["spring-mail", "winter", "formula"]
    first = rows[0]
    assert (first["tags"], first["folder"], first["utm_source"], first["utm_campaign"], first["disabled"]) == (
        "spring; Email", "Campaigns", "Newsletter", "spring sale", "false")
    assert first["short_url"].endswith("/spring-mail") and rows[1]["utm_content"] == "banner/1"
    assert rows[2]["tags"] == "'=HYPERLINK(1)"  # never a formula


async def test_the_conversion_report_groups_by_tag_and_by_folder(seeded: TestClient) -> None:
    await make_links(seeded)
    headers = bearer(await token_for(seeded, A))
    # spring-mail (spring, Email; Campaigns): 2 clicks, 1 purchase; spring-ads (spring): 1 click; winter (Archive):
    # 1 click, 1 purchase; the seed's link (no tag, no folder): 1 click
    for n, (code, value) in enumerate((("spring-mail", "10.00"), ("spring-mail", None), ("spring-ads", None),
                                       ("winter", "4.50"), ("lnkaaaa", None))):
        answer = await seeded.get(f"/{code}", headers={"User-Agent": DESKTOP}, allow_redirects=False)
        assert answer.status == 302
        if value is not None:
            await purchase(seeded, headers, tracking_of(answer.headers["Location"]), f"o-{n}", value)

    def rows_of(report: dict[str, Any], name: str) -> dict[Any, tuple[int, int]]:
        return {row["key"][name]: (row["clicks"]["human"], row["purchases"]) for row in report["rows"]}

    response = await seeded.get(f"{API}/reports/conversions?group_by=tag", headers=ADMIN)
    report = (await response.json())["data"]
    assert rows_of(report, "tag") == {"spring": (3, 1), "Email": (2, 1), None: (2, 1)}
    assert report["totals"]["clicks"]["human"] == 5 and report["totals"]["purchases"] == 2  # each click once
    response = await seeded.get(f"{API}/reports/conversions?group_by=folder", headers=ADMIN)
    assert rows_of((await response.json())["data"], "folder") == {"Campaigns": (2, 1), "Archive": (1, 1),
                                                                   None: (2, 0)}
    response = await seeded.get(f"{API}/reports/conversions?group_by=tag&limit=1&format=csv", headers=ADMIN)
    lines = list(csv.reader(io.StringIO(await response.text())))
    assert lines[0][0] == "tag (a link counts in each of its tags)"
    assert [line[:2] for line in lines[1:]] == [["spring", "3"], ["(other)", "4"]]
    response = await seeded.get(f"{API}/reports/conversions?group_by=folder,day&format=csv", headers=ADMIN)
    assert sorted(line[0] for line in list(csv.reader(io.StringIO(await response.text())))[1:]) == [
        "(no folder)", "Archive", "Campaigns"]
    for refused in ("tag,link", "tag,folder", "tag,country"):
        response = await seeded.get(f"{API}/reports/conversions?group_by={refused}", headers=ADMIN)
        assert response.status == 400, refused
