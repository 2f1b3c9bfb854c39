"""The conversion rollups the event side keeps: events by type and purchases (count, revenue, time from click to
purchase in buckets) per day, link, the event's UTM and the click's platform (docs/decisions.md, "Conversion
report and attribution lineage"). Added to as events are written and reversed, never rebuilt by a scan.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from decimal import Decimal

import orjson

from storage.db import Tx, execute, fetch_all

OWNS = ("visitor_salts", "conversion_clicks", "conversion_visitors", "conversion_events", "conversion_revenue")

# Upper bounds (seconds) of the buckets of the time from click to purchase; the last one has none.
BOUNDS = (60, 300, 900, 3600, 10800, 21600, 43200, 86400, 172800, 259200, 604800, 1209600, 2592000)
BUCKETS = len(BOUNDS) + 1
_ROWS_PER_STATEMENT = 1000

Key = tuple[str, str, str, str, str, str, str, str]  # account, day, link, source, medium, campaign, platform, +1


def bucket_of(seconds: int) -> int:
    """The index of the bucket that holds a time from click to purchase (a negative one counts as 0)."""
    return bisect.bisect_left(BOUNDS, max(seconds, 0))


async def add_events(tx: Tx, rows: Sequence[tuple[str, str, str, str, str, str, str, str, int]]) -> None:
    """Adds ``n`` events to each (account, day, link, utm_source, utm_medium, utm_campaign, platform, type)."""
    summed: dict[Key, int] = {}
    for row in rows:
        summed[row[:8]] = summed.get(row[:8], 0) + row[8]
    items = list(summed.items())
    for start in range(0, len(items), _ROWS_PER_STATEMENT):
        chunk = items[start:start + _ROWS_PER_STATEMENT]
        marks = ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?)"] * len(chunk))
        await execute(tx, "INSERT INTO conversion_events (account_id, day, link_id, utm_source, utm_medium, "
                          f"utm_campaign, platform, type, events) VALUES {marks} ON CONFLICT (account_id, day, "
                          "link_id, utm_source, utm_medium, utm_campaign, platform, type) DO UPDATE SET "
                          "events = conversion_events.events + excluded.events",
                      [value for key, n in chunk for value in (*key, n)])


async def add_purchases(tx: Tx, rows: Sequence[tuple[str, str, str, str, str, str, str, str, int, Decimal,
                                                     int | None]]) -> None:
    """Adds purchases to each (account, day, link, utm_source, utm_medium, utm_campaign, platform, currency):
    ``purchases_delta`` to the count, ``revenue_delta`` to the revenue and, with a delay, ``purchases_delta`` to
    its bucket (a reversal passes -1 and minus the value). Revenue is added in Python, exactly."""
    summed: dict[Key, tuple[int, Decimal, list[int]]] = {}
    for row in rows:
        key, purchases, revenue, delay = row[:8], row[8], row[9], row[10]
        count, total, delays = summed.get(key, (0, Decimal(0), [0] * BUCKETS))
        if delay is not None:
            delays[bucket_of(delay)] += purchases
        summed[key] = (count + purchases, total + revenue, delays)
    if not summed:
        return
    days = sorted({key[1] for key in summed})
    accounts = sorted({key[0] for key in summed})
    stored = {tuple(row[:8]): row for row in await fetch_all(
        tx, "SELECT account_id, day, link_id, utm_source, utm_medium, utm_campaign, platform, currency, purchases, "
            f"revenue, delays FROM conversion_revenue WHERE account_id IN ({', '.join('?' for _ in accounts)}) "
            f"AND day IN ({', '.join('?' for _ in days)})", (*accounts, *days))}
    values: list[object] = []
    for key, (count, total, delays) in summed.items():
        found = stored.get(key)
        if found is not None:
            count += int(found[8])
            total += Decimal(str(found[9]))
            delays = [a + b for a, b in zip(orjson.loads(found[10]), delays, strict=True)]
        values.extend((*key, count, str(total), orjson.dumps(delays).decode()))
    for start in range(0, len(values), 11 * _ROWS_PER_STATEMENT):
        chunk = values[start:start + 11 * _ROWS_PER_STATEMENT]
        marks = ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"] * (len(chunk) // 11))
        await execute(tx, "INSERT INTO conversion_revenue (account_id, day, link_id, utm_source, utm_medium, "
                          f"utm_campaign, platform, currency, purchases, revenue, delays) VALUES {marks} "
                          "ON CONFLICT (account_id, day, link_id, utm_source, utm_medium, utm_campaign, platform, "
                          "currency) DO UPDATE SET purchases = excluded.purchases, revenue = excluded.revenue, "
                          "delays = excluded.delays", chunk)
