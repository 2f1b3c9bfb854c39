"""Imports of other link services' exports over the admin API (issue 36, "Migration in"), on both stores: each
vendor's example export (fixtures/imports) is imported and its links answer at their old codes; a dry run lists
what would happen and writes nothing; rows fail alone; codes of another account are never taken nor shown; the
body is bounded."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import DB
from linksvc.app import create_app
from linksvc.imports.service import CHUNK_ROWS, PENDING_REASON, ImportOptions, import_links
from linksvc.seed import load_seed
from linksvc.settings import Settings
from tests.agents import AGENTS
from tests.conftest import ADMIN, service_server
from tests.factories import A, B, two_accounts
from tests.people import make_person, session_of

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "imports"
IMPORTS = "/api/admin/v1/accounts/{account}/imports"

# vendor: (its fixture, [(code, destination)] of its rows, the tags of its first row)
VENDORS: dict[str, tuple[str, list[tuple[str, str]], list[str]]] = {
    "bitly": ("bitly.json", [
        ("spring-sale", "https://shop.example/spring?utm_source=newsletter&utm_medium=email&utm_campaign=spring-sale"),
        ("4bLx9Qe", "https://shop.example/stores/berlin")], ["spring", "email"]),
    "rebrandly": ("rebrandly.json", [
        ("summer24", "https://shop.example/catalogue/summer?utm_source=instagram&utm_medium=social"),
        ("jobs-2024", "https://careers.shop.example/")], []),
    "shortio": ("shortio.json", [
        ("bf24", "https://shop.example/black-friday?utm_source=tiktok&utm_medium=paid&utm_campaign=bf24"),
        ("gifts", "https://shop.example/gift-cards")], ["black-friday", "paid"]),
    "shlink": ("shlink.json", [
        ("12C18", "https://shop.example/new-arrivals?utm_source=push&utm_medium=app"),
        ("help-center", "https://help.shop.example/")], ["arrivals", "app"]),
    "yourls": ("yourls.json", [
        ("winter", "https://shop.example/winter?utm_source=yourls&utm_campaign=winter"),
        ("faq", "https://shop.example/faq")], []),
    "kutt": ("kutt.json", [
        ("launch", "https://shop.example/launch?utm_source=kutt&utm_medium=link&utm_campaign=launch"),
        ("returns", "https://shop.example/returns")], []),
}


async def send(client: TestClient, vendor: str, body: Any, account: str = A, headers: dict[str, str] | None
               = None, **query: str) -> Any:
    params = {"vendor": vendor, **query}
    return await client.post(IMPORTS.format(account=account), params=params,
                             data=body.encode() if isinstance(body, str) else body,
                             headers=ADMIN if headers is None else headers)


async def imported(client: TestClient, vendor: str, body: bytes | str, account: str = A, **query: str
                   ) -> dict[str, Any]:
    response = await send(client, vendor, body, account, **query)
    assert response.status == 200, (await response.text())[:2000]
    return dict((await response.json())["data"])


async def click(client: TestClient, code: str) -> Any:
    return await client.get(f"/{code}", headers={"User-Agent": AGENTS["safari_mac"]}, allow_redirects=False)


async def link_count(client: TestClient, account: str = A) -> int:
    listed = await (await client.get(f"/api/admin/v1/accounts/{account}/links?limit=1", headers=ADMIN)).json()
    return int(listed["count"])


@pytest.mark.parametrize("vendor", list(VENDORS))
async def test_each_vendors_example_export_is_planned_then_imported_and_its_links_answer(
        seeded: TestClient, vendor: str) -> None:
    fixture, expected, tags = VENDORS[vendor]
    body = (FIXTURES / fixture).read_bytes()
    before = await link_count(seeded)

    plan = await imported(seeded, vendor, body, dry_run="true")
    assert plan["dry_run"] is True
    assert plan["summary"] == {"rows": 2, "created": 2, "skipped": 0, "failed": 0, "pending": 0}
    assert [(row["row"], row["status"], row["code"]) for row in plan["rows"]] == [
        (1, "created", expected[0][0]), (2, "created", expected[1][0])]
    assert await link_count(seeded) == before  # nothing written
    assert (await click(seeded, expected[0][0])).status == 404

    done = await imported(seeded, vendor, body)
    assert done["summary"] == {"rows": 2, "created": 2, "skipped": 0, "failed": 0, "pending": 0}
    first = done["rows"][0]
    assert first["tags"] == tags and first["link_id"] and first["destination_url"] == expected[0][1]
    stored = await (await seeded.get(f"/api/admin/v1/accounts/{A}/links/{first['link_id']}", headers=ADMIN)).json()
    assert stored["data"]["tags"] == tags  # the vendor's tags are the link's
    assert first["utm"] == {k: v for k, v in (p.split("=") for p in expected[0][1].partition("?")[2].split("&") if p)}
    for code, destination in expected:
        answer = await click(seeded, code)
        assert answer.status == 302, await answer.text()
        location = answer.headers["Location"]
        assert location.split("?")[0] == destination.split("?")[0]
        for utm in (destination.partition("?")[2].split("&") if "?" in destination else []):
            assert utm in location  # the vendor's UTM is the link's
    link = await (await seeded.get(f"/api/admin/v1/accounts/{A}/links/{first['link_id']}", headers=ADMIN)).json()
    assert link["data"]["code"] == expected[0][0] and link["data"]["destination_url"] == expected[0][1]

    again = await imported(seeded, vendor, body)  # sent again: converges
    assert again["summary"] == {"rows": 2, "created": 0, "skipped": 2, "failed": 0, "pending": 0}
    assert again["rows"][0]["link_id"] == first["link_id"]
    assert await link_count(seeded) == before + 2


async def test_an_import_out_of_time_stops_between_chunks_and_the_same_file_goes_on(seeded: TestClient) -> None:
    count = CHUNK_ROWS + 50
    body = json.dumps({"data": [{"address": f"bulk{n:04d}", "target": f"https://shop.example/p/{n}"}
                                for n in range(count)]})
    spent = ImportOptions(time_budget=0.0)  # spent at once: the first chunk runs, no other starts
    first = await import_links(seeded.app[DB], A, "kutt", body, spent)
    assert first["summary"] == {"rows": count, "created": CHUNK_ROWS, "skipped": 0, "failed": 0, "pending": 50}
    assert {row["status"] for row in first["rows"][CHUNK_ROWS:]} == {"pending"}
    assert first["rows"][-1]["reason"] == PENDING_REASON
    assert (await click(seeded, f"bulk{CHUNK_ROWS:04d}")).status == 404
    second = await import_links(seeded.app[DB], A, "kutt", body, spent)
    assert second["summary"] == {"rows": count, "created": 0, "skipped": CHUNK_ROWS, "failed": 0, "pending": 50}
    # without a budget (the command line), every chunk runs: the rest is imported
    rest = await import_links(seeded.app[DB], A, "kutt", body, ImportOptions())
    assert rest["summary"] == {"rows": count, "created": 50, "skipped": CHUNK_ROWS, "failed": 0, "pending": 0}
    assert (await click(seeded, f"bulk{count - 1:04d}")).status == 302


def bitly_csv(*rows: str) -> str:
    return "Created at,Title,Link,Long URL,Tags\r\n" + "".join(row + "\r\n" for row in rows)


def first_of_each_code(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for row in result["rows"]:
        found.setdefault(row["original_code"], row)
    return found


async def test_bad_rows_fail_alone_with_their_reason_and_the_others_are_imported(seeded: TestClient) -> None:
    taken = await seeded.post(f"/api/admin/v1/accounts/{B}/links", headers=ADMIN, json={
        "code": "theirs1", "kind": "external", "destination_url": "https://b.example/secret-path"})
    assert taken.status == 201, await taken.text()
    text = bitly_csv(
        "2024-01-01,Fine,https://bit.ly/fine1,https://shop.example/fine?utm_source=csv,a|b",
        "2024-01-01,Script,https://bit.ly/script1,javascript:alert(1),",
        "2024-01-01,Plain http,https://bit.ly/plain1,http://shop.example/,",
        "2024-01-01,Reserved,https://bit.ly/api,https://shop.example/api,",
        "2024-01-01,Theirs,https://bit.ly/theirs1,https://shop.example/theirs,",
        "2024-01-01,Formula,https://bit.ly/formula1,https://shop.example/f,=HYPERLINK(\"x\")",
        "2024-01-01,Twice,https://bit.ly/fine1,https://shop.example/other,",
        "2024-01-01,No destination,https://bit.ly/empty1,,",
    )
    result = await imported(seeded, "bitly", text)
    by_code = first_of_each_code(result)
    assert [row["row"] for row in result["rows"]] == list(range(2, 10))  # CSV lines: the header is line 1
    assert by_code["fine1"]["status"] == "created" and by_code["fine1"]["tags"] == ["a", "b"]
    assert by_code["formula1"]["status"] == "created"
    assert by_code["formula1"]["tags"] == ['=HYPERLINK("x")']  # a cell is only data
    refused = {code: (row["status"], row["error"]) for code, row in by_code.items()
               if code in ("script1", "plain1", "api", "theirs1", "empty1")}
    assert refused == {"script1": ("error", "Invalid body"), "plain1": ("error", "Invalid body"),
                       "api": ("error", "Invalid code"), "theirs1": ("error", "Code taken"),
                       "empty1": ("error", "Invalid row")}
    assert by_code["script1"]["details"]["field"] == "destination_url"
    assert "b.example" not in json.dumps(by_code["theirs1"])  # another account's link is never shown
    twice = result["rows"][6]
    assert twice["status"] == "skipped" and twice["reason"] == "row 2 of this file has the same code"
    assert result["summary"] == {"rows": 8, "created": 2, "skipped": 1, "failed": 5, "pending": 0}
    assert (await click(seeded, "theirs1")).headers["Location"].startswith("https://b.example/")  # untouched

    fresh = await imported(seeded, "bitly", text, new_codes="true")
    by_code = first_of_each_code(fresh)
    assert by_code["theirs1"]["status"] == "created" and by_code["theirs1"]["code"] != "theirs1"
    assert by_code["theirs1"]["reason"] == "'theirs1' is taken by another link: the link gets a new code"
    assert by_code["api"]["status"] == "created" and by_code["api"]["code"] != "api"
    answer = await click(seeded, by_code["theirs1"]["code"])
    assert answer.status == 302 and answer.headers["Location"].startswith("https://shop.example/theirs?tracking_id=")
    assert by_code["fine1"]["status"] == "skipped"


async def test_a_file_that_is_not_the_vendors_export_is_refused_whole(seeded: TestClient) -> None:
    cases = [("kutt", b"not json", "is not JSON"), ("shlink", b'{"data": 3}', "expected a list of links"),
             ("yourls", b"[]", "expected the stats action's object"), ("bitly", b"\xff\xfe", "UTF-8")]
    for vendor, body, words in cases:
        response = await send(seeded, vendor, body)
        answer = await response.json()
        assert response.status == 400 and words in json.dumps(answer), (vendor, answer)
        assert set(answer) == {"error", "details"}
    unknown = await send(seeded, "tinyurl", b"[]")
    assert unknown.status == 400 and (await unknown.json())["details"]["field"] == "vendor"
    missing = await seeded.post(IMPORTS.format(account="cccccccc-0000-4000-8000-000000000003"),
                                params={"vendor": "kutt"}, data=b"[]", headers=ADMIN)
    assert missing.status == 404


async def test_a_body_over_the_import_limit_is_413(aiohttp_client: Any, settings: Settings) -> None:
    client = await aiohttp_client(service_server(create_app(replace(settings, max_import_body_bytes=1_000))))
    await load_seed(client.app[DB], two_accounts(), allow_private=True)
    body = (FIXTURES / "bitly.json").read_bytes()
    assert len(body) > 1_000
    before = await link_count(client)
    for sent in (body, iter_chunks(body)):  # its length announced, or found out while reading (chunked)
        response = await send(client, "bitly", sent)
        answer = await response.json()
        assert response.status == 413 and set(answer) == {"error", "details"}, answer
        assert "at most 1000 bytes" in json.dumps(answer)
    assert await link_count(client) == before


async def iter_chunks(body: bytes) -> Any:
    for start in range(0, len(body), 300):
        yield body[start:start + 300]


async def test_only_members_who_may_write_links_import_and_only_into_their_account(seeded: TestClient) -> None:
    body = (FIXTURES / "kutt.json").read_bytes()
    await make_person(seeded, "analyst@a.example", A, "analyst")
    await make_person(seeded, "marketer@a.example", A, "marketer")
    analyst = await session_of(seeded, "analyst@a.example")
    marketer = await session_of(seeded, "marketer@a.example")
    assert (await send(seeded, "kutt", body, headers=analyst, dry_run="true")).status == 403
    other = await send(seeded, "kutt", body, account=B, headers=marketer)
    assert other.status in (403, 404)
    assert (await click(seeded, "launch")).status == 404  # nothing imported into the other account
    planned = await send(seeded, "kutt", body, headers=marketer, dry_run="true")
    assert planned.status == 200
    mine = await send(seeded, "kutt", body, headers=marketer)
    assert mine.status == 200 and (await mine.json())["data"]["summary"]["created"] == 2
    log = await (await seeded.get(f"/api/admin/v1/accounts/{A}/audit-log", params={"action": "import"},
                                  headers=ADMIN)).json()
    assert [entry["object"]["kind"] for entry in log["data"]] == ["links"]  # the import; the dry run left none
