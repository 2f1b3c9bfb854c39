"""The conversion rollups (docs/decisions.md, "Conversion report and attribution lineage") and the daily
visitor salts.

What clicks and events add to the report is kept here as they are written: the click writer's batches
(:func:`add_clicks`, called by ``storage.clicks.insert_clicks`` in the same transaction), the event batch and
a reversal (:func:`add_events`, :func:`add_purchases`). Each writer aggregates its rows by key in Python
first and then runs a few multi-row statements: never one per row. A report sums rollup rows per day
(:func:`clicks_in_range`, :func:`events_in_range`, :func:`revenue_in_range`) and never scans clicks or
events. Missing dimension values are '' (they are keys).
"""

from __future__ import annotations

import bisect
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from storage.db import Conn, Row, Tx, dialect, execute, fetch_all, fetch_one, json_member

OWNS = ("visitor_salts", "conversion_clicks", "conversion_visitors", "conversion_events", "conversion_revenue")

BUCKETS: tuple[float, ...] = (60, 300, 900, 3600, 10800, 21600, 43200, 86400, 172800, 259200, 604800, 1209600,
                              2592000, float("inf"))
"""Upper bounds (seconds, inclusive) of the click-to-purchase buckets; the last has none."""

KEY = ("account_id", "day", "link_id", "utm_source", "utm_medium", "utm_campaign", "platform")
Key = tuple[str, str, str, str, str, str, str]
ROWS_PER_STATEMENT = 1000  # at most 12 parameters a row: well under both stores' limits
ROUTES = {"destination": 0, "fallback": 0, "intent": 1, "deeplink": 1, "play": 2, "app_store": 2}
"""A human click's answer -> its route: 0 web, 1 app, 2 store (others are counted in none)."""
SALT_DAYS_KEPT = 2


def bucket_of(seconds: float) -> int:
    """The index in :data:`BUCKETS` of the bucket holding ``seconds`` (negative delays count as 0)."""
    return bisect.bisect_left(BUCKETS, max(0.0, seconds))


def _marks(width: int, count: int) -> str:
    one = "(" + ", ".join("?" * width) + ")"
    return ", ".join([one] * count)


def _chunks(rows: Sequence[Any]) -> Iterable[Sequence[Any]]:
    for start in range(0, len(rows), ROWS_PER_STATEMENT):
        yield rows[start:start + ROWS_PER_STATEMENT]


def _added(table: str, columns: Sequence[str]) -> str:
    """``SET column = table.column + excluded.column`` for each column (PostgreSQL wants the target named)."""
    return ", ".join(f"{c} = {table}.{c} + excluded.{c}" for c in columns)


# --- visitor salts ---------------------------------------------------------------------------------------

async def salt_of_day(tx: Tx, day: str, new_salt: str, oldest_kept: str) -> str:
    """The salt of ``day`` (YYYY-MM-DD), ``new_salt`` stored when the day has none yet (another node may have
    stored its own first: the stored one wins). Salts of days before ``oldest_kept`` are deleted."""
    await execute(tx, "INSERT INTO visitor_salts (day, salt) VALUES (?, ?) ON CONFLICT (day) DO NOTHING",
                  (day, new_salt))
    await execute(tx, "DELETE FROM visitor_salts WHERE day < ?", (oldest_kept,))
    row = await fetch_one(tx, "SELECT salt FROM visitor_salts WHERE day = ?", (day,))
    assert row is not None
    return str(row[0])


# --- clicks ----------------------------------------------------------------------------------------------

async def add_clicks(tx: Tx, clicks: Iterable[tuple[Key, bool, str, str | None]]) -> None:
    """Counts a batch of clicks, each (key, bot, answer, visitor): human and bot clicks, the routes of human
    clicks, and each human click's visitor once per key (conversion_visitors remembers who was counted).
    Two statements per thousand keys, whatever the batch size."""
    counts: dict[Key, list[int]] = {}  # human, bot, new visitors, web, app, store
    pairs: set[tuple[Key, str]] = set()
    for key, bot, answer, visitor in clicks:
        row = counts.get(key)
        if row is None:
            row = counts[key] = [0, 0, 0, 0, 0, 0]
        if bot:
            row[1] += 1
            continue
        row[0] += 1
        route = ROUTES.get(answer)
        if route is not None:
            row[3 + route] += 1
        if visitor:
            pairs.add((key, visitor))
    if not counts:
        return
    if pairs:
        for chunk in _chunks(sorted(pairs)):
            new = await fetch_all(
                tx, f"INSERT INTO conversion_visitors ({', '.join(KEY)}, visitor) VALUES {_marks(8, len(chunk))} "
                    f"ON CONFLICT DO NOTHING RETURNING {', '.join(KEY)}",
                [value for key, visitor in chunk for value in (*key, visitor)])
            for found in new:
                counts[tuple(found)][2] += 1  # type: ignore[index]
    columns = ("human", "bot", "visitors", "web", "app", "store")
    keys = sorted(counts)
    for chunk in _chunks(keys):
        await execute(
            tx, f"INSERT INTO conversion_clicks ({', '.join(KEY)}, {', '.join(columns)}) "
                f"VALUES {_marks(13, len(chunk))} ON CONFLICT ({', '.join(KEY)}) DO UPDATE SET "
                f"{_added('conversion_clicks', columns)}",
            [value for key in chunk for value in (*key, *counts[key])])


# --- events ----------------------------------------------------------------------------------------------

async def add_events(tx: Tx, rows: Sequence[tuple[str, str, str, str, str, str, str, str, int]]) -> None:
    """Adds (account_id, day, link_id, utm_source, utm_medium, utm_campaign, platform, type, n) to
    conversion_events (``n`` may be negative: a correction)."""
    sums: dict[tuple[str, ...], int] = defaultdict(int)
    for *key, n in rows:
        sums[tuple(key)] += n
    keys = sorted(k for k, n in sums.items() if n)
    for chunk in _chunks(keys):
        await execute(
            tx, f"INSERT INTO conversion_events ({', '.join(KEY)}, type, events) VALUES {_marks(9, len(chunk))} "
                f"ON CONFLICT ({', '.join(KEY)}, type) DO UPDATE SET {_added('conversion_events', ['events'])}",
            [value for key in chunk for value in (*key, sums[key])])


PurchaseRow = tuple[str, str, str, str, str, str, str, str, int, Decimal, int | None]

# PostgreSQL adds two JSON arrays of counts element by element (SQLite's are added in Python).
_PG_DELAYS = ("(SELECT jsonb_agg(a.n::bigint + b.n::bigint ORDER BY a.i) "
              "FROM jsonb_array_elements_text(conversion_revenue.delays) WITH ORDINALITY AS a(n, i) "
              "JOIN jsonb_array_elements_text(excluded.delays) WITH ORDINALITY AS b(n, i) ON a.i = b.i)")


async def add_purchases(tx: Tx, rows: Sequence[PurchaseRow]) -> None:
    """Adds (account_id, day, link_id, utm_source, utm_medium, utm_campaign, platform, currency,
    purchases_delta, revenue_delta, delay_seconds or None) to conversion_revenue: purchases and revenue move by
    the deltas, and when a delay is given its bucket moves by purchases_delta (None: no click behind the
    purchase, no bucket). Revenue stays exact: Decimal in Python on SQLite (decimal text), numeric on
    PostgreSQL."""
    sums: dict[tuple[str, ...], tuple[int, Decimal, list[int]]] = {}
    for *key, purchases, revenue, delay in rows:
        k = tuple(key)
        count, total, delays = sums.get(k) or (0, Decimal(0), [0] * len(BUCKETS))
        if delay is not None:
            delays[bucket_of(delay)] += purchases
        sums[k] = (count + purchases, total + Decimal(revenue), delays)
    keys = sorted(sums)
    if not keys:
        return
    if dialect(tx) == "postgresql":
        for chunk in _chunks(keys):
            await execute(
                tx, f"INSERT INTO conversion_revenue ({', '.join(KEY)}, currency, purchases, revenue, delays) "
                    f"VALUES {_marks(11, len(chunk))} ON CONFLICT ({', '.join(KEY)}, currency) DO UPDATE SET "
                    f"{_added('conversion_revenue', ['purchases', 'revenue'])}, delays = {_PG_DELAYS}",
                [v for k in chunk for v in (*k, sums[k][0], format(sums[k][1], "f"), json.dumps(sums[k][2]))])
        return
    # SQLite: one writer, inside its transaction: read the rows the batch touches, add in Python, write back.
    stored: dict[tuple[str, ...], Row] = {}
    for chunk in _chunks(keys):
        found = await fetch_all(
            tx, f"SELECT {', '.join(KEY)}, currency, purchases, revenue, delays FROM conversion_revenue "
                f"WHERE ({', '.join(KEY)}, currency) IN (VALUES {_marks(8, len(chunk))})",
            [v for k in chunk for v in k])
        stored.update({tuple(row)[:8]: row for row in found})
    for chunk in _chunks(keys):
        values: list[Any] = []
        for k in chunk:
            purchases, revenue, delays = sums[k]
            old = stored.get(k)
            if old is not None:
                purchases += int(old[8])
                revenue += Decimal(old[9])
                delays = [a + b for a, b in zip(delays, json.loads(old[10]), strict=False)]
            values += [*k, purchases, format(revenue, "f"), json.dumps(delays)]
        await execute(
            tx, f"INSERT INTO conversion_revenue ({', '.join(KEY)}, currency, purchases, revenue, delays) "
                f"VALUES {_marks(11, len(chunk))} ON CONFLICT ({', '.join(KEY)}, currency) DO UPDATE SET "
                "purchases = excluded.purchases, revenue = excluded.revenue, delays = excluded.delays",
            values)


# --- the report's reads ----------------------------------------------------------------------------------

DIMENSIONS = ("day", "link_id", "utm_source", "utm_medium", "utm_campaign", "platform")
_WHERE = "WHERE account_id = ? AND day >= ? AND day <= ?"


# Not a column: whether the row's events had a click behind them (link_id '' holds those that had none). A
# report that does not group by link asks for this instead of link_id, so that it sums a few groups per day
# rather than one per link (tens of thousands at size).
ATTRIBUTED = "attributed"
_EXPRESSIONS = {ATTRIBUTED: "(link_id <> '')"}


def _grouping(columns: Sequence[str]) -> str:
    unknown = set(columns) - set(DIMENSIONS) - set(_EXPRESSIONS)
    if unknown or not columns:
        raise ValueError(f"not rollup dimensions: {sorted(unknown)}")
    return ", ".join(_EXPRESSIONS.get(column, column) for column in columns)


@dataclass(frozen=True, slots=True)
class ClickSum:
    dims: tuple[str, ...]  # the values of the columns asked, in their order
    counts: tuple[int, ...]  # human, bot, visitors, web, app, store


@dataclass(frozen=True, slots=True)
class EventSum:
    dims: tuple[str, ...]
    type: str
    events: int


@dataclass(frozen=True, slots=True)
class RevenueSum:
    dims: tuple[str, ...]
    currency: str
    purchases: int
    revenue: Decimal
    delays: tuple[int, ...]  # per bucket of BUCKETS


@dataclass(frozen=True, slots=True)
class LinkLabel:
    code: str
    campaign_id: str  # '' when none
    campaign_name: str | None


async def clicks_by(conn: Conn, account_id: str, first: str, last: str, columns: Sequence[str]) -> list[ClickSum]:
    """Click counts summed per distinct ``columns`` (of :data:`DIMENSIONS`) over the account's days ``first``
    to ``last`` (inclusive)."""
    group = _grouping(columns)
    rows = await fetch_all(
        conn, f"SELECT {group}, sum(human), sum(bot), sum(visitors), sum(web), sum(app), sum(store) "
              f"FROM conversion_clicks {_WHERE} GROUP BY {group}", (account_id, first, last))
    width = len(columns)
    return [ClickSum(tuple(row[:width]), tuple(int(n) for n in tuple(row)[width:])) for row in rows]


async def events_by(conn: Conn, account_id: str, first: str, last: str, columns: Sequence[str]) -> list[EventSum]:
    """Events summed per distinct ``columns`` and type; link_id '' holds the unattributed."""
    group = _grouping(columns)
    rows = await fetch_all(
        conn, f"SELECT {group}, type, sum(events) FROM conversion_events {_WHERE} GROUP BY {group}, type",
        (account_id, first, last))
    width = len(columns)
    return [EventSum(tuple(row[:width]), row[width], int(row[width + 1])) for row in rows]


async def revenue_by(conn: Conn, account_id: str, first: str, last: str, columns: Sequence[str]
                     ) -> list[RevenueSum]:
    """Purchases, revenue and the delay histogram per distinct ``columns`` and currency. Revenue is added
    exactly: by PostgreSQL (numeric), or here with Decimal from SQLite's decimal text (which SQL would add as
    REAL), the amounts of a group joined by commas."""
    group = _grouping(columns)
    if dialect(conn) == "postgresql":
        revenue = "sum(revenue)::text"
        buckets = ", ".join(f"sum((delays ->> {i})::bigint)" for i in range(len(BUCKETS)))
    else:
        revenue = "group_concat(revenue, ',')"
        buckets = ", ".join(f"sum(json_extract(delays, '$[{i}]'))" for i in range(len(BUCKETS)))
    rows = await fetch_all(
        conn, f"SELECT {group}, currency, sum(purchases), {revenue}, {buckets} FROM conversion_revenue {_WHERE} "
              f"GROUP BY {group}, currency", (account_id, first, last))
    width = len(columns)
    return [RevenueSum(tuple(row[:width]), row[width], int(row[width + 1]), _exact_sum(row[width + 2]),
                       tuple(int(n or 0) for n in tuple(row)[width + 3:])) for row in rows]


def _exact_sum(text: Any) -> Decimal:
    if text is None:
        return Decimal(0)
    return sum((Decimal(part) for part in str(text).split(",") if part), Decimal(0))


async def link_labels(conn: Conn, account_id: str) -> dict[str, LinkLabel]:
    """Each link of the account: (code, its current campaign id or '', that campaign's name or None)."""
    name = json_member(conn, "c.body", "name")
    rows = await fetch_all(
        conn, f"SELECT l.id, l.code, l.campaign_id, {name} FROM links l LEFT JOIN campaigns c ON c.id = l.campaign_id "
              "WHERE l.account_id = ?", (account_id,))
    return {row[0]: LinkLabel(row[1], row[2] or "", row[3]) for row in rows}
