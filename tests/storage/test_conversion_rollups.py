"""The event side's rollup writers (storage.conversions.add_events, add_purchases), as the event batch and a
reversal call them, on either store: counts add up across batches, revenue stays exact decimal, a reversal
takes its purchase out of the count, the revenue and the delay histogram, and the report reads them (events
with no click behind them as ``unattributed``)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from functools import partial

from linksvc.jsoncodec import loads
from linksvc.reports.conversions import ReportQuery, report_from
from linksvc.seed import load_seed
from linksvc.settings import Settings
from linksvc.store import store_of
from storage import conversions
from storage.db import fetch_all
from tests.factories import A, ids, two_accounts

DAY = "2026-11-20"


def key(link: str = "", platform: str = "") -> list[str]:
    return [A, DAY, link, "email", "mail", "bf", platform]


async def test_event_rollups_add_up_exactly_and_reversals_take_purchases_out(settings: Settings) -> None:
    db = store_of(settings)
    await db.open()
    try:
        await load_seed(db, two_accounts(), allow_private=True)
        link = ids(A)["links"]
        attributed = key(link, "ios")
        await db.write(partial(conversions.add_events, rows=[
            (*attributed, "PURCHASE", 1), (*attributed, "PURCHASE", 1), (*attributed, "app_open", 1),
            (*key(), "PURCHASE", 1)]))
        await db.write(partial(conversions.add_purchases, rows=[
            (*attributed, "USD", 1, Decimal("0.10"), 30), (*attributed, "USD", 1, Decimal("0.20"), 4000),
            (*key(), "USD", 1, Decimal("20.00"), None)]))
        await db.write(partial(conversions.add_purchases, rows=[  # a later batch and another currency
            (*attributed, "USD", 1, Decimal("431.50"), 100_000), (*attributed, "COP", 1, Decimal("15000"), 50)]))
        await db.write(partial(conversions.add_events, rows=[(*attributed, "PURCHASE", 2)]))
        # the reversal of the 0.20 purchase (its own day and dims, its bucket)
        await db.write(partial(conversions.add_purchases, rows=[(*attributed, "USD", -1, Decimal("-0.20"), 4000)]))
        rows = await fetch_all(db.reader, "SELECT currency, purchases, revenue, delays FROM conversion_revenue "
                                          "WHERE link_id = ? ORDER BY currency", (link,))
        found = {r[0]: (int(r[1]), Decimal(str(r[2])), loads(r[3]) if isinstance(r[3], str) else r[3]) for r in rows}
        usd = found["USD"]
        assert usd[:2] == (2, Decimal("431.60"))
        assert usd[2][conversions.bucket_of(30)] == 1 and usd[2][conversions.bucket_of(100_000)] == 1
        assert sum(usd[2]) == 2
        report = await report_from(db.reader, A, ReportQuery(date(2026, 11, 14), date(2026, 11, 20), ("link",)))
        row = report["rows"][0]
        assert row["key"]["link"] == link
        assert row["events"] == {"PURCHASE": 4, "app_open": 1}
        assert row["purchases"] == 3 and row["revenue"] == {"COP": "15000.00", "USD": "431.60"}
        assert row["click_to_purchase"] == {"median_seconds": 60, "p90_seconds": 172800}
        assert row["conversion_rate"] is None  # no click
        assert report["unattributed"] == {"events": 1, "purchases": 1, "revenue": {"USD": "20.00"}}
    finally:
        await db.close()


def test_buckets() -> None:
    assert [conversions.bucket_of(s) for s in (0, 60, 61, 300, 86400, 2592000, 2592001, -5)] == [
        0, 0, 1, 1, 7, 12, 13, 0]


def test_spans_read_whole_weeks_from_weekly_rows_and_the_days_around_them_from_daily_ones() -> None:
    d, w = conversions.DAILY, conversions.WEEKLY
    # 2026-11-02 is a Monday, 2026-11-15 a Sunday
    assert conversions.spans("2026-11-02", "2026-11-15", by_day=False) == [(w, "2026-11-02", "2026-11-09")]
    assert conversions.spans("2026-10-29", "2026-11-17", by_day=False) == [
        (d, "2026-10-29", "2026-11-01"), (w, "2026-11-02", "2026-11-09"), (d, "2026-11-16", "2026-11-17")]
    assert conversions.spans("2026-11-03", "2026-11-09", by_day=False) == [(d, "2026-11-03", "2026-11-09")]
    assert conversions.spans("2026-11-03", "2026-11-15", by_day=False) == [
        (d, "2026-11-03", "2026-11-08"), (w, "2026-11-09", "2026-11-09")]
    assert conversions.spans("2026-10-29", "2026-11-17", by_day=True) == [(d, "2026-10-29", "2026-11-17")]
    assert conversions.monday("2026-11-15") == conversions.monday("2026-11-09") == "2026-11-09"
