"""The conversion report (GET /api/admin/v1/accounts/{id}/reports/conversions) from clicks made through the real
resolver with real user agents: people and bots apart, routes, a visitor counted once per day and key, the
same rows as CSV, the query's checks and account isolation. The clicks carry their visitor and the origin of
each UTM value, on the handler and on the fast lane."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import replace
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import CLICKS, DB
from linksvc.app import create_app
from linksvc.clock import utcnow
from linksvc.jsoncodec import loads
from linksvc.seed import load_seed
from linksvc.settings import Settings
from storage.db import fetch_all
from tests.conftest import ADMIN, bearer, service_server, token_for
from tests.factories import A, B, ids, two_accounts
from tests.http.test_fast_lane import _get, converse, lane

CHROME_ANDROID = ("Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) "
                  "Chrome/120.0.6099.144 Mobile Safari/537.36")
FIREFOX_ANDROID = "Mozilla/5.0 (Android 14; Mobile; rv:120.0) Gecko/120.0 Firefox/120.0"
IPHONE_SAFARI = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
                 "Version/17.1 Mobile/15E148 Safari/604.1")
DESKTOP_CHROME = ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
                  "Chrome/120.0.0.0 Safari/537.36")
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
EMAIL_CODE = f"lnk{A[:4]}"  # the factories' email link: no campaign, no app
APP_CODE = f"app{A[:4]}"
REPORT = f"/api/admin/v1/accounts/{A}/reports/conversions"


@pytest.fixture
async def service(aiohttp_client: Any, settings: Settings) -> TestClient:
    """The service behind a trusted proxy (the test client), with the two accounts and an app link of A's
    campaign whose destination carries utm_source=newsletter."""
    client: TestClient = await aiohttp_client(service_server(create_app(replace(settings,
                                                                                trusted_proxies="127.0.0.1"))))
    await load_seed(client.app[DB], two_accounts(), allow_private=True)
    response = await client.post(f"/api/admin/v1/accounts/{A}/links", headers=ADMIN, json={
        "code": APP_CODE, "kind": "external", "campaign_id": ids(A)["campaigns"],
        "destination_url": "https://shop.example/app?utm_source=newsletter&utm_medium=mail",
        "android": {"package": "com.shop.app"}, "ios": {"app_store_id": "123456"}})
    assert response.status == 201, await response.text()
    return client


async def click(client: TestClient, code: str, agent: str, address: str, query: str = "") -> None:
    response = await client.get(f"/{code}{query}", allow_redirects=False,
                                headers={"User-Agent": agent, "X-Forwarded-For": address})
    assert response.status == 302, await response.text()


async def clicks(client: TestClient) -> None:
    """Four people and a bot: the same person twice on the email link counts once there."""
    for code, agent, address, query in [
        (EMAIL_CODE, CHROME_ANDROID, "10.0.0.1", ""), (EMAIL_CODE, CHROME_ANDROID, "10.0.0.1", ""),
        (EMAIL_CODE, IPHONE_SAFARI, "10.0.0.2", ""), (EMAIL_CODE, GOOGLEBOT, "66.249.66.1", ""),
        (APP_CODE, CHROME_ANDROID, "10.0.0.1", ""),  # intent: app
        (APP_CODE, FIREFOX_ANDROID, "10.0.0.3", ""),  # Google Play: store
        (APP_CODE, IPHONE_SAFARI, "10.0.0.2", ""),  # the App Store: store
        (APP_CODE, DESKTOP_CHROME, "10.0.0.4", "?utm_source=tw"),  # the destination: web, its own utm_source
    ]:
        await click(client, code, agent, address, query)


async def report(client: TestClient, query: str = "", account: str = A) -> dict[str, Any]:
    response = await client.get(f"/api/admin/v1/accounts/{account}/reports/conversions{query}", headers=ADMIN)
    assert response.status == 200, await response.text()
    return dict((await response.json())["data"])


def by_key(data: dict[str, Any], *names: str) -> dict[tuple[Any, ...], dict[str, Any]]:
    return {tuple(row["key"][n] for n in names): row for row in data["rows"]}


async def test_the_report_counts_people_bots_routes_and_visitors_by_link(service: TestClient) -> None:
    await clicks(service)
    data = await report(service, "?group_by=link")
    today = utcnow().date().isoformat()
    assert (data["from"], data["to"], data["group_by"]) == (
        (utcnow().date().fromordinal(utcnow().date().toordinal() - 6)).isoformat(), today, ["link"])
    rows = by_key(data, "link_code")
    email, app = rows[(EMAIL_CODE,)], rows[(APP_CODE,)]
    assert email["clicks"] == {"human": 3, "bot": 1}
    assert email["visitors"] == 2  # 10.0.0.1 with Chrome twice, 10.0.0.2 with Safari
    assert email["routes"] == {"web": 3, "app": 0, "store": 0}
    assert app["clicks"] == {"human": 4, "bot": 0}
    assert app["visitors"] == 4
    assert app["routes"] == {"web": 1, "app": 1, "store": 2}
    assert email["key"]["link"] == ids(A)["links"]
    assert email["conversion_rate"] == "0.0000" and email["purchases"] == 0 and email["revenue"] == {}
    assert email["click_to_purchase"] == {"median_seconds": None, "p90_seconds": None}
    assert data["totals"]["clicks"] == {"human": 7, "bot": 1}
    assert data["totals"]["visitors"] == 6
    assert data["unattributed"] == {"events": 0, "purchases": 0, "revenue": {}}
    assert [row["key"]["link_code"] for row in data["rows"]] == [APP_CODE, EMAIL_CODE]  # more human clicks first


async def test_campaigns_utm_and_the_origin_each_click_recorded(service: TestClient) -> None:
    await clicks(service)
    data = await report(service, "?group_by=campaign,utm_source")
    rows = by_key(data, "campaign", "utm_source")
    assert set(rows) == {("", "linksvc"), (ids(A)["campaigns"], "newsletter"), (ids(A)["campaigns"], "tw")}
    assert rows[(ids(A)["campaigns"], "newsletter")]["key"]["campaign_name"] == "Welcome"
    assert rows[("", "linksvc")]["key"]["campaign_name"] is None
    assert rows[(ids(A)["campaigns"], "newsletter")]["clicks"]["human"] == 3
    stored = await fetch_all(service.app[DB].reader, "SELECT utm_source, utm_origin, visitor FROM clicks ORDER BY id")
    origins = {row[0]: loads(row[1]) for row in stored}
    assert origins["tw"] == {"utm_source": "query", "utm_medium": "destination"}
    assert origins["newsletter"] == {"utm_source": "destination", "utm_medium": "destination"}
    assert origins["linksvc"] == {"utm_source": "defaults", "utm_medium": "defaults"}
    assert all(len(row[2]) == 16 and int(row[2], 16) >= 0 for row in stored)
    assert stored[0][2] == stored[1][2] and stored[0][2] != stored[2][2]  # the same person, then another


async def test_the_fast_lane_records_the_same_visitor_and_origins(service: TestClient) -> None:
    before = lane(service).answered
    await converse(service, [_get(f"/{EMAIL_CODE}", CHROME_ANDROID, extra="X-Forwarded-For: 10.0.0.9\r\n")] * 3)
    assert lane(service).answered - before >= 1
    await service.app[CLICKS].flush()
    stored = await fetch_all(service.app[DB].reader, "SELECT visitor, utm_origin FROM clicks")
    assert len(stored) == 3 and len({row[0] for row in stored}) == 1 and stored[0][0] is not None
    assert {row[1] for row in stored} == {stored[0][1]} and loads(stored[0][1])["utm_source"] == "defaults"
    assert (await report(service))["totals"]["visitors"] == 1


async def test_the_csv_holds_the_same_rows(service: TestClient) -> None:
    await clicks(service)
    data = await report(service, "?group_by=link,platform")
    response = await service.get(f"{REPORT}?group_by=link,platform&format=csv", headers=ADMIN)
    assert response.status == 200
    assert response.content_type == "text/csv"
    assert response.headers["Content-Disposition"] == (
        f'attachment; filename="conversions-{data["from"]}-{data["to"]}.csv"')
    table = list(csv.DictReader(io.StringIO(await response.text())))
    assert len(table) == len(data["rows"])
    for line, row in zip(table, data["rows"], strict=True):
        assert (line["link"], line["link_code"], line["platform"]) == (
            row["key"]["link"], row["key"]["link_code"], row["key"]["platform"])
        assert (int(line["clicks_human"]), int(line["clicks_bot"]), int(line["visitors"])) == (
            row["clicks"]["human"], row["clicks"]["bot"], row["visitors"])
        assert (int(line["routes_web"]), int(line["routes_app"]), int(line["routes_store"])) == (
            row["routes"]["web"], row["routes"]["app"], row["routes"]["store"])


@pytest.mark.parametrize(("query", "field"), [
    ("?from=2026-13-01", "from"), ("?to=yesterday", "to"), ("?from=2026-11-10&to=2026-11-01", "to"),
    ("?from=2025-01-01&to=2026-01-02", "to"), ("?group_by=link,link", "group_by"), ("?group_by=city", "group_by"),
    ("?group_by=day,link,platform", "group_by"), ("?format=xml", "format"), ("?from=1&from=2", "from"),
    # the click's dimensions (issue 34): a variant only with its link, the others not with a UTM field or another
    ("?group_by=variant", "group_by"), ("?group_by=day,variant", "group_by"),
    ("?group_by=campaign,variant", "group_by"), ("?group_by=utm_source,country", "group_by"),
    ("?group_by=country,rule", "group_by"), ("?group_by=platform,referrer_host", "group_by"),
    ("?group_by=link,referrer_host", "group_by"), ("?group_by=campaign,country", "group_by"),
])
async def test_a_bad_query_is_a_400_naming_the_parameter(service: TestClient, query: str, field: str) -> None:
    response = await service.get(f"{REPORT}{query}", headers=ADMIN)
    assert response.status == 400, await response.text()
    body = await response.json()
    assert set(body) == {"error", "details"}
    assert body["details"]["field"] == field


async def test_366_days_are_accepted(service: TestClient) -> None:
    data = await report(service, "?from=2025-01-01&to=2026-01-01")
    assert data["rows"] == [] and data["totals"]["clicks"] == {"human": 0, "bot": 0}


async def test_another_account_sees_none_of_these_clicks_and_an_unknown_one_is_404(service: TestClient) -> None:
    await clicks(service)
    other = await report(service, "?group_by=link", account=B)
    assert other["rows"] == [] and other["totals"]["clicks"] == {"human": 0, "bot": 0}
    response = await service.get("/api/admin/v1/accounts/no-such-account/reports/conversions", headers=ADMIN)
    assert response.status == 404
    assert set(await response.json()) == {"error", "details"}
    response = await service.get(REPORT)
    assert response.status == 401


@pytest.mark.parametrize("query", ["?to=0001-01-03", "?from=9999-12-30", "?from=0001-01-01&to=0001-01-01",
                                   "?group_by=", "?group_by=,", "?from=2026-02-30", "?from=%EF%BC%92"])
async def test_edges_of_the_calendar_and_empty_values_never_fail(service: TestClient, query: str) -> None:
    response = await service.get(f"{REPORT}{query}", headers=ADMIN)
    assert response.status in (200, 400), await response.text()
    assert set(await response.json()) == ({"data"} if response.status == 200 else {"error", "details"})


@pytest.mark.parametrize("query", ["?from=2026-W02-1", "?to=2026-W05-7", "?from=2026-002", "?to=20260105",
                                   "?from=%EF%BC%92%EF%BC%90%EF%BC%92%EF%BC%96-01-05"])
async def test_report_dates_are_calendar_dates_only(service: TestClient, query: str) -> None:
    """The API documents YYYY-MM-DD: an ISO week date, an ordinal date, the basic format or other digits are
    refused, naming the parameter."""
    response = await service.get(f"{REPORT}{query}", headers=ADMIN)
    assert response.status == 400, await response.text()
    body = await response.json()
    assert set(body) == {"error", "details"}
    assert body["details"]["field"] == query[1:].split("=")[0]


def split_anyhow(text: str) -> list[str]:
    """The cells a careless reader would see: the text split on every separator a locale may use, quotes
    ignored."""
    return [part.strip('"') for line in text.split("\r\n") for part in re.split("[,;\t]", line)]


async def test_no_csv_cell_reads_as_a_formula_whatever_the_separator(service: TestClient) -> None:
    """A UTM value from an anonymous click, ``ok;=1+1;``, cannot become a formula cell in a spreadsheet of a
    semicolon locale: every field is quoted, and a trigger after any separator is neutralised too."""
    for value in ("ok%3B%3D1%2B1%3B", "%3DHYPERLINK(%22x%22)", "a%2C%40SUM(1)", "x%3B-2", "%2B57"):
        await click(service, EMAIL_CODE, CHROME_ANDROID, "10.0.0.7", f"?utm_source={value}")
    response = await service.get(f"{REPORT}?group_by=utm_source,link&format=csv", headers=ADMIN)
    assert response.status == 200
    text = await response.text()
    lines = text.split("\r\n")
    assert all(line.startswith('"') and line.endswith('"') for line in lines if line)  # every field quoted
    table = list(csv.DictReader(io.StringIO(text)))
    assert {row["utm_source"] for row in table} == {
        "ok;'=1+1;", "'=HYPERLINK(\"x\")", "a,'@SUM(1)", "x;'-2", "'+57"}
    assert not [cell for cell in split_anyhow(text) if cell[:1] in ("=", "+", "-", "@")]


async def test_a_purchase_sent_with_only_its_tracking_id_counts_under_its_clicks_utm(service: TestClient) -> None:
    """The documented integration: the backend sends the tracking_id alone. Grouped by a UTM field, the
    purchase counts in the row of the click behind it (the click's UTM), not in a "(none)" row of its own with
    no clicks; ``utm_from=event`` groups events by their own UTM instead, and the answer says which it shows. A
    reversal takes the purchase back out of the row it counted in."""
    await click(service, EMAIL_CODE, CHROME_ANDROID, "10.0.0.8", "?utm_source=ig&utm_medium=social")
    await service.app[CLICKS].flush()
    tracking = (await fetch_all(service.app[DB].reader, "SELECT tracking_id FROM clicks"))[0][0]
    headers = bearer(await token_for(service, A))
    response = await service.post("/api/storefront/v1/behavior/events", headers=headers, json={
        "type": "PURCHASE", "customer_id": ids(A)["customers"], "order_id": "o-13", "currency": "USD",
        "value": "40.00", "tracking_id": tracking, "products": [{"sku": "LATTE-12"}]})
    assert response.status == 202, await response.text()
    event_id = (await response.json())["data"]["id"]
    stored = await fetch_all(service.app[DB].reader, "SELECT body FROM events")
    assert "utm_source" not in (loads(stored[0][0])["attribution"] or {})  # the event keeps what was sent

    for query in ("?group_by=utm_source", "?group_by=utm_source&utm_from=click", "?group_by=utm_source,utm_medium",
                  "?group_by=link,utm_source", "?group_by=utm_source,platform"):
        data = await report(service, query)
        assert data["utm_from"] == "click"
        rows = by_key(data, "utm_source")
        assert set(rows) == {("ig",)}, query
        assert rows[("ig",)]["clicks"]["human"] == 1 and rows[("ig",)]["purchases"] == 1
        assert rows[("ig",)]["revenue"] == {"USD": "40.00"} and rows[("ig",)]["conversion_rate"] == "1.0000"
        assert rows[("ig",)]["events"] == {"PURCHASE": 1}

    data = await report(service, "?group_by=utm_source&utm_from=event")
    assert data["utm_from"] == "event"
    rows = by_key(data, "utm_source")
    assert rows[("ig",)]["clicks"]["human"] == 1 and rows[("ig",)]["purchases"] == 0
    assert rows[("",)]["clicks"]["human"] == 0 and rows[("",)]["purchases"] == 1
    assert data["totals"]["purchases"] == 1

    response = await service.post(f"/api/storefront/v1/behavior/events/{event_id}/reverse", headers=headers,
                                  json={"reason": "returned"})
    assert response.status == 200, await response.text()
    for utm_from in ("click", "event"):
        data = await report(service, f"?group_by=utm_source&utm_from={utm_from}")
        assert data["totals"]["purchases"] == 0 and all(row["purchases"] == 0 for row in data["rows"])
        assert all(row["revenue"] == {} for row in data["rows"])


async def test_many_distinct_utm_values_give_the_first_groups_and_the_rest_summed(service: TestClient) -> None:
    """Anonymous clicks with a new utm_source each: the report shows ``limit`` groups (the most purchases, then
    the most human clicks first) and sums the rest in ``other``; the totals stay whole; the CSV ends with the
    (other) line. A limit out of range is a 400 naming it."""
    for n in range(12):
        for _ in range(1 + (n == 7)):  # "s07" has two clicks: it comes first
            await click(service, EMAIL_CODE, CHROME_ANDROID, f"10.0.1.{n}", f"?utm_source=s{n:02d}{'x' * 300}")
    data = await report(service, "?group_by=utm_source&limit=5")
    assert (data["limit"], data["groups"]) == (5, 12)
    assert [row["key"]["utm_source"][:3] for row in data["rows"]] == ["s07", "s00", "s01", "s02", "s03"]
    assert data["other"]["groups"] == 7 and data["other"]["clicks"] == {"human": 7, "bot": 0}
    assert data["other"]["visitors"] == 7 and data["totals"]["clicks"]["human"] == 13
    assert sum(row["clicks"]["human"] for row in data["rows"]) + data["other"]["clicks"]["human"] == 13
    whole = await report(service, "?group_by=utm_source,day")
    assert whole["groups"] == 12 and len(whole["rows"]) == 12 and whole["other"] is None and whole["limit"] == 100
    response = await service.get(f"{REPORT}?group_by=campaign,utm_source&limit=3&format=csv", headers=ADMIN)
    table = list(csv.reader(io.StringIO(await response.text())))
    assert len(table) == 1 + 3 + 1 and table[-1][:3] == ["(other)", "(other)", "(other)"]
    assert table[-1][3] == "9"  # clicks_human of the nine groups left out
    for bad in ("0", "1001", "x"):
        response = await service.get(f"{REPORT}?limit={bad}", headers=ADMIN)
        assert response.status == 400
        assert (await response.json())["details"]["field"] == "limit"
    response = await service.get(f"{REPORT}?utm_from=link", headers=ADMIN)
    assert response.status == 400 and (await response.json())["details"]["field"] == "utm_from"
