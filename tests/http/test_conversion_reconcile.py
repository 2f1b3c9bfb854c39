"""The conversion report reconciles exactly with the raw rows: every figure is rebuilt here by SCANNING clicks
(and events, through the click their stored lineage names) with the contract's definitions, and compared
with the report, which reads only the rollups, for several groupings, on both stores.

Clicks span five weeks and several links, people and bots, repeated visitors, every route; some are recorded
through the resolver, most straight into the click recorder (their times in the past). The event half of the
rebuild reads ``events.lineage`` (the click each event found when it was written); the events are purchases in
two currencies, custom events and reversals sent through the storefront API, some naming no stored click."""

from __future__ import annotations

import itertools
import math
import random
import time
from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from aiohttp.test_utils import TestClient

from api.appkeys import CLICKS, DB
from linksvc.jsoncodec import loads
from linksvc.links.clicks import Click
from linksvc.reports.rollups import count_clicks
from storage import conversions
from storage.conversions import BUCKETS, DAILY, LEVELS, WEEKLY, bucket_of, spans
from storage.db import MIGRATIONS_DIR as MIGRATIONS
from storage.db import dialect, execute, fetch_all
from tests.conftest import ADMIN, bearer, token_for
from tests.factories import A, B, ids

DAY = 86400
ANSWERS = ("destination", "fallback", "intent", "deeplink", "play", "app_store", "broken")
ROUTE = {"destination": "web", "fallback": "web", "intent": "app", "deeplink": "app", "play": "store",
         "app_store": "store"}
GROUPS = ["day", "link", "campaign", "utm_source,platform", "day,utm_campaign", "campaign,utm_medium", "platform",
          "link,utm_source", "link,platform", "campaign,platform",
          # the click's country, referrer host, rule and variant (issue 34)
          "country", "referrer_host", "day,rule", "day,country", "day,referrer_host", "link,rule",
          "campaign,rule", "link,variant"]
REFERERS = (None, "https://www.instagram.com/", "https://L.Facebook.com/l.php?u=x", "android-app://com.google.android.gm/",
            "no scheme")
SPAN = 35  # days of clicks before now: the report's weekly rows hold several whole weeks of them


async def make_clicks(client: TestClient) -> None:
    rng = random.Random(21)
    place = random.Random(23)  # country, referer, rule and variant (issue 34), drawn apart
    recorder = client.app[CLICKS]
    links = [ids(A)["links"], ids(B)["links"]]
    now = time.time()
    for n in range(600):
        account = A if n % 5 else B
        link = links[0] if account == A else links[1]
        utm = {k: v for k, v in (("utm_source", rng.choice(["email", "ig", ""])),
                                 ("utm_medium", rng.choice(["mail", ""])),
                                 ("utm_campaign", rng.choice(["bf", "xmas", ""]))) if v}
        recorder.record(Click(account, link, f"t{n}", now - rng.uniform(0, SPAN * DAY), rng.choice(["ios", "android",
                              "desktop"]), rng.random() < 0.15, rng.choice(ANSWERS), "UA",
                              place.choice(REFERERS) or "", utm,
                              rng.choice([f"{v:016x}" for v in range(12)] + [None]), {},
                              country=place.choice(["US", "CO", None]), rule=place.choice(["latam", "mobile", None]),
                              variant=place.choice(["A", "B", None])))
        if n % 100 == 0:
            await recorder.flush()
    for agent in ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) Version/17.1 Mobile/15E148 Safari/604.1",
                  "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"):
        response = await client.get(f"/lnk{A[:4]}?utm_campaign=live", headers={"User-Agent": agent},
                                    allow_redirects=False)
        assert response.status == 302
    await recorder.flush()


async def make_events(client: TestClient) -> None:
    """Events of account A through the storefront API: purchases in two currencies and custom events after
    stored clicks (their tracking_ids, at times after the click up to days later), some with UTM of their own,
    some naming no stored click; then a few purchases reversed."""
    rng = random.Random(22)
    headers = bearer(await token_for(client, A))
    clicks = await fetch_all(client.app[DB].reader, "SELECT tracking_id, clicked_at FROM clicks "
                                                    "WHERE account_id = ? ORDER BY id", (A,))
    now = time.time()
    purchases = []
    for n in range(150):
        tracking, clicked_at = rng.choice(clicks) if n % 6 else (f"nobody-{n}", None)
        start = (datetime.fromisoformat(clicked_at.replace("Z", "+00:00")).timestamp() if clicked_at
                 else now - rng.uniform(0, SPAN * DAY))
        issued = min(now - 60, start + rng.choice([30, 200, 4000, 50000, 2 * DAY, 9 * DAY]))
        event: dict[str, Any] = {"customer_id": ids(A)["customers"], "tracking_id": tracking,
                                 "issued_at": datetime.fromtimestamp(issued, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
        if rng.random() < 0.5:
            event["utm_source"] = rng.choice(["email", "ig", "partner"])
        if n % 3:
            event |= {"type": "PURCHASE", "order_id": f"rec-{n}", "currency": rng.choice(["COP", "USD"]),
                      "value": str(Decimal(rng.randrange(100, 99999)) / 100), "products": [{"sku": "LATTE-12"}]}
        else:
            event["type"] = "page_view"
        response = await client.post("/api/storefront/v1/behavior/events", json=event, headers=headers)
        assert response.status == 202, await response.text()
        if event["type"] == "PURCHASE":
            purchases.append((await response.json())["data"]["id"])
    for event_id in purchases[::7]:
        response = await client.post(f"/api/storefront/v1/behavior/events/{event_id}/reverse",
                                     json={"reason": "returned"}, headers=headers)
        assert response.status == 200, await response.text()


async def rebuild(client: TestClient, account: str, first: str, last: str, group_by: list[str],
                  utm_from: str = "click") -> dict[Any, Any]:
    """Every figure of the report, per group key, from the raw clicks and events: an event keyed by the UTM of
    the click behind it (``utm_from`` click, the default) or by its own."""
    conn = client.app[DB].reader
    links = {row[0]: (row[1] or "") for row in await fetch_all(conn, "SELECT id, campaign_id FROM links")}

    def key(day: str, link: str, source: str, medium: str, campaign: str, platform: str,
            place: tuple[str, ...]) -> tuple[str, ...]:
        dims = {"day": day, "link": link, "campaign": links.get(link, ""), "utm_source": source,
                "utm_medium": medium, "utm_campaign": campaign, "platform": platform,
                **dict(zip(("country", "referrer_host", "rule", "variant"), place, strict=True))}
        return tuple(dims[g] for g in group_by)

    rows: dict[tuple[str, ...], dict[str, Any]] = defaultdict(lambda: {
        "human": 0, "bot": 0, "visitors": set(), "web": 0, "app": 0, "store": 0, "events": defaultdict(int),
        "purchases": 0, "revenue": defaultdict(Decimal), "delays": [0] * len(BUCKETS)})
    # A click's country, referrer host (its Referer cut as the clicks breakdown cuts it), rule and variant, by
    # its tracking_id and time (the click an event's lineage names).
    places: dict[tuple[str, str], tuple[str, ...]] = {}
    counted: set[tuple[Any, ...]] = set()
    for row in await fetch_all(conn, "SELECT clicked_at, link_id, utm, platform, bot, answer, visitor, tracking_id, "
                                     "country, referer, rule, variant FROM clicks WHERE account_id = ? ORDER BY id",
                               (account,)):
        place = (row[8] or "", host_of(row[9]), row[10] or "", row[11] or "")
        places[row[7], row[0]] = place
        day = row[0][:10]
        if not first <= day <= last:
            continue
        utm = loads(row[2])
        dims = (day, row[1], utm.get("utm_source", ""), utm.get("utm_medium", ""), utm.get("utm_campaign", ""),
                row[3])
        figures = rows[key(*dims, place)]
        if row[4]:
            figures["bot"] += 1
            continue
        figures["human"] += 1
        if row[5] in ROUTE:
            figures[ROUTE[row[5]]] += 1
        if row[6] and (*dims, row[6]) not in counted:  # a visitor per day, link, UTM and platform: in the group
            counted.add((*dims, row[6]))  # of their first click
            figures["visitors"].add((*dims, row[6]))
    unattributed: dict[str, Any] = {"events": 0, "purchases": 0, "revenue": defaultdict(Decimal)}
    for row in await fetch_all(conn, "SELECT type, issued_at, body, reversed_at, lineage FROM events "
                                     "WHERE account_id = ? AND lineage IS NOT NULL", (account,)):
        day = row[1][:10]
        if not first <= day <= last:
            continue
        body, lineage = loads(row[2]), loads(row[4])
        seen = lineage.get("click")
        purchase = row[0] == "PURCHASE" and row[3] is None
        if seen is None:
            unattributed["events"] += 1
            if purchase:
                unattributed["purchases"] += 1
                unattributed["revenue"][body["currency"]] += Decimal(str(body["value"]))
            continue
        values = [(lineage[f]["value"] if utm_from == "event" else lineage[f]["click"]["value"]) or ""
                  for f in ("utm_source", "utm_medium", "utm_campaign")]
        figures = rows[key(day, seen["link_id"], *values, seen["platform"] or "",
                           places.get((seen["tracking_id"], seen["clicked_at"]), ("", "", "", "")))]
        figures["events"][row[0]] += 1
        if purchase:
            figures["purchases"] += 1
            figures["revenue"][body["currency"]] += Decimal(str(body["value"]))
            delay = (datetime.fromisoformat(row[1].replace("Z", "+00:00"))
                     - datetime.fromisoformat(seen["clicked_at"].replace("Z", "+00:00"))).total_seconds()
            figures["delays"][bucket_of(delay)] += 1
    return {"rows": {k: view(v) for k, v in rows.items()},
            "unattributed": {"events": unattributed["events"], "purchases": unattributed["purchases"],
                             "revenue": {c: format(a, "f") for c, a in sorted(unattributed["revenue"].items())}}}


def host_of(referer: str | None) -> str:
    """The host of a Referer as the clicks breakdown of a link cuts it ('' for none)."""
    if not referer or "://" not in referer:
        return ""
    host = referer.split("://", 1)[1]
    for end in "/?#":
        host = host.split(end, 1)[0]
    host = host.split("@", 1)[-1] if "@" in host else host
    return host.split(":", 1)[0].lower()


def bound(delays: list[int], q: float) -> int | None:
    n = sum(delays)
    if not n:
        return None
    rank, seen = math.ceil(q * n), 0
    for i, count in enumerate(delays):
        seen += count
        if seen >= rank:
            return None if math.isinf(BUCKETS[i]) else int(BUCKETS[i])
    return None


def view(f: dict[str, Any]) -> dict[str, Any]:
    rate = None if not f["human"] else str((Decimal(f["purchases"]) / f["human"]).quantize(Decimal("0.0001"),
                                                                                        ROUND_HALF_UP))
    return {"clicks": {"human": f["human"], "bot": f["bot"]}, "visitors": len(f["visitors"]),
            "routes": {"web": f["web"], "app": f["app"], "store": f["store"]},
            "events": {k: n for k, n in sorted(f["events"].items()) if n}, "purchases": f["purchases"],
            "revenue": {c: format(a, "f") for c, a in sorted(f["revenue"].items())}, "conversion_rate": rate,
            "click_to_purchase": {"median_seconds": bound(f["delays"], 0.5), "p90_seconds": bound(f["delays"], 0.9)}}


def ranges() -> list[tuple[str, str]]:
    """The last week (and a day), and a range of three weeks that neither starts on a Monday nor ends on a Sunday
    (its days at each end are read from the daily rows, the two or three whole weeks between from the weekly
    ones)."""
    today = datetime.now(UTC).date()
    last = today - timedelta(days=1)
    if last.weekday() == 6:
        last -= timedelta(days=1)
    first = last - timedelta(days=20)
    if first.weekday() == 0:
        first -= timedelta(days=1)
    periods = spans(first.isoformat(), last.isoformat(), by_day=False)
    assert [p for p, _, _ in periods] == [DAILY, WEEKLY, DAILY]
    assert (date.fromisoformat(periods[1][2]) - date.fromisoformat(periods[1][1])).days >= 7  # two weeks or more
    return [((today - timedelta(days=7)).isoformat(), today.isoformat()), (first.isoformat(), last.isoformat())]


def exact(figures: Any) -> Any:
    """Revenue compared as numbers (the report writes a sum at its currency's decimals: ``922.30`` for the
    ``922.3`` sent; tests/unit/test_report_amounts.py checks the text)."""
    if isinstance(figures, dict):
        return {k: ({c: Decimal(a) for c, a in v.items()} if k == "revenue" else exact(v)) for k, v in figures.items()}
    return figures


async def test_every_figure_reconciles_with_a_scan_of_the_raw_rows(seeded: TestClient) -> None:
    """Every grouping of ``GROUPS`` over the same clicks and events (made once: making them is most of the
    time, and each grouping only reads)."""
    await make_clicks(seeded)
    await make_events(seeded)
    for group_by in GROUPS:
        await reconciles(seeded, group_by)


async def reconciles(seeded: TestClient, group_by: str) -> None:
    for account, (first, last), utm_from in itertools.product((A, B), ranges(), ("click", "event", None)):
        response = await seeded.get(f"/api/admin/v1/accounts/{account}/reports/conversions?group_by={group_by}"
                                    "&from=2020-01-01&to=2030-01-01", headers=ADMIN)
        assert response.status == 400  # more than 366 days
        response = await seeded.get(f"/api/admin/v1/accounts/{account}/reports/conversions?group_by={group_by}"
                                    f"&from={first}&to={last}{f'&utm_from={utm_from}' if utm_from else ''}",
                                    headers=ADMIN)
        assert response.status == 200, await response.text()
        data = (await response.json())["data"]
        assert data["utm_from"] == (utm_from or "click") and data["other"] is None
        names = group_by.split(",")
        expected = await rebuild(seeded, account, first, last, names, utm_from or "click")
        got = {tuple(row["key"][n] or "" for n in names): {k: v for k, v in row.items() if k != "key"}
               for row in data["rows"]}
        assert exact(got) == exact(expected["rows"]), (group_by, account, first, last, utm_from)
        assert exact(data["unattributed"]) == exact(expected["unattributed"])
        assert data["totals"]["clicks"]["human"] == sum(r["clicks"]["human"] for r in got.values()) > 0
        if utm_from is None:  # the first three groups as they are, the rest summed in other, exactly
            response = await seeded.get(f"/api/admin/v1/accounts/{account}/reports/conversions?group_by={group_by}"
                                        f"&from={first}&to={last}&limit=3", headers=ADMIN)
            capped = (await response.json())["data"]
            shown = {tuple(row["key"][n] or "" for n in names): {k: v for k, v in row.items() if k != "key"}
                     for row in capped["rows"]}
            assert list(shown) == list(got)[:3] and exact(shown) == exact({k: expected["rows"][k] for k in shown})
            rest = [v for k, v in expected["rows"].items() if k not in shown]
            assert capped["groups"] == len(expected["rows"]) and capped["totals"] == data["totals"]
            if rest:
                other = capped["other"]
                assert other["groups"] == len(rest)
                assert other["clicks"]["human"] == sum(r["clicks"]["human"] for r in rest)
                assert other["visitors"] == sum(r["visitors"] for r in rest)
                assert other["purchases"] == sum(r["purchases"] for r in rest)
                for currency in {c for r in rest for c in r["revenue"]}:
                    assert Decimal(other["revenue"].get(currency, "0")) == sum(
                        Decimal(r["revenue"].get(currency, "0")) for r in rest)
        if account == A:  # the event half is not empty: purchases, revenue, delays and the unattributed
            assert data["totals"]["purchases"] > 0 and data["totals"]["revenue"]
            assert data["totals"]["click_to_purchase"]["median_seconds"] is not None
            assert data["unattributed"]["events"] > 0


LEVEL_TABLES = ("conversion_level_clicks", "conversion_level_events", "conversion_level_revenue")


async def level_rows(conn: Any) -> dict[str, set[tuple[Any, ...]]]:
    """The coarse level's rows that count something, revenue as Decimal (text on SQLite, numeric on PostgreSQL)."""
    found: dict[str, set[tuple[Any, ...]]] = {}
    for table in LEVEL_TABLES:
        rows = set()
        for row in await fetch_all(conn, f"SELECT * FROM {table}"):
            values = list(row)
            if table == "conversion_level_revenue":  # account_id, level, period, day, a, b, currency, purchases,
                values[8] = Decimal(str(values[8]))  # revenue
            if any(v for v in values[6:] if not isinstance(v, str)):
                rows.add(tuple(values))
        found[table] = rows
    return found


def fill_statements(script: str, start: str, count: int) -> list[str]:
    """The statements of a migration's script from the first holding ``start`` to its end: ``count`` of them."""
    found = [s for s in script[script.index(start):].split(";\n") if s.strip()]
    assert len(found) == count
    return found


async def test_the_upgrade_fills_the_coarse_level_as_the_writers_keep_it(seeded: TestClient) -> None:
    """Migration 0020 (PostgreSQL 0005) fills the coarse level from the fine rollups an older release kept, 0024
    (PostgreSQL 0009) its link pairs and weekly rows, 0026 (PostgreSQL 0011) rebuilds the levels holding a
    UTM field from the events' lineage (the click's UTM, not the event's own), and 0032 (PostgreSQL 0017) fills
    the levels of the click's country, referrer host, rule and variant from the clicks counted and the clicks
    the events' lineage names; run on the data the writers just kept, they give back exactly the rows they
    wrote."""
    await make_clicks(seeded)
    await make_events(seeded)
    db = seeded.app[DB]
    await count_clicks(db)  # the clicks' rows: what the pass keeps
    # Every day's clicks folded into their weeks, as they all are once the days are over (the migrations fill
    # the weekly rows of every day).
    await db.write(lambda tx: conversions.fold_click_weeks(tx, "9999-12-31"))
    kept = await level_rows(db.reader)
    assert all(kept.values()) and any(row[1] == "unattributed" for row in kept["conversion_level_events"])
    for table in LEVEL_TABLES:  # every level, both periods, and several weeks
        assert {row[1] for row in kept[table]} >= set(LEVELS)
        assert {row[2] for row in kept[table]} == {DAILY, WEEKLY}
        assert len({row[3] for row in kept[table] if row[2] == WEEKLY}) >= 4
    pg = dialect(db.reader) == "postgresql"
    levels = (MIGRATIONS / "postgresql" / "0005_conversion_levels.sql" if pg
              else MIGRATIONS / "0020_conversion_levels.sql").read_text(encoding="utf-8")
    weeks = (MIGRATIONS / "postgresql" / "0009_conversion_weeks.sql" if pg
             else MIGRATIONS / "0024_conversion_weeks.sql").read_text(encoding="utf-8")
    click_utm = (MIGRATIONS / "postgresql" / "0011_conversion_click_utm.sql" if pg
                 else MIGRATIONS / "0026_conversion_click_utm.sql").read_text(encoding="utf-8")
    dims = (MIGRATIONS / "postgresql" / "0017_conversion_click_dimensions.sql" if pg
            else MIGRATIONS / "0032_conversion_click_dimensions.sql").read_text(encoding="utf-8")
    empty = (MIGRATIONS / "postgresql" / "0025_click_levels_without_empty_rows.sql" if pg
             else MIGRATIONS / "0040_click_levels_without_empty_rows.sql").read_text(encoding="utf-8")
    fill = [*fill_statements(levels, "INSERT INTO conversion_level_clicks", 3),
            *fill_statements(weeks, "-- Filled from the rollups already kept", 6),
            *fill_statements(click_utm, "DELETE FROM conversion_level_events", 6),
            *fill_statements(dims, "-- The coarse level's new levels", 6),
            *fill_statements(empty, "DELETE FROM conversion_level_clicks", 1)]

    async def upgrade(tx: Any) -> None:
        for table in LEVEL_TABLES:
            await execute(tx, f"DELETE FROM {table}")
        for statement in fill:
            await execute(tx, statement)
    await db.write(upgrade)
    assert await level_rows(db.reader) == kept


async def test_a_purchase_written_before_its_lineage_held_the_clicks_place_is_reversed_from_its_click(
        seeded: TestClient) -> None:
    """Purchases written before 0032 have no country, rule or referrer host in their lineage: the migration
    counted them under their click's (the one the lineage names), and a reversal takes them back from there."""
    await make_clicks(seeded)
    await make_events(seeded)
    db = seeded.app[DB]
    pg = dialect(db.reader) == "postgresql"
    strip = ("lineage #- '{click,country}' #- '{click,rule}' #- '{click,referrer_host}'" if pg else
             "json_remove(lineage, '$.click.country', '$.click.rule', '$.click.referrer_host')")
    await db.write(lambda tx: execute(tx, f"UPDATE events SET lineage = {strip} WHERE lineage IS NOT NULL"))
    rows = await fetch_all(db.reader, "SELECT id FROM events WHERE account_id = ? AND type = 'PURCHASE' AND "
                                      "reversed_at IS NULL AND lineage IS NOT NULL ORDER BY id", (A,))
    headers = bearer(await token_for(seeded, A))
    for row in rows[::3]:
        response = await seeded.post(f"/api/storefront/v1/behavior/events/{row[0]}/reverse",
                                     json={"reason": "returned"}, headers=headers)
        assert response.status == 200, await response.text()
    first, last = ranges()[1]
    for group_by in ("country", "day,rule", "link,variant"):
        response = await seeded.get(f"/api/admin/v1/accounts/{A}/reports/conversions?group_by={group_by}"
                                    f"&from={first}&to={last}", headers=ADMIN)
        data = (await response.json())["data"]
        names = group_by.split(",")
        expected = await rebuild(seeded, A, first, last, names)
        got = {tuple(row["key"][n] or "" for n in names): {k: v for k, v in row.items() if k != "key"}
               for row in data["rows"]}
        assert exact(got) == exact(expected["rows"])
        assert data["totals"]["purchases"] > 0
