"""A link's A/B split over real HTTP, on both stores: the split validated at save, the pick sticky per visitor (the
cookie, and without it the stable hash), the same on the fast lane, UTM and tracking_id on every variant's
target, the variant stored on each click, and the variant report of a scripted scenario (clicks, then purchases
with their tracking_id through the storefront API, and a reversal) with its z-test."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from dataclasses import replace
from datetime import date, timedelta
from decimal import Decimal
from typing import Any
from urllib.parse import parse_qs, urlsplit

import asyncpg
import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import CLICKS, DB
from linksvc.app import create_app
from linksvc.errors import InvalidField
from linksvc.seed import load_seed
from linksvc.settings import Settings
from storage.db import fetch_all
from storage.db import migration_files as sqlite_migrations
from storage.postgres import migration_files as pg_migrations
from storage.writer import add_functions
from tests.conftest import ADMIN, bearer, service_server, token_for
from tests.factories import A, B, ids, two_accounts
from tests.http.test_fast_lane import _get, converse, lane

CODE = "spring-sale"
CHROME_ANDROID = ("Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) "
                  "Chrome/120.0.6099.144 Mobile Safari/537.36")
DESKTOP = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
SPLIT: dict[str, Any] = {
    "code": CODE, "kind": "external", "destination_url": "https://shop.example/a?utm_source=newsletter",
    "variants": [{"name": "A", "weight": 1},
                 {"name": "B", "weight": 1, "target": {"destination_url": "https://b.shop.example/landing",
                                                       "android": {"package": "com.shop.b"}}}]}


@pytest.fixture
async def service(aiohttp_client: Any, settings: Settings) -> TestClient:
    """The service behind a trusted proxy (the test client), the two accounts, and account A's split link."""
    client: TestClient = await aiohttp_client(service_server(create_app(replace(settings,
                                                                                trusted_proxies="127.0.0.1"))))
    await load_seed(client.app[DB], two_accounts(), allow_private=True)
    response = await client.post(f"/api/admin/v1/accounts/{A}/links", headers=ADMIN, json=SPLIT)
    assert response.status == 201, await response.text()
    return client


async def split_link(client: TestClient) -> dict[str, Any]:
    rows = await fetch_all(client.app[DB].reader, "SELECT id FROM links WHERE code = ?", (CODE,))
    response = await client.get(f"/api/admin/v1/accounts/{A}/links/{rows[0][0]}", headers=ADMIN)
    assert response.status == 200, await response.text()
    return dict((await response.json())["data"])


async def click(client: TestClient, agent: str, address: str, cookie: str | None = None, query: str = "",
                proto: str | None = None) -> tuple[str, str, str | None]:
    """One click: (the variant its Location shows, the Location, the Set-Cookie header)."""
    client.session.cookie_jar.clear()
    headers = {"User-Agent": agent, "X-Forwarded-For": address}
    if cookie is not None:
        headers["Cookie"] = cookie
    if proto is not None:
        headers["X-Forwarded-Proto"] = proto
    response = await client.get(f"/{CODE}{query}", allow_redirects=False, headers=headers)
    assert response.status == 302, await response.text()
    location = response.headers["Location"]
    variant = "B" if "b.shop.example" in location or "com.shop.b" in location else "A"
    return variant, location, response.headers.get("Set-Cookie")


def cookie_pair(set_cookie: str | None) -> str:
    assert set_cookie is not None
    return set_cookie.split(";")[0]


async def test_the_split_is_validated_at_save_naming_the_field(service: TestClient) -> None:
    cases = [
        ([{"name": "A", "weight": 1}, {"name": "A", "weight": 2}], "variants[1].name"),
        ([{"name": "A", "weight": 0}], "variants"),
        ([{"name": "A", "weight": 1, "target": {"link": "no-such-link"}}], "variants[0].target.link"),
        ([{"name": "A", "weight": 1, "target": {"link": f"lnk{B[:4]}"}}], "variants[0].target.link"),  # B's link
        ([{"name": "A", "weight": 1, "target": {"destination_url": "http://plain.example/"}}],
         "variants[0].target.destination_url"),
    ]
    for variants, path in cases:
        response = await service.post(f"/api/admin/v1/accounts/{A}/links", headers=ADMIN, json={
            "kind": "email", "destination_url": "https://shop.example/", "variants": variants})
        assert response.status == 400, (variants, await response.text())
        body = await response.json()
        assert set(body) == {"error", "details"}
        assert path in str(body["details"]), (path, body)
    # A target naming another link of the account is accepted; the link without variants reads as before.
    response = await service.post(f"/api/admin/v1/accounts/{A}/links", headers=ADMIN, json={
        "kind": "email", "destination_url": "https://shop.example/",
        "variants": [{"name": "A", "weight": 1}, {"name": "B", "weight": 1, "target": {"link": f"lnk{A[:4]}"}}]})
    assert response.status == 201, await response.text()
    assert (await response.json())["data"]["variants"][1]["target"]["link"] == f"lnk{A[:4]}"


async def test_the_cookie_keeps_a_visitor_on_a_variant(service: TestClient) -> None:
    first, _, set_cookie = await click(service, DESKTOP, "203.0.113.1")
    assert set_cookie is not None
    link = await split_link(service)
    name, value = cookie_pair(set_cookie).split("=")
    assert name == f"lsv_{link['id']}" and value == first
    attributes = [part.strip() for part in set_cookie.split(";")[1:]]
    assert attributes == ["Max-Age=7776000", f"Path=/{CODE}", "HttpOnly", "SameSite=Lax"]
    # Another address and browser: the cookie wins over the hash, every time.
    for n in range(6):
        variant, _, again = await click(service, f"Agent/{n}", f"198.51.100.{n}", cookie_pair(set_cookie))
        assert variant == first and again == set_cookie
    # The cookie names the variant: naming the other one moves the visitor there.
    other = "B" if first == "A" else "A"
    moved, _, moved_cookie = await click(service, DESKTOP, "203.0.113.1", f"{name}={other}")
    assert moved == other and cookie_pair(moved_cookie) == f"{name}={other}"
    # Secure when the request came over HTTPS (a trusted proxy says so).
    _, _, secure = await click(service, DESKTOP, "203.0.113.1", proto="https")
    assert secure is not None and secure.endswith("; Secure")


async def test_without_cookies_the_same_visitor_gets_the_same_variant(service: TestClient) -> None:
    seen = set()
    for n in range(24):
        agent, address = f"Browser/{n}", f"192.0.2.{n + 1}"
        picks = {(await click(service, agent, address))[0] for _ in range(3)}
        assert len(picks) == 1, (agent, address)
        seen |= picks
    assert seen == {"A", "B"}  # both are picked over 24 visitors (all on one: a chance of 2 in 16 million)


async def test_every_variant_s_target_keeps_utm_tracking_id_and_the_intent_rules(service: TestClient) -> None:
    name = f"lsv_{(await split_link(service))['id']}"
    _, location, _ = await click(service, DESKTOP, "192.0.2.1", f"{name}=B", "?utm_source=ig&tracking_id=kept-1")
    parts = urlsplit(location)
    assert (parts.scheme, parts.netloc, parts.path) == ("https", "b.shop.example", "/landing")
    query = parse_qs(parts.query)
    assert query["utm_source"] == ["ig"] and query["tracking_id"] == ["kept-1"]
    _, intent, _ = await click(service, CHROME_ANDROID, "192.0.2.1", f"{name}=B")
    assert intent.startswith("intent://b.shop.example/landing") and "package=com.shop.b" in intent
    assert "tracking_id%3D" in intent or "tracking_id=" in intent
    # Variant A is the link's own target, with the link's own UTM.
    _, own, _ = await click(service, DESKTOP, "192.0.2.1", f"{name}=A")
    assert own.startswith("https://shop.example/a?") and parse_qs(urlsplit(own).query)["utm_source"] == ["newsletter"]


async def test_each_click_records_its_variant(service: TestClient) -> None:
    name = f"lsv_{(await split_link(service))['id']}"
    await click(service, DESKTOP, "192.0.2.1", f"{name}=B")
    await click(service, DESKTOP, "192.0.2.1", f"{name}=A")
    plain = await service.get(f"/lnk{A[:4]}", allow_redirects=False, headers={"User-Agent": DESKTOP})
    assert plain.status == 302 and "Set-Cookie" not in plain.headers  # a link without a split sets nothing
    await service.app[CLICKS].flush()
    rows = await fetch_all(service.app[DB].reader, "SELECT l.code, c.variant FROM clicks c JOIN links l "
                                                   "ON l.id = c.link_id ORDER BY c.id")
    assert [tuple(row) for row in rows] == [(CODE, "B"), (CODE, "A"), (f"lnk{A[:4]}", None)]
    # The link's clicks page counts them by variant.
    link_id = (await split_link(service))["id"]
    response = await service.get(f"/api/admin/v1/accounts/{A}/links/{link_id}/clicks", headers=ADMIN)
    by_variant = (await response.json())["data"]["by_variant"]
    assert by_variant == [{"variant": "A", "human": 1, "bot": 0}, {"variant": "B", "human": 1, "bot": 0}]


async def test_the_fast_lane_answers_split_links_with_the_cookie(service: TestClient) -> None:
    name = f"lsv_{(await split_link(service))['id']}"
    before = lane(service).answered
    replies = await converse(service, [_get(f"/{CODE}", extra=f"Cookie: {name}=B\r\n")] * 3
                             + [_get(f"/{CODE}", extra=f"Cookie: {name}=A\r\n")])
    assert lane(service).answered - before >= 2  # the first of a connection may take the handler
    assert [reply.status for reply in replies] == [302] * 4
    for reply in replies[:3]:
        assert reply.headers["location"].startswith("https://b.shop.example/landing?")
        assert reply.headers["set-cookie"] == f"{name}=B; Max-Age=7776000; Path=/{CODE}; HttpOnly; SameSite=Lax"
    assert list(replies[1].headers) == ["location", "cache-control", "set-cookie", "x-request-id", "content-length",
                                        "date", "server"]
    assert list(replies[0].headers) == list(replies[1].headers)  # the handler's bytes and the lane's alike
    assert replies[3].headers["location"].startswith("https://shop.example/a?")
    # Without a cookie the lane picks by the hash: the same answer for the same client every time.
    replies = await converse(service, [_get(f"/{CODE}", ua="Same/1")] * 4)
    assert len({reply.headers["set-cookie"] for reply in replies}) == 1
    await service.app[CLICKS].flush()
    rows = await fetch_all(service.app[DB].reader, "SELECT variant FROM clicks ORDER BY id")
    assert [row[0] for row in rows][:4] == ["B", "B", "B", "A"]


async def purchase(client: TestClient, headers: dict[str, str], tracking_id: str, order: str, value: str,
                   currency: str = "USD") -> str:
    response = await client.post("/api/storefront/v1/behavior/events", headers=headers, json={
        "type": "PURCHASE", "customer_id": ids(A)["customers"], "order_id": order, "currency": currency,
        "value": value, "tracking_id": tracking_id, "products": [{"sku": "LATTE-12"}]})
    assert response.status == 202, await response.text()
    return str((await response.json())["data"]["id"])


def tracking_of(location: str) -> str:
    return parse_qs(urlsplit(location).query)["tracking_id"][0]


async def test_the_variant_report_of_a_scripted_scenario(service: TestClient) -> None:
    link = await split_link(service)
    name = f"lsv_{link['id']}"
    tracked: dict[str, list[str]] = {"A": [], "B": []}
    for variant in ("A", "B"):
        for n in range(4):  # four people each
            _, location, _ = await click(service, f"Person/{n}", f"10.1.0.{n + 1}", f"{name}={variant}")
            tracked[variant].append(tracking_of(location))
    await click(service, "Person/0", "10.1.0.1", f"{name}=A")  # the same person again: a click, not a visitor
    await click(service, GOOGLEBOT, "66.249.66.1", f"{name}=A")  # a bot: counted apart
    headers = bearer(await token_for(service, A))
    await purchase(service, headers, tracked["A"][0], "o-a1", "10.00")
    await purchase(service, headers, tracked["B"][0], "o-b1", "20.00")
    await purchase(service, headers, tracked["B"][1], "o-b2", "30.50")
    await purchase(service, headers, tracked["B"][2], "o-b3", "5", "EUR")
    returned = await purchase(service, headers, tracked["B"][3], "o-b4", "99.99")
    response = await service.post(f"/api/storefront/v1/behavior/events/{returned}/reverse", headers=headers,
                                  json={"reason": "returned"})
    assert response.status == 200, await response.text()

    response = await service.get(f"/api/admin/v1/accounts/{A}/links/{link['id']}/variants", headers=ADMIN)
    assert response.status == 200, await response.text()
    report = (await response.json())["data"]
    assert report["control"] == "A" and report["conversion_rate_of"] == "purchases / visitors"
    a, b = report["variants"]
    assert {k: a[k] for k in ("variant", "weight", "control", "clicks", "visitors", "purchases", "revenue",
                              "conversion_rate", "significance")} == {
        "variant": "A", "weight": 1, "control": True, "clicks": {"human": 5, "bot": 1}, "visitors": 4,
        "purchases": 1, "revenue": {"USD": "10.00"}, "conversion_rate": "0.2500", "significance": None}
    assert {k: b[k] for k in ("variant", "clicks", "visitors", "purchases", "revenue", "conversion_rate")} == {
        "variant": "B", "clicks": {"human": 4, "bot": 0}, "visitors": 4, "purchases": 3,
        "revenue": {"EUR": "5.00", "USD": "50.50"}, "conversion_rate": "0.7500"}
    # By hand: 1 of 4 against 3 of 4; pooled 0.5, se = sqrt(0.5 * 0.5 * (1/4 + 1/4)) = 0.353553,
    # z = 0.5 / 0.353553 = 1.414214, p = 2 (1 - Phi(1.414214)) = 0.157299.
    significance = b["significance"]
    assert significance["against"] == "A" and significance["sample_sizes"] == {"B": 4, "A": 4}
    assert significance["z"] == 1.4142 and significance["p_value"] == 0.157299
    assert significance["lift"] == 2.0 and significance["significant"] is False
    assert significance["verdict"] == "B converts 200% better than A; 84% confidence; 4 and 4 visitors"

    # Another account sees nothing of it.
    response = await service.get(f"/api/admin/v1/accounts/{B}/links/{link['id']}/variants", headers=ADMIN)
    assert response.status == 404
    body = await response.json()
    assert set(body) == {"error", "details"}


async def test_a_matching_rule_comes_before_the_split(service: TestClient) -> None:
    response = await service.post(f"/api/admin/v1/accounts/{A}/links", headers=ADMIN, json={
        "code": "ruled-split", "kind": "external", "destination_url": "https://shop.example/own",
        "rules": [{"name": "partners", "conditions": {"query": [{"param": "src", "equals": "partner"}]},
                   "target": {"destination_url": "https://partner.shop.example/"}}],
        "variants": [{"name": "A", "weight": 1},
                     {"name": "B", "weight": 1, "target": {"destination_url": "https://b.shop.example/"}}]})
    assert response.status == 201, await response.text()
    ruled = await service.get("/ruled-split?src=partner", allow_redirects=False, headers={"User-Agent": DESKTOP})
    assert ruled.headers["Location"].startswith("https://partner.shop.example/")
    assert "Set-Cookie" not in ruled.headers  # the split was not used
    split = await service.get("/ruled-split", allow_redirects=False, headers={"User-Agent": DESKTOP})
    assert "Set-Cookie" in split.headers
    await service.app[CLICKS].flush()
    rows = await fetch_all(service.app[DB].reader, "SELECT c.rule, c.variant FROM clicks c JOIN links l "
                                                   "ON l.id = c.link_id WHERE l.code = 'ruled-split' ORDER BY c.id")
    assert rows[0][0] == "partners" and rows[0][1] is None
    assert rows[1][0] is None and rows[1][1] in ("A", "B")


async def test_seed_files_carry_the_split_and_name_its_bad_fields(service: TestClient) -> None:
    doc = two_accounts()
    doc["accounts"][0]["links"][0]["variants"] = [
        {"name": "A", "weight": 1}, {"name": "B", "weight": 0, "target": {"destination_url": "https://b.example/"}}]
    await load_seed(service.app[DB], doc, allow_private=True)
    answer = await service.get(f"/lnk{A[:4]}", allow_redirects=False, headers={"User-Agent": DESKTOP})
    assert answer.headers["Set-Cookie"].split(";")[0].endswith("=A")  # B weighs 0: never picked
    doc["accounts"][0]["links"][0]["variants"] = [{"name": "A", "weight": 1}, {"name": "A", "weight": 1}]
    with pytest.raises(InvalidField) as refused:
        await load_seed(service.app[DB], doc, allow_private=True)
    assert refused.value.path == "accounts[0].links[0].variants[1].name"


async def test_the_admin_openapi_documents_the_variant_report(service: TestClient) -> None:
    document = await (await service.get("/api/admin/v1/openapi.json")).json()
    operation = document["paths"]["/accounts/{account_id}/links/{id}/variants"]["get"]
    assert "z-test" in operation["summary"] + operation.get("description", "")
    assert {"200", "401", "404"} <= set(operation["responses"])


async def test_the_variant_report_of_a_range_of_days(service: TestClient) -> None:
    """``from`` and ``to`` as the conversion report takes them: clicks count on the day they were taken, purchases
    on the day they were issued; without either, the split's whole life. A bad range is a 400 naming the field."""
    link = await split_link(service)
    name = f"lsv_{link['id']}"
    located = [await click(service, f"Person/{n}", f"10.2.0.{n + 1}", f"{name}={variant}")
               for n, variant in enumerate(("A", "A", "B", "B", "B"))]
    await service.app[CLICKS].flush()
    taken = await fetch_all(service.app[DB].reader, "SELECT DISTINCT substr(clicked_at, 1, 10) FROM clicks "
                                                    "WHERE link_id = ?", (link["id"],))
    if len(taken) > 1:  # the clicks straddle midnight (UTC): this test's days would not be whole
        pytest.skip("the clicks were taken on two days")
    today = date.fromisoformat(str(taken[0][0]))
    earlier = today - timedelta(days=3)
    headers = bearer(await token_for(service, A))
    await purchase(service, headers, tracking_of(located[0][1]), "r-a1", "10.00")  # today
    await purchase(service, headers, tracking_of(located[2][1]), "r-b1", "20.00")  # today
    response = await service.post("/api/storefront/v1/behavior/events", headers=headers, json={
        "type": "PURCHASE", "customer_id": ids(A)["customers"], "order_id": "r-b2", "currency": "USD",
        "value": "7.25", "tracking_id": tracking_of(located[3][1]), "products": [{"sku": "LATTE-12"}],
        "issued_at": f"{earlier.isoformat()}T12:00:00Z"})  # issued three days ago (sent late)
    assert response.status == 202, await response.text()

    async def figures(query: str) -> tuple[str | None, str | None, dict[str, tuple[int, int, int, dict[str, str]]]]:
        response = await service.get(f"/api/admin/v1/accounts/{A}/links/{link['id']}/variants{query}", headers=ADMIN)
        assert response.status == 200, await response.text()
        report = (await response.json())["data"]
        return report["from"], report["to"], {
            row["variant"]: (row["clicks"]["human"], row["visitors"], row["purchases"], row["revenue"])
            for row in report["variants"]}

    assert await figures("") == (None, None, {"A": (2, 2, 1, {"USD": "10.00"}),
                                              "B": (3, 3, 2, {"USD": "27.25"})})
    assert await figures(f"?from={today}&to={today}") == (str(today), str(today), {
        "A": (2, 2, 1, {"USD": "10.00"}), "B": (3, 3, 1, {"USD": "20.00"})})
    assert await figures(f"?from={earlier}&to={earlier}") == (str(earlier), str(earlier), {
        "A": (0, 0, 0, {}), "B": (0, 0, 1, {"USD": "7.25"})})
    # One end only: the week ending at to, or a week from from (as the conversion report).
    assert (await figures(f"?to={earlier}"))[:2] == (str(earlier - timedelta(days=6)), str(earlier))
    assert (await figures(f"?from={earlier}"))[:2] == (str(earlier), str(today))
    assert (await figures(f"?from={earlier}"))[2]["B"] == (3, 3, 2, {"USD": "27.25"})
    for query, field in ((f"?from={today}&to={earlier}", "to"), ("?from=2026-02-30", "from"), ("?to=yesterday", "to"),
                         (f"?from={today - timedelta(days=400)}&to={today}", "to")):
        response = await service.get(f"/api/admin/v1/accounts/{A}/links/{link['id']}/variants{query}", headers=ADMIN)
        assert response.status == 400, query
        body = await response.json()
        assert set(body) == {"error", "details"} and field in str(body["details"]), (query, body)


async def _run_variant_days_migration_again(settings: Settings) -> None:
    """Puts the tables of before (empty) back in place of the daily ones and runs the migration that made these
    (SQLite 0033, PostgreSQL 0018) again: it fills them from the clicks counted and the purchases stored."""
    undo = ("DROP TABLE conversion_variant_days; DROP TABLE conversion_variant_day_revenue; "
            "CREATE TABLE conversion_variant_clicks (account_id TEXT); "
            "CREATE TABLE conversion_variant_revenue (account_id TEXT);")
    if settings.database_url:
        script = next(path for number, path in pg_migrations() if number == 18).read_text("utf-8")
        conn = await asyncpg.connect(settings.database_url)
        try:
            async with conn.transaction():
                await conn.execute(undo)
                await conn.execute(script)
        finally:
            await conn.close()
        return
    script = next(path for number, path in sqlite_migrations() if number == 33).read_text("utf-8")
    with closing(sqlite3.connect(settings.db_path, isolation_level=None)) as conn:
        add_functions(conn)
        conn.executescript(f"BEGIN IMMEDIATE;\n{undo}\n{script}\nCOMMIT;")


async def test_the_migration_to_daily_rows_fills_what_the_writers_keep(service: TestClient,
                                                                        settings: Settings) -> None:
    """The daily rows the migration fills from the clicks counted and the purchases not reversed (its lineage's
    variant) are the rows the rollup pass, the event batch and reversals keep, after a scenario of clicks on a
    split, bots, a visitor clicking again, purchases in two currencies, one issued days ago and one reversed."""
    await test_the_variant_report_of_a_scripted_scenario(service)
    link = await split_link(service)
    headers = bearer(await token_for(service, A))
    located = await click(service, "Late/1", "10.3.0.1", f"lsv_{link['id']}=B")
    response = await service.post("/api/storefront/v1/behavior/events", headers=headers, json={
        "type": "PURCHASE", "customer_id": ids(A)["customers"], "order_id": "m-1", "currency": "JPY", "value": "1500",
        "tracking_id": tracking_of(located[1]), "products": [{"sku": "LATTE-12"}], "issued_at": "2026-01-05T10:00:00Z"})
    assert response.status == 202, await response.text()
    await service.get(f"/api/admin/v1/accounts/{A}/links/{link['id']}/variants", headers=ADMIN)  # all counted

    async def rows() -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        days = await fetch_all(service.app[DB].reader, "SELECT account_id, link_id, variant, day, human, bot, visitors "
                                                       "FROM conversion_variant_days ORDER BY 1, 2, 3, 4")
        money = await fetch_all(service.app[DB].reader,
                                "SELECT account_id, link_id, variant, day, currency, purchases, revenue "
                                "FROM conversion_variant_day_revenue ORDER BY 1, 2, 3, 4, 5")
        return ([tuple(int(v) if i > 3 else v for i, v in enumerate(r)) for r in days],
                [(*r[:6], Decimal(str(r[6]))) for r in money if int(r[5]) or Decimal(str(r[6]))])

    kept = await rows()
    assert any(r[3] == "2026-01-05" for r in kept[1]) and len(kept[0]) >= 2
    await _run_variant_days_migration_again(settings)
    assert await rows() == kept
