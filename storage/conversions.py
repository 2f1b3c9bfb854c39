"""The conversion rollups (docs/decisions.md, "Conversion report and attribution lineage") and the daily
visitor salts.

What clicks and events add to the report is kept here as they are written: the click writer's batches
(:func:`add_clicks`, called by ``storage.clicks.insert_clicks`` in the same transaction), the event batch and
a reversal (:func:`add_events`, :func:`add_purchases`). Each writer aggregates its rows by key in Python
first and then runs a few multi-row statements: never one per row. Each writer also keeps the coarse level
(migration 0020): the same figures per day and one or two dimensions (:data:`LEVELS`), so that a report
grouped by them reads a few hundred rows a day. A report sums rollup rows per day (:func:`clicks_by`,
:func:`events_by`, :func:`revenue_by`: from the coarse level when it holds the dimensions asked, else from the
fine rollups) and never scans clicks or events. Missing dimension values are '' (they are keys).
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

OWNS = ("visitor_salts", "conversion_clicks", "conversion_visitors", "conversion_events", "conversion_revenue",
        "conversion_level_clicks", "conversion_level_events", "conversion_level_revenue")

BUCKETS: tuple[float, ...] = (60, 300, 900, 3600, 10800, 21600, 43200, 86400, 172800, 259200, 604800, 1209600,
                              2592000, float("inf"))
"""Upper bounds (seconds, inclusive) of the click-to-purchase buckets; the last has none."""

KEY = ("account_id", "day", "link_id", "utm_source", "utm_medium", "utm_campaign", "platform")
Key = tuple[str, str, str, str, str, str, str]
ROWS_PER_STATEMENT = 1000  # at most 22 parameters a row: under both stores' limit of 32,766
ROUTES = {"destination": 0, "fallback": 0, "intent": 1, "deeplink": 1, "play": 2, "app_store": 2,
          "landing": 2}
"""A human click's answer -> its route: 0 web, 1 app, 2 store (others are counted in none)."""
SALT_DAYS_KEPT = 2

LEVELS: tuple[str, ...] = (
    "", "link_id", "utm_source", "utm_medium", "utm_campaign", "platform",
    "utm_source,utm_medium", "utm_source,utm_campaign", "utm_source,platform",
    "utm_medium,utm_campaign", "utm_medium,platform", "utm_campaign,platform")
"""The coarse level's groupings (migration 0020 fills them the same way): the day's totals, each dimension
alone, and each pair of dimensions but the link with a UTM field or the platform (those pairs have nearly as
many combinations as the fine rollups, which answer them)."""
UNATTRIBUTED = "unattributed"
"""The coarse level of events with no click behind them, per day (their level rows hold attributed ones)."""
LEVEL_KEY = ("account_id", "level", "day", "a", "b")
LevelKey = tuple[str, str, str, str, str]
_AT = {"link_id": 2, "utm_source": 3, "utm_medium": 4, "utm_campaign": 5, "platform": 6}  # in a Key
_LEVEL_AT = tuple((level, tuple(_AT[d] for d in level.split(",")) if level else ()) for level in LEVELS)
DELAY_COLUMNS = tuple(f"d{i}" for i in range(14))


def level_keys(key: Key) -> list[LevelKey]:
    """The coarse level's keys a fine key adds to: one per level, or the day's unattributed key for a key with
    no link (an event with no click behind it)."""
    account_id, day = key[0], key[1]
    if not key[2]:
        return [(account_id, UNATTRIBUTED, day, "", "")]
    return [(account_id, level, day, key[at[0]] if at else "", key[at[1]] if len(at) > 1 else "")
            for level, at in _LEVEL_AT]


def bucket_of(seconds: float) -> int:
    """The index in :data:`BUCKETS` of the bucket holding ``seconds`` (negative delays count as 0)."""
    return bisect.bisect_left(BUCKETS, max(0.0, seconds))


def _own(table: str) -> None:
    """The writers that take a table name write only the tables of :data:`OWNS`."""
    if table not in OWNS:
        raise ValueError(f"{table} is not a conversion rollup")


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
    levels: dict[tuple[str, ...], list[int]] = {}
    for key, row in counts.items():
        for level_key in level_keys(key):
            total = levels.get(level_key)
            if total is None:
                levels[level_key] = row.copy()
            else:
                for i, n in enumerate(row):
                    total[i] += n
    await _add_counts(tx, "conversion_clicks", KEY, CLICK_COUNTS, counts)
    await _add_counts(tx, "conversion_level_clicks", LEVEL_KEY, CLICK_COUNTS, levels)


CLICK_COUNTS = ("human", "bot", "visitors", "web", "app", "store")


async def _add_counts(tx: Tx, table: str, key: Sequence[str], columns: Sequence[str],
                      counts: dict[Any, list[int]]) -> None:
    """Adds ``counts`` (key -> one number per column) to ``table``'s rows, a thousand keys a statement."""
    _own(table)
    width = len(key) + len(columns)
    for chunk in _chunks(sorted(counts)):
        await execute(
            tx, f"INSERT INTO {table} ({', '.join(key)}, {', '.join(columns)}) VALUES {_marks(width, len(chunk))} "
                f"ON CONFLICT ({', '.join(key)}) DO UPDATE SET {_added(table, columns)}",
            [value for k in chunk for value in (*k, *counts[k])])


# --- events ----------------------------------------------------------------------------------------------

async def add_events(tx: Tx, rows: Sequence[tuple[str, str, str, str, str, str, str, str, int]]) -> None:
    """Adds (account_id, day, link_id, utm_source, utm_medium, utm_campaign, platform, type, n) to
    conversion_events (``n`` may be negative: a correction)."""
    sums: dict[tuple[str, ...], int] = defaultdict(int)
    for *key, n in rows:
        sums[tuple(key)] += n
    levels: dict[tuple[str, ...], int] = defaultdict(int)
    for k, n in sums.items():
        for level_key in level_keys(k[:7]):  # type: ignore[arg-type]
            levels[(*level_key, k[7])] += n
    await _add_counts(tx, "conversion_events", (*KEY, "type"), ("events",), {k: [n] for k, n in sums.items() if n})
    await _add_counts(tx, "conversion_level_events", (*LEVEL_KEY, "type"), ("events",),
                      {k: [n] for k, n in levels.items() if n})


PurchaseRow = tuple[str, str, str, str, str, str, str, str, int, Decimal, int | None]

# PostgreSQL adds two JSON arrays of counts element by element (SQLite's are added in Python).
_PG_DELAYS = ("(SELECT jsonb_agg(a.n::bigint + b.n::bigint ORDER BY a.i) "
              "FROM jsonb_array_elements_text(conversion_revenue.delays) WITH ORDINALITY AS a(n, i) "
              "JOIN jsonb_array_elements_text(excluded.delays) WITH ORDINALITY AS b(n, i) ON a.i = b.i)")


async def add_purchases(tx: Tx, rows: Sequence[PurchaseRow]) -> None:
    """Adds (account_id, day, link_id, utm_source, utm_medium, utm_campaign, platform, currency,
    purchases_delta, revenue_delta, delay_seconds or None) to conversion_revenue and its coarse level:
    purchases and revenue move by the deltas, and when a delay is given its bucket moves by purchases_delta
    (None: no click behind the purchase, no bucket). Revenue stays exact: Decimal in Python on SQLite (decimal
    text), numeric on PostgreSQL."""
    sums: dict[tuple[str, ...], Sums] = {}
    for *key, purchases, revenue, delay in rows:
        k = tuple(key)
        count, total, delays = sums.get(k) or (0, Decimal(0), [0] * len(BUCKETS))
        if delay is not None:
            delays[bucket_of(delay)] += purchases
        sums[k] = (count + purchases, total + Decimal(revenue), delays)
    if not sums:
        return
    levels: dict[tuple[str, ...], Sums] = {}
    for k, (count, total, delays) in sums.items():
        for level_key in level_keys(k[:7]):  # type: ignore[arg-type]
            lk = (*level_key, k[7])
            old = levels.get(lk)
            levels[lk] = (count, total, delays) if old is None else (
                old[0] + count, old[1] + total, [a + b for a, b in zip(old[2], delays, strict=True)])
    await _add_revenue(tx, "conversion_revenue", (*KEY, "currency"), sums, delays_in_columns=False)
    await _add_revenue(tx, "conversion_level_revenue", (*LEVEL_KEY, "currency"), levels, delays_in_columns=True)


Sums = tuple[int, Decimal, list[int]]  # purchases, revenue, count per delay bucket


async def _add_revenue(tx: Tx, table: str, key: Sequence[str], sums: dict[tuple[str, ...], Sums],
                       delays_in_columns: bool) -> None:
    """Adds ``sums`` to ``table``'s rows; the delay buckets are one JSON array (the fine rollups) or the
    columns d0 .. d13 (the coarse level)."""
    _own(table)
    delays = DELAY_COLUMNS if delays_in_columns else ("delays",)
    columns = f"{', '.join(key)}, purchases, revenue, {', '.join(delays)}"
    width = len(key) + 2 + len(delays)

    def values(k: tuple[str, ...], purchases: int, revenue: Decimal, counts: list[int]) -> list[Any]:
        return [*k, purchases, format(revenue, "f"), *(counts if delays_in_columns else [json.dumps(counts)])]

    keys = sorted(sums)
    if dialect(tx) == "postgresql":
        added = _added(table, ["purchases", "revenue", *DELAY_COLUMNS]) if delays_in_columns else \
            f"{_added(table, ['purchases', 'revenue'])}, delays = {_PG_DELAYS}"
        for chunk in _chunks(keys):
            await execute(
                tx, f"INSERT INTO {table} ({columns}) VALUES {_marks(width, len(chunk))} "
                    f"ON CONFLICT ({', '.join(key)}) DO UPDATE SET {added}",
                [v for k in chunk for v in values(k, *sums[k])])
        return
    # SQLite: one writer, inside its transaction: read the rows the batch touches, add in Python, write back.
    stored: dict[tuple[str, ...], Row] = {}
    for chunk in _chunks(keys):
        found = await fetch_all(
            tx, f"SELECT {columns} FROM {table} WHERE ({', '.join(key)}) IN (VALUES {_marks(len(key), len(chunk))})",
            [v for k in chunk for v in k])
        stored.update({tuple(row)[:len(key)]: row for row in found})
    at = len(key)
    for chunk in _chunks(keys):
        rows: list[Any] = []
        for k in chunk:
            purchases, revenue, counts = sums[k]
            old = stored.get(k)
            if old is not None:
                purchases += int(old[at])
                revenue += Decimal(old[at + 1])
                before = list(old[at + 2:]) if delays_in_columns else json.loads(old[at + 2])
                counts = [a + int(b) for a, b in zip(counts, before, strict=False)]
            rows += values(k, purchases, revenue, counts)
        await execute(
            tx, f"INSERT INTO {table} ({columns}) VALUES {_marks(width, len(chunk))} ON CONFLICT ({', '.join(key)}) "
                f"DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in ('purchases', 'revenue', *delays))}",
            rows)


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


def _level_of(columns: Sequence[str]) -> str | None:
    """The coarse level holding ``columns`` (day aside: every level is per day), or None."""
    _grouping(columns)  # checks them
    dims = [c for c in DIMENSIONS[1:] if c in columns]
    level = ",".join(dims)
    return level if level in LEVELS else None


def _level_select(columns: Sequence[str], level: str) -> tuple[str, str]:
    """The select list (in ``columns``' order) and GROUP BY list reading ``columns`` from ``level``'s rows:
    its dimensions are in a and b; every row of a level is attributed."""
    where = {"day": "day", ATTRIBUTED: "1"}
    for column, name in zip(level.split(",") if level else [], ("a", "b"), strict=False):
        where[column] = name
    group = ", ".join(where[c] for c in columns if c != ATTRIBUTED)
    return ", ".join(where[c] for c in columns), f" GROUP BY {group}" if group else ""


def _unattributed_dims(columns: Sequence[str]) -> tuple[Any, ...]:
    return tuple(0 if c == ATTRIBUTED else "" for c in columns)


_LEVEL_WHERE = "WHERE account_id = ? AND level = ? AND day >= ? AND day <= ?"


async def clicks_by(conn: Conn, account_id: str, first: str, last: str, columns: Sequence[str]) -> list[ClickSum]:
    """Click counts summed per distinct ``columns`` (of :data:`DIMENSIONS`) over the account's days ``first``
    to ``last`` (inclusive)."""
    width = len(columns)
    level = _level_of(columns)
    sums = ", ".join(f"sum({c})" for c in CLICK_COUNTS)
    if level is not None:
        select, group = _level_select(columns, level)
        rows = await fetch_all(conn, f"SELECT {select}, {sums} FROM conversion_level_clicks {_LEVEL_WHERE}{group}",
                               (account_id, level, first, last))
    else:
        grouping = _grouping(columns)
        rows = await fetch_all(conn, f"SELECT {grouping}, {sums} FROM conversion_clicks {_WHERE} GROUP BY {grouping}",
                               (account_id, first, last))
    return [ClickSum(tuple(row[:width]), tuple(int(n) for n in tuple(row)[width:])) for row in rows
            if row[width] is not None]


async def events_by(conn: Conn, account_id: str, first: str, last: str, columns: Sequence[str]) -> list[EventSum]:
    """Events summed per distinct ``columns`` and type; the unattributed have link_id '' (or attributed 0)."""
    width = len(columns)
    level = _level_of(columns)
    if level is None:
        group = _grouping(columns)
        rows = await fetch_all(
            conn, f"SELECT {group}, type, sum(events) FROM conversion_events {_WHERE} GROUP BY {group}, type",
            (account_id, first, last))
        return [EventSum(tuple(row[:width]), row[width], int(row[width + 1])) for row in rows]
    select, group = _level_select(columns, level)
    rows = await fetch_all(
        conn, f"SELECT {select}, type, sum(events) FROM conversion_level_events {_LEVEL_WHERE}"
              f"{group + ', type' if group else ' GROUP BY type'}", (account_id, level, first, last))
    found = [EventSum(tuple(row[:width]), row[width], int(row[width + 1])) for row in rows]
    none = _unattributed_dims(columns)
    for row in await fetch_all(
            conn, f"SELECT type, sum(events) FROM conversion_level_events {_LEVEL_WHERE} GROUP BY type",
            (account_id, UNATTRIBUTED, first, last)):
        found.append(EventSum(none, row[0], int(row[1])))
    return found


async def revenue_by(conn: Conn, account_id: str, first: str, last: str, columns: Sequence[str]
                     ) -> list[RevenueSum]:
    """Purchases, revenue and the delay histogram per distinct ``columns`` and currency. Revenue is added
    exactly: by PostgreSQL (numeric), or here with Decimal from SQLite's decimal text (which SQL would add as
    REAL), the amounts of a group joined by commas."""
    width = len(columns)
    revenue = "sum(revenue)::text" if dialect(conn) == "postgresql" else "group_concat(revenue, ',')"

    def sums(found: list[Row], dims: tuple[Any, ...] | None = None) -> list[RevenueSum]:
        at = 0 if dims is not None else width
        return [RevenueSum(dims if dims is not None else tuple(row[:width]), row[at], int(row[at + 1]),
                           _exact_sum(row[at + 2]), tuple(int(n or 0) for n in tuple(row)[at + 3:]))
                for row in found]

    level = _level_of(columns)
    if level is None:
        group = _grouping(columns)
        if dialect(conn) == "postgresql":
            buckets = ", ".join(f"sum((delays ->> {i})::bigint)" for i in range(len(BUCKETS)))
        else:
            buckets = ", ".join(f"sum(json_extract(delays, '$[{i}]'))" for i in range(len(BUCKETS)))
        return sums(await fetch_all(
            conn, f"SELECT {group}, currency, sum(purchases), {revenue}, {buckets} FROM conversion_revenue "
                  f"{_WHERE} GROUP BY {group}, currency", (account_id, first, last)))
    buckets = ", ".join(f"sum({c})" for c in DELAY_COLUMNS)
    select, group = _level_select(columns, level)
    found = sums(await fetch_all(
        conn, f"SELECT {select}, currency, sum(purchases), {revenue}, {buckets} FROM conversion_level_revenue "
              f"{_LEVEL_WHERE}{group + ', currency' if group else ' GROUP BY currency'}",
        (account_id, level, first, last)))
    return found + sums(await fetch_all(
        conn, f"SELECT currency, sum(purchases), {revenue}, {buckets} FROM conversion_level_revenue "
              f"{_LEVEL_WHERE} GROUP BY currency", (account_id, UNATTRIBUTED, first, last)),
        _unattributed_dims(columns))


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
