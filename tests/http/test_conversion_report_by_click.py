"""The conversion report grouped by the click's country, referrer host, rule and A/B variant (issue 34), over real
HTTP on the store of the run: clicks through the resolver, placed by X-Forwarded-For through a trusted proxy,
some matching a rule and the others split between two variants by their cookie; purchases through the
storefront API with the tracking_id each click's Location carried, one of them reversed. Each grouping's rows are
what those clicks and purchases say, the CSV names a missing value in words, and the groupings the coarse level
does not keep are a 400 naming what is allowed."""

from __future__ import annotations

import csv
import dataclasses
import io
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import CLICKS, DB
from linksvc.app import create_app
from linksvc.seed import load_seed
from linksvc.settings import Settings
from storage.db import fetch_all
from tests.conftest import ADMIN, bearer, service_server, token_for
from tests.factories import A, two_accounts
from tests.http.test_link_rules import BRAZIL, JAPAN, SOUTH_AFRICA, USA
from tests.http.test_link_variants import purchase, tracking_of

DESKTOP = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"
REPORT = f"/api/admin/v1/accounts/{A}/reports/conversions"
LINK = {"code": "smart-ab", "kind": "external", "destination_url": "https://shop.example/default",
        "rules": [{"name": "japan", "conditions": {"countries": ["JP"]},
                   "target": {"destination_url": "https://shop.example/jp"}}],
        "variants": [{"name": "A", "weight": 1},
                     {"name": "B", "weight": 1, "target": {"destination_url": "https://b.shop.example/"}}]}
# (address, user agent, the variant's cookie, Referer, a purchase's value or None, whether it is reversed)
CLICKS_MADE = [
    (JAPAN, DESKTOP, None, "https://News.Example:8443/a?b=1", "10.00", False),  # the rule: no split
    (USA, DESKTOP, "A", "https://www.instagram.com/", "5.00", True),
    (USA, "Other/1", "B", None, "20.00", False),
    (BRAZIL, DESKTOP, "B", "https://l.facebook.com/l.php?u=x", "30.00", False),
    ("10.1.2.3", DESKTOP, "A", None, "7.50", False),  # a private address: no country
    (SOUTH_AFRICA, DESKTOP, "A", "android-app://com.google.android.gm/", None, False),
]


@pytest.fixture
async def service(aiohttp_client: Any, settings: Settings) -> tuple[TestClient, str]:
    client: TestClient = await aiohttp_client(service_server(create_app(
        dataclasses.replace(settings, trusted_proxies="127.0.0.1"))))
    await load_seed(client.app[DB], two_accounts(), allow_private=True)
    response = await client.post(f"/api/admin/v1/accounts/{A}/links", headers=ADMIN, json=LINK)
    assert response.status == 201, await response.text()
    link_id = (await response.json())["data"]["id"]
    headers = bearer(await token_for(client, A))
    for n, (address, agent, variant, referer, value, reversed_) in enumerate(CLICKS_MADE):
        client.session.cookie_jar.clear()
        sent = {"User-Agent": agent, "X-Forwarded-For": address}
        if variant:
            sent["Cookie"] = f"lsv_{link_id}={variant}"
        if referer:
            sent["Referer"] = referer
        answer = await client.get("/smart-ab", headers=sent, allow_redirects=False)
        assert answer.status == 302, await answer.text()
        if value is None:
            continue
        event_id = await purchase(client, headers, tracking_of(answer.headers["Location"]), f"o-{n}", value)
        if reversed_:
            response = await client.post(f"/api/storefront/v1/behavior/events/{event_id}/reverse", headers=headers,
                                         json={"reason": "returned"})
            assert response.status == 200, await response.text()
    return client, link_id


async def rows_of(client: TestClient, group_by: str) -> dict[tuple[Any, ...], tuple[int, int, dict[str, str]]]:
    response = await client.get(f"{REPORT}?group_by={group_by}", headers=ADMIN)
    assert response.status == 200, await response.text()
    data = (await response.json())["data"]
    names = group_by.split(",")
    return {tuple(row["key"][n] for n in names): (row["clicks"]["human"], row["purchases"], row["revenue"])
            for row in data["rows"]}


async def test_the_clicks_carry_what_the_report_groups_by(service: tuple[TestClient, str]) -> None:
    client, _ = service
    await client.app[CLICKS].flush()
    rows = await fetch_all(client.app[DB].reader, "SELECT country, referrer_host, rule, variant FROM clicks "
                                                  "ORDER BY id")
    assert [tuple(row) for row in rows] == [
        ("JP", "news.example", "japan", None), ("US", "www.instagram.com", None, "A"), ("US", None, None, "B"),
        ("BR", "l.facebook.com", None, "B"), (None, None, None, "A"), ("ZA", "com.google.android.gm", None, "A")]


async def test_grouped_by_country(service: tuple[TestClient, str]) -> None:
    client, _ = service
    assert await rows_of(client, "country") == {
        ("JP",): (1, 1, {"USD": "10.00"}), ("US",): (2, 1, {"USD": "20.00"}), ("BR",): (1, 1, {"USD": "30.00"}),
        (None,): (1, 1, {"USD": "7.50"}), ("ZA",): (1, 0, {})}


async def test_grouped_by_referrer_host(service: tuple[TestClient, str]) -> None:
    client, _ = service
    assert await rows_of(client, "referrer_host") == {
        ("news.example",): (1, 1, {"USD": "10.00"}), ("www.instagram.com",): (1, 0, {}),
        (None,): (2, 2, {"USD": "27.50"}), ("l.facebook.com",): (1, 1, {"USD": "30.00"}),
        ("com.google.android.gm",): (1, 0, {})}


async def test_grouped_by_rule(service: tuple[TestClient, str]) -> None:
    client, link_id = service
    assert await rows_of(client, "rule") == {("japan",): (1, 1, {"USD": "10.00"}), (None,): (5, 3, {"USD": "57.50"})}
    assert await rows_of(client, "campaign,rule") == {("", "japan"): (1, 1, {"USD": "10.00"}),
                                                      ("", None): (5, 3, {"USD": "57.50"})}  # a link without one
    assert await rows_of(client, "link,rule") == {(link_id, "japan"): (1, 1, {"USD": "10.00"}),
                                                  (link_id, None): (5, 3, {"USD": "57.50"})}


async def test_grouped_by_variant_of_the_link_which_brought_revenue(service: tuple[TestClient, str]) -> None:
    client, link_id = service
    assert await rows_of(client, "link,variant") == {
        (link_id, "B"): (2, 2, {"USD": "50.00"}), (link_id, "A"): (3, 1, {"USD": "7.50"}),
        (link_id, None): (1, 1, {"USD": "10.00"})}  # the click the rule sent: no variant
    response = await client.get(f"{REPORT}?group_by=link,variant", headers=ADMIN)
    first = (await response.json())["data"]["rows"][0]
    assert first["key"] == {"link": link_id, "link_code": "smart-ab", "variant": "B"}
    assert first["conversion_rate"] == "1.0000"


async def test_the_csv_names_a_missing_value(service: tuple[TestClient, str]) -> None:
    client, _ = service
    for group_by, column, label in (("country", "country", "(unknown)"), ("rule", "rule", "(no rule)"),
                                    ("referrer_host", "referrer_host", "(no referrer)"),
                                    ("link,variant", "variant", "(no variant)"), ("day,country", "country",
                                                                                   "(unknown)")):
        response = await client.get(f"{REPORT}?group_by={group_by}&format=csv", headers=ADMIN)
        assert response.status == 200, await response.text()
        table = list(csv.DictReader(io.StringIO(await response.text())))
        assert label in [line[column] for line in table], (group_by, table)
        assert "" not in [line[column] for line in table]


@pytest.mark.parametrize(("group_by", "accepted"), [
    ("variant", ["link,variant"]), ("day,variant", ["link,variant"]),
    ("utm_source,country", ["country", "day,country"]), ("campaign,country", ["country", "day,country"]),
    ("referrer_host,link", ["referrer_host", "day,referrer_host"]),
    ("rule,country", ["rule", "day,rule", "link,rule", "campaign,rule"]),  # the first named
])
async def test_a_grouping_not_kept_is_a_400_naming_those_that_are(service: tuple[TestClient, str], group_by: str,
                                                                   accepted: list[str]) -> None:
    client, _ = service
    response = await client.get(f"{REPORT}?group_by={group_by}", headers=ADMIN)
    assert response.status == 400, await response.text()
    body = await response.json()
    assert set(body) == {"error", "details"} and body["details"]["field"] == "group_by"
    assert body["details"]["issues"][0]["accepted"] == accepted
