"""The Dynamic Links importer reading Firebase's own export (Google Takeout, "Export Dynamic Links metadata"): one
CSV per domain with a column per parameter instead of a long link. Each row becomes the same link its long link
would have made, bad rows fail alone named by their line and FDL parameter, and sending the file again converges."""

from __future__ import annotations

import csv
import io
from typing import Any
from urllib.parse import urlencode

import pytest
from aiohttp.test_utils import TestClient

from linksvc.settings import Settings
from tests.agents import AGENTS
from tests.conftest import ADMIN
from tests.factories import A
from tests.http.test_domains import added, start, verify

ADMIN_API = "/api/admin/v1"
HOST = "go.shop.example"

# The columns of the Takeout export, in Firebase's order and spelling, as documented on
# https://firebase.google.com/support/guides/export-dynamic-links ("Export Dynamic Links metadata": "Your data is
# exported as one or more CSV files, one for each domain. Each CSV file has the following fields: 1. Short link
# 2. Deep link (link) ... 29. Creation timestamp"). Fields 1 to 19 are from the English page; 20 to 29 from the
# guide's Japanese and Korean pages (the same 29 fields, "iTunes connect at" ... untranslated), in the English
# spelling a public migration script reading these exports quotes (importFirebaseDynamicLinksToAirbridge.ts).
# Values of the columns the importer does not read (Archived?, Creation timestamp) are illustrative.
TAKEOUT_COLUMNS = (
    "Short link", "Deep link (link)", "Android package name (apn)", "Android fallback link (afl)",
    "Android minimum package version code (amv)", "iOS bundle ID (ibi)", "iOS fallback link (ifl)",
    "iOS custom scheme (ius)", "iOS iPad fallback link (ipfl)", "iOS iPad bundle ID (ipbi)",
    "iOS app store ID (isi)", "iOS minimum version (imv)", "Enable forced redirect? (efr)",
    "Desktop fallback link (ofl)", "Social title (st)", "Social description (sd)", "Social image link (si)",
    "UTM source (utm_source)", "UTM medium (utm_medium)", "UTM campaign (utm_campaign)", "UTM term (utm_term)",
    "UTM content (utm_content)", "iTunes connect at", "iTunes connect ct", "iTunes connect mt", "iTunes connect pt",
    "Archived?", "Link name", "Creation timestamp",
)
PARAMETER_OF_COLUMN = {"Deep link (link)": "link", "Android package name (apn)": "apn",
                       "Android fallback link (afl)": "afl", "Android minimum package version code (amv)": "amv",
                       "iOS bundle ID (ibi)": "ibi", "iOS fallback link (ifl)": "ifl",
                       "iOS custom scheme (ius)": "ius", "iOS iPad fallback link (ipfl)": "ipfl",
                       "iOS iPad bundle ID (ipbi)": "ipbi", "iOS app store ID (isi)": "isi",
                       "iOS minimum version (imv)": "imv", "Enable forced redirect? (efr)": "efr",
                       "Desktop fallback link (ofl)": "ofl", "Social title (st)": "st",
                       "Social description (sd)": "sd", "Social image link (si)": "si",
                       "UTM source (utm_source)": "utm_source", "UTM medium (utm_medium)": "utm_medium",
                       "UTM campaign (utm_campaign)": "utm_campaign", "UTM term (utm_term)": "utm_term",
                       "UTM content (utm_content)": "utm_content", "iTunes connect at": "at",
                       "iTunes connect ct": "ct", "iTunes connect mt": "mt", "iTunes connect pt": "pt"}

FULL = {"link": "https://shop.example/offer?id=7", "apn": "com.shop.app", "afl": "https://shop.example/android",
        "amv": "42", "ibi": "com.shop.ios", "ifl": "https://shop.example/ios", "ius": "shopapp",
        "ipfl": "https://shop.example/ipad", "ipbi": "com.shop.ipad", "isi": "1234567", "imv": "2.0", "efr": "1",
        "ofl": "https://shop.example/desktop", "st": "Black Friday", "sd": "Half price, all week",
        "si": "https://shop.example/og.png", "utm_source": "newsletter", "utm_medium": "email",
        "utm_campaign": "bf", "utm_term": "shoes", "utm_content": "banner", "at": "1l3v", "ct": "bf-mail",
        "mt": "8", "pt": "99"}


def takeout(rows: list[tuple[str, dict[str, str], str]]) -> str:
    """A Takeout CSV: the documented header, then per row its short link, parameters and link name."""
    out = io.StringIO()
    writer = csv.writer(out)  # CRLF line ends and quoting where a cell needs it, as a spreadsheet writes
    writer.writerow(TAKEOUT_COLUMNS)
    for short_link, parameters, name in rows:
        cells = {"Short link": short_link, "Archived?": "false", "Link name": name,
                 "Creation timestamp": "2023-05-04 10:11:12"}
        cells.update({column: parameters.get(parameter, "") for column, parameter in PARAMETER_OF_COLUMN.items()})
        writer.writerow([cells[column] for column in TAKEOUT_COLUMNS])
    return out.getvalue()


def console(rows: list[tuple[str, dict[str, str], str]]) -> str:
    """The same rows in the console's form: a long link per row."""
    lines = ["Link name,Short Dynamic Link,Long Dynamic Link"]
    lines += [f"{name},{short_link},\"https://{HOST}/?{urlencode(parameters)}\""
              for short_link, parameters, name in rows]
    return "\r\n".join(lines) + "\r\n"


@pytest.fixture
async def service(aiohttp_client: Any, settings: Settings) -> TestClient:
    client = await start(aiohttp_client, settings)
    response = await verify(client, await added(client, HOST))
    assert response.status == 200, await response.text()
    return client


async def imported(client: TestClient, text: str) -> dict[str, Any]:
    response = await client.post(f"{ADMIN_API}/accounts/{A}/links/fdl-import", data=text.encode(),
                                 headers={**ADMIN, "Content-Type": "text/csv"})
    assert response.status == 200, (await response.text())[:2000]
    return dict((await response.json())["data"])


async def stored(client: TestClient, link_id: str) -> dict[str, Any]:
    answer = await (await client.get(f"{ADMIN_API}/accounts/{A}/links/{link_id}", headers=ADMIN)).json()
    return {key: value for key, value in answer["data"].items()
            if key not in ("id", "code", "created_at", "updated_at")}


async def location(client: TestClient, path: str, agent: str) -> str:
    response = await client.get(path, headers={"Host": HOST, "User-Agent": AGENTS[agent]}, allow_redirects=False)
    assert response.status == 302, await response.text()
    return str(response.headers["Location"])


async def link_count(client: TestClient) -> int:
    listed = await (await client.get(f"{ADMIN_API}/accounts/{A}/links?limit=1", headers=ADMIN)).json()
    return int(listed["count"])


async def test_a_takeout_export_makes_the_links_its_long_links_would(service: TestClient) -> None:
    rows = [
        (f"https://{HOST}/m9Mm", FULL, "Black Friday mail"),  # line 2
        (f"https://{HOST}/bad1", {**FULL, "apn": "not a package", "sd": "two\nlines"}, "Broken"),  # lines 3-4
        (f"https://{HOST}/nodeep", {"apn": "com.shop.app", "ofl": "https://shop.example/"}, "No deep link"),  # 5
        (f"https://{HOST}/badimg", {"link": "https://shop.example/", "si": "not a url"}, "Bad image"),  # line 6
        ("https://other.example/abcd", {"link": "https://shop.example/"}, "Elsewhere"),  # line 7
        (f"https://{HOST}/plain", {"link": "https://shop.example/welcome"}, "Welcome"),  # line 8
    ]
    text = takeout(rows)
    assert text.splitlines()[0].split(",")[:3] == ["Short link", "Deep link (link)", "Android package name (apn)"]
    result = await imported(service, text)
    assert [(row["line"], row["code"]) for row in result["created"]] == [(2, "m9Mm"), (8, "plain")]
    failed = {row["line"]: row for row in result["failed"]}
    assert sorted(failed) == [3, 5, 6, 7]
    assert failed[3]["details"]["field"] == "apn"
    assert failed[5]["details"]["field"] == "link"
    assert failed[6]["details"]["field"] == "si"
    assert failed[7]["error"] == "Unknown domain"
    assert all(set(row) == {"line", "short_link", "error", "details"} for row in result["failed"])

    # the same rows in the console's form (a long link each) make the same links
    twins = [(f"https://{HOST}/{code}", parameters, name) for code, (_, parameters, name)
             in (("m9Mm_c", rows[0]), ("plain_c", rows[5]))]
    console_result = await imported(service, console(twins))
    assert [row["line"] for row in console_result["created"]] == [2, 3]
    for takeout_row, console_row in zip(result["created"], console_result["created"], strict=True):
        assert await stored(service, takeout_row["link_id"]) == await stored(service, console_row["link_id"])

    # the link answers at its old short path as the long link's parameters say
    desktop = await location(service, "/m9Mm", "safari_mac")
    assert desktop.startswith("https://shop.example/desktop?") and "utm_source=newsletter" in desktop
    assert (await location(service, "/m9Mm", "iphone")).startswith("https://shop.example/ios?")
    android = await location(service, "/m9Mm", "chrome_android")
    assert android.startswith("intent://shop.example/offer?id=7") and ";package=com.shop.app;" in android

    # sending the same file again converges: nothing written, the same rows fail the same way
    count = await link_count(service)
    again = await imported(service, text)
    assert again["created"] == []
    assert [(row["line"], row["link_id"]) for row in again["unchanged"]] == \
        [(row["line"], row["link_id"]) for row in result["created"]]
    assert [(row["line"], row["details"]) for row in again["failed"]] == \
        [(row["line"], row["details"]) for row in result["failed"]]
    assert await link_count(service) == count


async def test_a_takeout_export_headed_with_the_parameters_names_is_read_too(service: TestClient) -> None:
    """The same columns titled by the parameter alone, as a public script reading these exports names them."""
    text = ("short_link,link,apn,isi,ibi,utm_source,archived,name,creation_timestamp\r\n"
            f"https://{HOST}/k3y5,https://shop.example/keys,com.shop.app,1234567,com.shop.ios,qr,false,Keys,\r\n")
    result = await imported(service, text)
    assert [(row["line"], row["code"]) for row in result["created"]] == [(2, "k3y5")]
    desktop = await location(service, "/k3y5", "safari_mac")
    assert desktop.startswith("https://shop.example/keys?") and "utm_source=qr" in desktop


async def test_a_header_with_neither_form_is_refused_whole(service: TestClient) -> None:
    response = await service.post(f"{ADMIN_API}/accounts/{A}/links/fdl-import",
                                  data=b"Short link,Android package name (apn)\r\nhttps://go.shop.example/x1,a.b\r\n",
                                  headers={**ADMIN, "Content-Type": "text/csv"})
    assert response.status == 400
    answer = await response.json()
    assert answer["error"] == "Invalid export" and "Deep link (link)" in answer["details"]["message"]


@pytest.mark.parametrize("text", [
    "short_link,long_link\r\nhttps://go.shop.example/abc,\"https://go.shop.example/?link=" + "x" * 200_000 + "\"\r\n",
    "Short link,Deep link (link),Social description (sd)\r\nhttps://go.shop.example/abc,https://shop.example/,"
    + "y" * 200_000 + "\r\n",
    "Short link," + "z" * 200_000 + "\r\n",
])
async def test_a_cell_too_long_for_csv_is_refused_whole_not_an_error(service: TestClient, text: str) -> None:
    """Python's csv module stops at cells over 128 KiB (far more than any link's field): a 400 naming the line,
    never a 500."""
    response = await service.post(f"{ADMIN_API}/accounts/{A}/links/fdl-import", data=text.encode(),
                                  headers={**ADMIN, "Content-Type": "text/csv"})
    assert response.status == 400
    answer = await response.json()
    assert answer["error"] == "Invalid export" and "cannot be read as CSV" in answer["details"]["message"]
