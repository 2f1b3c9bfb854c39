"""The Dynamic Links importer with exports of thousands of rows (issue 32, "Imports that finish"): a file larger
than the ordinary body limit is imported whole in one request; bad rows fail alone, each named by its line, and
the others are written; sending the same file again (a client that lost the answer, or an import cut off
half-way) converges instead of answering "Code taken" for the rows already imported."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from linksvc.settings import Settings
from tests.agents import AGENTS
from tests.conftest import ADMIN
from tests.factories import A, B
from tests.http.test_domains import added, start, verify
from tests.rawhttp import exchange

ADMIN_API = "/api/admin/v1"
HOST = "go.shop.example"
HEADER = "Link name,Short Dynamic Link,Long Dynamic Link\r\n"


def row(n: int, host: str = HOST, code: str | None = None, extra: str = "") -> str:
    """One row of a console export: its own path, a long link with apps, fallbacks, UTM and a preview."""
    return (f"Product {n},https://{host}/{code or f'p{n:06d}'},\"https://{host}/?link=https%3A%2F%2Fshop.example"
            f"%2Fproduct%2F{n}&apn=com.shop.app&afl=https%3A%2F%2Fshop.example%2Fandroid%2F{n}&ibi=com.shop.ios"
            f"&isi=1234567&ofl=https%3A%2F%2Fshop.example%2Fp%2F{n}&utm_source=newsletter&utm_medium=email"
            f"&utm_campaign=spring-{n % 7}&st=Product+{n}&sd=Half+price{extra}\"\r\n")


def export(count: int, start_at: int = 0) -> str:
    return HEADER + "".join(row(n) for n in range(start_at, start_at + count))


@pytest.fixture
async def service(aiohttp_client: Any, settings: Settings) -> TestClient:
    client = await start(aiohttp_client, settings)
    response = await verify(client, await added(client, HOST))
    assert response.status == 200, await response.text()
    return client


async def send(client: TestClient, text: str, account: str = A) -> Any:
    return await client.post(f"{ADMIN_API}/accounts/{account}/links/fdl-import", data=text.encode(),
                             headers={**ADMIN, "Content-Type": "text/csv"})


async def imported(client: TestClient, text: str, account: str = A) -> dict[str, Any]:
    response = await send(client, text, account)
    assert response.status == 200, (await response.text())[:2000]
    return dict((await response.json())["data"])


async def link_count(client: TestClient, account: str = A) -> int:
    listed = await (await client.get(f"{ADMIN_API}/accounts/{account}/links?limit=1", headers=ADMIN)).json()
    return int(listed["count"])


async def test_an_export_of_thousands_of_rows_over_the_ordinary_body_limit_is_imported_whole(
        service: TestClient, settings: Settings) -> None:
    text = export(4_000)
    assert len(text.encode()) > settings.max_body_bytes  # larger than any other admin request may be
    before = await link_count(service)
    result = await imported(service, text)
    assert len(result["created"]) == 4_000 and result["failed"] == [] and result["unchanged"] == []
    assert [row["line"] for row in result["created"]] == list(range(2, 4_002))
    assert await link_count(service) == before + 4_000
    # the last row answers at its old short path like any link
    answer = await service.get("/p003999", headers={"Host": HOST, "User-Agent": AGENTS["safari_mac"]},
                               allow_redirects=False)
    assert answer.status == 302 and answer.headers["Location"].startswith("https://shop.example/p/3999?")
    assert "utm_campaign=spring-" in answer.headers["Location"]


async def test_bad_rows_fail_alone_named_by_their_line_and_the_others_are_written(service: TestClient) -> None:
    taken = await service.post(f"{ADMIN_API}/accounts/{B}/links", headers=ADMIN, json={
        "code": "elsewhere1", "kind": "external", "destination_url": "https://b.example/"})
    assert taken.status == 201, await taken.text()
    lines = [row(n) for n in range(1_000)]
    lines[10] = row(10, extra="&si=not+a+url")  # line 12: a preview image that is no URL
    lines[500] = row(500, host="other.example")  # line 502: not a domain of the account
    lines[600] = row(600, code="api")  # line 602: a path of the service's own
    lines[700] = row(700, code="elsewhere1")  # line 702: another account's link has this code
    lines[800] = row(800, code="p000799")  # line 802: the path of line 801 again
    before = await link_count(service)
    result = await imported(service, HEADER + "".join(lines))
    failed = {row["line"]: row for row in result["failed"]}
    assert sorted(failed) == [12, 502, 602, 702, 802]
    assert failed[12]["details"]["field"] == "si"
    assert failed[502]["error"] == "Unknown domain"
    assert failed[602]["details"]["field"] == "short_link" and "reserved" in failed[602]["details"]["message"]
    assert failed[702]["error"] == "Code taken"
    assert failed[802]["error"] == "Code taken" and "line 801" in failed[802]["details"]["message"]
    assert all(set(row) == {"line", "short_link", "error", "details"} for row in result["failed"])
    assert len(result["created"]) == 995 and await link_count(service) == before + 995


async def test_sending_the_same_file_again_converges(service: TestClient) -> None:
    text = export(2_000)
    first = await imported(service, text)
    assert len(first["created"]) == 2_000
    count = await link_count(service)
    again = await imported(service, text)
    assert again["failed"] == [] and again["created"] == []
    assert [(row["line"], row["link_id"]) for row in again["unchanged"]] == \
        [(row["line"], row["link_id"]) for row in first["created"]]
    assert await link_count(service) == count  # nothing written twice


async def test_an_import_cut_off_half_way_is_finished_by_sending_the_whole_file(service: TestClient) -> None:
    half = await imported(service, export(1_200))
    result = await imported(service, export(2_500))  # the same export, whole
    assert result["failed"] == []
    assert [row["link_id"] for row in result["unchanged"]] == [row["link_id"] for row in half["created"]]
    assert [row["line"] for row in result["created"]] == list(range(1_202, 2_502))


async def test_a_path_holding_a_link_with_other_settings_is_named_not_overwritten(service: TestClient) -> None:
    first = await imported(service, export(3))
    changed = HEADER + row(0) + row(1, extra="&si=https%3A%2F%2Fshop.example%2Fnew.png") + row(2)
    result = await imported(service, changed)
    assert [row["line"] for row in result["unchanged"]] == [2, 4]
    assert [(row["line"], row["error"]) for row in result["failed"]] == [(3, "Code taken")]
    assert first["created"][1]["link_id"] in result["failed"][0]["details"]["message"]
    stored = await (await service.get(f"{ADMIN_API}/accounts/{A}/links/{first['created'][1]['link_id']}",
                                      headers=ADMIN)).json()
    assert (stored["data"].get("preview") or {}).get("image_url") is None  # left as it was


async def test_an_export_over_the_import_limit_is_refused_whole(aiohttp_client: Any, settings: Settings) -> None:
    client = await start(aiohttp_client, replace(settings, max_import_body_bytes=64 * 1024))
    assert (await verify(client, await added(client, HOST))).status == 200
    before = await link_count(client)
    response = await send(client, export(400))  # about 140 KiB
    assert response.status == 413
    assert set(await response.json()) == {"error", "details"}
    assert await link_count(client) == before


async def test_an_export_of_more_rows_than_one_import_takes_is_refused_whole(service: TestClient) -> None:
    text = "short_link,long_link\n" + f"https://{HOST}/abc,https://{HOST}/?link=https://shop.example/\n" * 20_001
    before = await link_count(service)
    response = await send(service, text)
    assert response.status == 400
    answer = await response.json()
    assert answer["error"] == "Invalid export" and "20,001 rows" in answer["details"]["message"]
    assert await link_count(service) == before


async def test_the_imports_larger_limit_is_not_every_endpoints(aiohttp_client: Any, settings: Settings) -> None:
    """An ordinary endpoint stops reading a chunked body at its own limit (413), however large the import's:
    it never holds, or waits for, more of it."""
    client = await start(aiohttp_client, replace(settings, request_timeout_seconds=2.0))
    head = (f"POST {ADMIN_API}/accounts/{A}/brands HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
            f"{ADMIN['Authorization'].split()[1]}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
            "Connection: close\r\n\r\n").encode()
    chunk = b"%x\r\n" % (64 * 1024) + b" " * (64 * 1024) + b"\r\n"
    over = settings.max_body_bytes // (64 * 1024) + 2  # past the ordinary limit; the body never ends
    port = client.server.port
    assert port is not None
    reply = await asyncio.to_thread(exchange, port, head + chunk * over, 10.0)
    assert reply.status == 413, reply.raw[:300]
    assert set(json.loads(reply.body)) == {"error", "details"}


# Issue 32, second look: line ends and headers of the files people actually have.

async def test_a_file_whose_lines_end_in_a_lone_cr_is_read_row_by_row(service: TestClient) -> None:
    """Spreadsheets on macOS saved "CSV (Macintosh)" with a CR alone at each line's end: read like any other."""
    text = export(3).replace("\r\n", "\r")
    result = await imported(service, text)
    assert [(row["line"], row["code"]) for row in result["created"]] == [(2, "p000000"), (3, "p000001"),
                                                                        (4, "p000002")]
    assert result["failed"] == []
    again = await imported(service, "\ufeff" + export(3).replace("\r\n", "\n"))  # the same rows, BOM and LF
    assert [row["line"] for row in again["unchanged"]] == [2, 3, 4] and again["created"] == []


@pytest.mark.parametrize("header", [
    "Short Dynamic Link,Long Dynamic Link,Long Dynamic Link",
    "Short Dynamic Link,Short link,Long Dynamic Link",
    "Short link,Deep link (link),link",
    "Short link,UTM source (utm_source),Deep link (link),utm_source",
])
async def test_a_header_naming_a_column_twice_is_refused_whole(service: TestClient, header: str) -> None:
    """Which of two columns of the same name is meant cannot be known; taking the first silently failed a row
    for want of the deep link the second column held, or dropped its UTM. The file is refused, naming both."""
    columns = header.split(",")
    cells = ["" if n == 1 else f"https://{HOST}/dup1" if n == 0 else "https://shop.example/x"
             for n in range(len(columns))]
    before = await link_count(service)
    response = await send(service, header + "\r\n" + ",".join(cells) + "\r\n")
    assert response.status == 400, await response.text()
    answer = await response.json()
    assert answer["error"] == "Invalid export" and answer["details"]["field"] == "body"
    assert "more than one column" in answer["details"]["message"]
    assert await link_count(service) == before
