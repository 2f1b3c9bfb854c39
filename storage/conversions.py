"""The conversion rollups (docs/decisions.md, "Conversion report and attribution lineage") and the daily
visitor salts.

What clicks and events add to the report is kept here: the clicks by a pass of their own behind a mark
(:func:`roll_up_clicks`: the stored clicks after the mark, counted with :func:`add_click_counts`, the mark moved
in the same transaction; the click writer stores clicks only), the events as they are written, by the event
batch and a reversal (:func:`add_events`, :func:`add_purchases`). Each writer aggregates its rows by key in
Python first and then writes one row per distinct key and table, in multi-row statements of fixed sizes
(:func:`_chunks`): never one per row. Each writer also keeps the coarse level
(migrations 0020, 0024 and 0032): the same figures per one or two dimensions (:data:`LEVELS`; the click's
country, referrer host, rule and variant among them, :data:`CLICK_LEVELS`), per day and per ISO week
(:data:`DAILY`, :data:`WEEKLY`). A report reads the coarse level only (:func:`clicks_by`,
:func:`events_by`, :func:`revenue_by`): the weekly rows of the whole weeks of its range and the daily rows of
the days around them (:func:`spans`), and never scans clicks or events. An event's UTM in the coarse level is
the click's behind it (the report's default), in the fine rollups its own: the report reads those for
``utm_from=event``, and the migrations fill new levels from them. :func:`top_groups` picks the groups a report
shows, so that no read returns a row per distinct value. Missing dimension values are '' (they are keys).
"""

from __future__ import annotations

import bisect
import functools
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from itertools import chain
from typing import Any

from storage.clicks import CLICK_INSERTS
from storage.db import Conn, Row, Tx, dialect, execute, fetch_all, fetch_one, json_member, statement_chunks

OWNS = ("visitor_salts", "conversion_clicks", "conversion_visitors", "conversion_events", "conversion_revenue",
        "conversion_level_clicks", "conversion_level_events", "conversion_level_revenue", "conversion_click_mark",
        "conversion_variant_days", "conversion_variant_visitors", "conversion_variant_day_revenue",
        "conversion_click_weeks")

BUCKETS: tuple[float, ...] = (60, 300, 900, 3600, 10800, 21600, 43200, 86400, 172800, 259200, 604800, 1209600,
                              2592000, float("inf"))
"""Upper bounds (seconds, inclusive) of the click-to-purchase buckets; the last has none."""

KEY = ("account_id", "day", "link_id", "utm_source", "utm_medium", "utm_campaign", "platform")
Key = tuple[str, str, str, str, str, str, str]
ROWS_PER_STATEMENT = 512  # at most 22 parameters a row: under both stores' limit of 32,766
ROUTES = {"destination": 0, "fallback": 0, "intent": 1, "deeplink": 1, "play": 2, "app_store": 2,
          "landing": 2}
"""A human click's answer -> its route: 0 web, 1 app, 2 store (others are counted in none)."""
SALT_DAYS_KEPT = 2

FINE_LEVELS: tuple[str, ...] = (
    "", "link_id", "utm_source", "utm_medium", "utm_campaign", "platform",
    "utm_source,utm_medium", "utm_source,utm_campaign", "utm_source,platform",
    "utm_medium,utm_campaign", "utm_medium,platform", "utm_campaign,platform",
    "link_id,utm_source", "link_id,utm_medium", "link_id,utm_campaign", "link_id,platform")
"""The coarse level's groupings of the fine rollups' dimensions (migrations 0020 and 0024 fill them the same
way): the day's totals, each dimension alone, and each pair of dimensions."""
CLICK_DIMENSIONS = ("country", "referrer_host", "rule", "variant")
"""What else of the click behind a row the coarse level groups by (issue 34; '' where the click has none)."""
ClickDims = tuple[str, str, str, str]
NO_DIMS: ClickDims = ("", "", "", "")
CLICK_LEVELS: tuple[str, ...] = ("country", "referrer_host", "rule", "link_id,rule", "link_id,variant")
"""The groupings by :data:`CLICK_DIMENSIONS` (migration 0032): country, referrer host and rule alone, and the
link with the rule and with the variant (a variant is named per link: never alone; a link's rules and variants
are few). Not the link with the country or the referrer host, nor any of them with a UTM field or the platform:
the link with a value the click brings is close to a row per click and day to keep, and the link with the
country alone cost the clicks' pass a fifth more (docs/decisions.md)."""
LEVELS: tuple[str, ...] = FINE_LEVELS + CLICK_LEVELS
"""Every grouping of one or two dimensions the report answers."""
UNATTRIBUTED = "unattributed"
"""The coarse level of events with no click behind them, per day (their level rows hold attributed ones)."""
DAILY, WEEKLY = "d", "w"
"""The periods of the coarse level (migration 0024): a row per day, and beside it a row per ISO week (its day is
the week's Monday) holding the sum of that week's daily rows."""
LEVEL_KEY = ("account_id", "level", "period", "day", "a", "b")
LevelKey = tuple[str, str, str, str, str, str]
# Where each dimension is in a Key followed by the ClickDims of its click.
_AT = {"link_id": 2, "utm_source": 3, "utm_medium": 4, "utm_campaign": 5, "platform": 6,
       **{d: 7 + i for i, d in enumerate(CLICK_DIMENSIONS)}}
_LEVEL_AT = tuple((level, tuple(_AT[d] for d in level.split(",")) if level else ()) for level in LEVELS)
DELAY_COLUMNS = tuple(f"d{i}" for i in range(14))


@functools.lru_cache(maxsize=4096)
def monday(day: str) -> str:
    """The Monday (YYYY-MM-DD) of the ISO week holding ``day``."""
    start = date.fromisoformat(day)
    return (start - timedelta(days=start.weekday())).isoformat()


def level_keys(key: Key, dims: ClickDims = NO_DIMS) -> list[LevelKey]:
    """The coarse level's daily keys a fine key adds to, ``dims`` being its click's country, referrer host, rule
    and variant: one per level, or the day's unattributed key for a key with no link (an event with no click
    behind it). :func:`with_weeks` adds their weekly keys."""
    account_id, day = key[0], key[1]
    if not key[2]:
        return [(account_id, UNATTRIBUTED, DAILY, day, "", "")]
    row = (*key, *dims)
    return [(account_id, level, DAILY, day, row[at[0]] if at else "", row[at[1]] if len(at) > 1 else "")
            for level, at in _LEVEL_AT]


def with_weeks(daily: dict[Any, Any], add: Any) -> dict[Any, Any]:
    """``daily`` (coarse keys of period 'd', possibly with a type or currency after them -> figures) and the
    weekly rows they add to: the same figures under the week's Monday, added with ``add(total, figures)``
    (which returns the new total; ``total`` is None for a key not seen yet)."""
    found = dict(daily)
    for k, figures in daily.items():
        week = (k[0], k[1], WEEKLY, monday(k[3]), *k[4:])
        found[week] = add(found.get(week), figures)
    return found


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
    """:func:`storage.db.statement_chunks` of :data:`ROWS_PER_STATEMENT`: each table's statements come in at
    most ten sizes, kept by the statement cache across batches."""
    return statement_chunks(rows, ROWS_PER_STATEMENT)


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


def _add_int(total: int | None, n: int) -> int:
    return n if total is None else total + n


def _add_sums(total: Sums | None, sums: Sums) -> Sums:
    if total is None:
        return sums
    return total[0] + sums[0], total[1] + sums[1], [a + b for a, b in zip(total[2], sums[2], strict=True)]


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
            list(chain.from_iterable((*k, *counts[k]) for k in chunk)))


# --- the clicks' pass ------------------------------------------------------------------------------------

def _monday_sql(conn: Conn, day: str) -> str:
    """The SQL text of the Monday (YYYY-MM-DD) of the ISO week holding the text ``day`` (:func:`monday`)."""
    if dialect(conn) == "postgresql":
        return f"to_char(date_trunc('week', ({day})::date), 'YYYY-MM-DD')"
    return f"date({day}, 'weekday 0', '-6 days')"


def _pass_selects(conn: Conn) -> tuple[str, str, str]:
    """The three relations of a pass over the clicks with ids in (?, ?] (the first takes the two parameters):
    ``pass``, one row per click with its id, fine key, what it adds (a bot adds to ``bot`` only; a human click
    adds its route, :data:`ROUTES`) and its :data:`CLICK_DIMENSIONS`; ``new``, the (key, visitor) pairs of human
    clicks not counted yet (``conversion_visitors`` remembers who was counted) with the id of the first of their
    clicks; ``fine``, the sums per fine key, each new visitor counted once."""
    utm = {field: f"coalesce({json_member(conn, 'c.utm', field)}, '')"
           for field in ("utm_source", "utm_medium", "utm_campaign")}
    route = {n: " ".join(f"WHEN '{answer}' THEN 1" for answer, r in ROUTES.items() if r == n) for n in range(3)}
    key = ", ".join(KEY)
    same = " AND ".join(f"v.{k} = p.{k}" for k in KEY)
    clicks = (
        f"SELECT c.id, c.account_id, substr(c.clicked_at, 1, 10) AS day, c.link_id, "
        f"{utm['utm_source']} AS utm_source, {utm['utm_medium']} AS utm_medium, "
        f"{utm['utm_campaign']} AS utm_campaign, coalesce(c.platform, '') AS platform, "
        f"CASE WHEN c.bot = 0 THEN 1 ELSE 0 END AS human, CASE WHEN c.bot = 0 THEN 0 ELSE 1 END AS bot, "
        + ", ".join(f"CASE WHEN c.bot = 0 THEN CASE c.answer {route[n]} ELSE 0 END ELSE 0 END AS {name}"
                    for n, name in enumerate(("web", "app", "store")))
        + ", CASE WHEN c.bot = 0 AND c.visitor <> '' THEN c.visitor END AS visitor, "
        + ", ".join(f"coalesce(c.{d}, '') AS {d}" for d in CLICK_DIMENSIONS)
        + " FROM clicks c WHERE c.id > ? AND c.id <= ?")
    new = (f"SELECT {key}, visitor, min(id) AS first FROM pass p WHERE p.visitor IS NOT NULL AND NOT EXISTS "
           f"(SELECT 1 FROM conversion_visitors v WHERE {same} AND v.visitor = p.visitor) GROUP BY {key}, visitor")
    fine = (f"SELECT {key}, " + ", ".join(f"sum({c}) AS {c}" for c in CLICK_COUNTS)
            + f" FROM (SELECT {key}, human, bot, 0 AS visitors, web, app, store FROM pass "
            f"UNION ALL SELECT {key}, 0, 0, 1, 0, 0, 0 FROM new) counted GROUP BY {key}")
    return clicks, new, fine


def _pass_sql(conn: Conn) -> str:
    """:func:`_pass_selects` as the common table expressions every statement of a pass starts with."""
    clicks, new, fine = _pass_selects(conn)
    return f"WITH pass AS ({clicks}), new AS ({new}), fine AS ({fine}) "


PASS_TABLES = ("pass", "new", "fine")
"""On SQLite, the temporary tables a pass fills once (:func:`_pass_selects`) and its statements read."""


VARIANT_KEY = ("account_id", "link_id", "variant")
VARIANT_DAY_KEY = (*VARIANT_KEY, "day")
VARIANT_COUNTS = ("human", "bot", "visitors")


def _variant_statements() -> tuple[str, str]:
    """The pass's two statements for the variant report (issue 34), over the clicks with ids in (?, ?] that
    went to a variant: their human and bot clicks and new visitors per link, variant and day (the click's, UTC),
    then the visitors counted. A visitor is counted once per link and variant (on the day of its first click in
    the pass; the daily salted hash is a new visitor each day anyway)."""
    key = ", ".join(VARIANT_KEY)
    day_key = ", ".join(VARIANT_DAY_KEY)
    same = " AND ".join(f"v.{k} = p.{k}" for k in VARIANT_KEY)
    cte = (
        f"WITH vpass AS (SELECT c.account_id, c.link_id, c.variant, substr(c.clicked_at, 1, 10) AS day, "
        f"CASE WHEN c.bot = 0 THEN 1 ELSE 0 END AS human, "
        f"CASE WHEN c.bot = 0 THEN 0 ELSE 1 END AS bot, CASE WHEN c.bot = 0 AND c.visitor <> '' THEN c.visitor END "
        f"AS visitor FROM clicks c WHERE c.id > ? AND c.id <= ? AND c.variant IS NOT NULL), "
        f"vnew AS (SELECT {key}, visitor, min(day) AS day FROM vpass p WHERE p.visitor IS NOT NULL AND NOT EXISTS "
        f"(SELECT 1 FROM conversion_variant_visitors v WHERE {same} AND v.visitor = p.visitor) "
        f"GROUP BY {key}, visitor) ")
    counts = ", ".join(VARIANT_COUNTS)
    clicks = (f"{cte}INSERT INTO conversion_variant_days ({day_key}, {counts}) "
              f"SELECT {day_key}, sum(human), sum(bot), sum(visitors) "
              f"FROM (SELECT {day_key}, human, bot, 0 AS visitors FROM vpass "
              f"UNION ALL SELECT {day_key}, 0, 0, 1 FROM vnew) x WHERE true GROUP BY {day_key} "
              f"ON CONFLICT ({day_key}) DO UPDATE SET {_added('conversion_variant_days', VARIANT_COUNTS)}")
    visitors = (f"{cte}INSERT INTO conversion_variant_visitors ({key}, visitor) "
                f"SELECT {key}, visitor FROM vnew WHERE true ON CONFLICT DO NOTHING")
    return clicks, visitors


def _pass_statements(conn: Conn) -> tuple[str, ...]:
    """A pass's statements over the clicks with ids in (?, ?], each one statement for all of them: the fine
    rows, the coarse level's daily rows and the weekly rows of the days already folded (the coarse statement's
    third parameter: :func:`fold_click_weeks`), then the visitors counted (after the two that read which
    are new); then the same for the variants of A/B splits (:func:`_variant_statements`). The levels of
    :data:`CLICK_LEVELS` count a new visitor (of a fine key) under the dimensions of their first click in the
    pass, so that the visitors of a grouping by country add up to the day's as they do for the others; a rule's
    and a variant's '' rows are the link's (or the day's) less what the rules and variants sent
    (:func:`_click_level_parts`)."""
    # PostgreSQL computes the pass's relations in each statement (common table expressions); SQLite fills each
    # once into a temporary table, so that the clicks are read and the new visitors looked up once a pass.
    materialized = dialect(conn) == "sqlite"
    cte = "" if materialized else _pass_sql(conn)
    counts = ", ".join(CLICK_COUNTS)
    fine = (f"{cte}INSERT INTO conversion_clicks ({', '.join(KEY)}, {counts}) "
            f"SELECT {', '.join(KEY)}, {counts} FROM fine WHERE true "
            f"ON CONFLICT ({', '.join(KEY)}) DO UPDATE SET {_added('conversion_clicks', CLICK_COUNTS)}")
    sums = ", ".join(f"sum({c}) AS {c}" for c in CLICK_COUNTS)
    dims = ("utm_source", "utm_medium", "utm_campaign", "platform")
    parts = []
    for level in FINE_LEVELS:  # each level on its own: the link's from the fine rows, the others from `nolink`
        named = level.split(",") if level else []
        a, b = (named + ["''", "''"])[:2]
        if level == "link_id":  # summed once in `links`: the rule's and the variant's '' rows are taken from it
            parts.append(f"SELECT account_id, '{level}' AS level, day, link_id AS a, '' AS b, {COUNTS} FROM links")
            continue
        source = "fine" if "link_id" in named else "nolink"
        groups = ", ".join(["account_id", "day", *named])
        parts.append(f"SELECT account_id, '{level}' AS level, day, {a} AS a, {b} AS b, {sums} FROM {source} "
                     f"{'WHERE link_id <> ' + repr('') + ' ' if source == 'fine' else ''}GROUP BY {groups}")
    parts.extend(_click_level_parts(sums))
    parts.append(f"SELECT account_id, '{UNATTRIBUTED}', day, '', '', {sums} FROM fine WHERE link_id = '' "
                 f"GROUP BY account_id, day")
    opening = f"{cte}," if cte else "WITH"
    coarse = (
        f"{opening} nolink AS (SELECT account_id, day, {', '.join(dims)}, {sums} FROM fine WHERE link_id <> '' "
        f"GROUP BY account_id, day, {', '.join(dims)}), "
        f"links AS (SELECT account_id, day, link_id, {sums} FROM fine WHERE link_id <> '' "
        f"GROUP BY account_id, day, link_id), "
        f"{_click_dimension_ctes(sums)}, "
        f"daily AS ({' UNION ALL '.join(parts)}) "
        f"INSERT INTO conversion_level_clicks ({', '.join(LEVEL_KEY)}, {counts}) "
        f"SELECT account_id, level, '{DAILY}', day, a, b, {counts} FROM daily WHERE true "
        f"UNION ALL SELECT account_id, level, '{WEEKLY}', {_monday_sql(conn, 'day')} AS week, a, b, {sums} "
        f"FROM daily WHERE day < ? GROUP BY account_id, level, week, a, b "
        f"ON CONFLICT ({', '.join(LEVEL_KEY)}) DO UPDATE SET {_added('conversion_level_clicks', CLICK_COUNTS)}")
    visitors = (f"{cte}INSERT INTO conversion_visitors ({', '.join(KEY)}, visitor) "
                f"SELECT {', '.join(KEY)}, visitor FROM new WHERE true ON CONFLICT DO NOTHING")
    main: tuple[str, ...] = (fine, coarse, visitors)
    if materialized:
        main = tuple(f"CREATE TEMP TABLE {name} AS {select}"
                     for name, select in zip(PASS_TABLES, _pass_selects(conn), strict=True)) + main + tuple(
            f"DROP TABLE temp.{name}" for name in PASS_TABLES)
    return (*main, *_variant_statements())


COUNTS = ", ".join(CLICK_COUNTS)
PLACED = ("account_id", "day", "country", "referrer_host")
RULED = ("account_id", "day", "link_id", "rule", "variant")


def _with_visitors(columns: Sequence[str], where: str) -> str:
    """The pass's clicks matching ``where`` (a condition on a click's ``p.`` columns) with their figures, and a
    row per new visitor under the columns of their first click: what a grouping of ``columns`` sums."""
    cols = ", ".join(f"p.{c}" for c in columns)
    return (f"SELECT {cols}, human, bot, 0 AS visitors, web, app, store FROM pass p WHERE {where} UNION ALL "
            f"SELECT {cols}, 0, 0, 1, 0, 0, 0 FROM new n JOIN pass p ON p.id = n.first WHERE {where}")


def _click_dimension_ctes(sums: str) -> str:
    """The pass's sums by the click's dimensions (issue 34), for :func:`_click_level_parts`: ``placed``, per
    day, country and referrer host; ``ruled``, per day, link, rule and variant, of only the clicks a rule or a
    variant sent (few: most links have neither). Their '' rows are taken from the link's and the day's sums
    instead: a row fewer to sort per click and level than grouping every click by its link, rule and variant."""
    ruled_where = "p.link_id <> '' AND (p.rule <> '' OR p.variant <> '')"
    return (f"placed AS (SELECT {', '.join(PLACED)}, {sums} FROM ({_with_visitors(PLACED, 'p.link_id <> ' + repr(''))}"
            f") x GROUP BY {', '.join(PLACED)}), "
            f"ruled AS (SELECT {', '.join(RULED)}, {sums} FROM ({_with_visitors(RULED, ruled_where)}) x "
            f"GROUP BY {', '.join(RULED)})")


def _click_level_parts(sums: str) -> list[str]:
    """The coarse level's rows of :data:`CLICK_LEVELS` from :func:`_click_dimension_ctes`: country and referrer
    host from ``placed``; the rule's and the variant's values from ``ruled``. Their '' rows (no rule, no variant)
    are not kept: a report reads them as the link's (or the day's) sums less what a rule or a variant sent
    (:data:`EMPTY_FROM`)."""
    parts = []
    for level in CLICK_LEVELS:
        named = level.split(",")
        dim = named[-1]
        if dim in ("country", "referrer_host"):
            parts.append(f"SELECT account_id, '{level}', day, {dim}, '', {sums} FROM placed "
                         f"GROUP BY account_id, day, {dim}")
            continue
        by_link = "link_id" in named  # rule or variant, with the link or (the rule) alone
        keys = ", ".join(["account_id", "day", *named[:-1]])
        a, b = ("link_id", dim) if by_link else (dim, "''")
        parts.append(f"SELECT account_id, '{level}', day, {a}, {b}, {sums} FROM ruled WHERE {dim} <> '' "
                     f"GROUP BY {keys}, {dim}")
    return parts


EMPTY_FROM = {"rule": "", "link_id,rule": "link_id", "link_id,variant": "link_id"}
"""The click levels whose '' rows (the clicks no rule or no variant sent) the pass does not keep, and the level
whose rows hold their totals: the day's for the rule alone, the link's for the others. Most clicks have
neither, so those rows were the link's rows again, one more per click and link on clicks spread over many
links. :func:`_level_rows` reads them back as that level's rows less the level's own."""


_PASS_STATEMENTS: dict[str, tuple[str, ...]] = {}


HORIZON_WAIT = "1s"
"""On PostgreSQL, how long :func:`click_horizon` waits for the click transactions under way at most. While it
waits, new click transactions wait behind it (PostgreSQL queues the shared requests after the exclusive one):
a click transaction held open (a node frozen in the middle of one) must not stop every other node's click
writer, so the horizon gives up instead (a store error: the pass is tried again later, a report reads what is
counted)."""


async def click_horizon(tx: Tx) -> int:
    """The largest id of the clicks stored now, such that every click up to it that will ever be stored is
    stored (a pass may count up to it). On PostgreSQL, ids are handed out in one order and committed in
    another: the lock every click transaction holds shared (``storage.clicks.CLICK_INSERTS``) is taken alone
    first (waiting :data:`HORIZON_WAIT` at most), which waits for those under way, so that none of them holds a
    smaller id than one already committed. Run it at ``READ COMMITTED`` (a ``serial_key``) so that it reads
    after the wait; held only for this short unit. On SQLite the one writer commits ids in order."""
    if dialect(tx) == "postgresql":
        await execute(tx, f"SET LOCAL lock_timeout = '{HORIZON_WAIT}'")
        await execute(tx, "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", (CLICK_INSERTS,))
    row = await fetch_one(tx, "SELECT coalesce(max(id), 0) FROM clicks")
    return int(row[0]) if row is not None else 0


async def first_waiting_click(conn: Conn) -> str | None:
    """When the first click stored after the mark was taken (``clicked_at``), None when none waits: a hint read
    without a write (the pass decides what it counts)."""
    row = await fetch_one(conn, "SELECT clicked_at FROM clicks WHERE id > coalesce((SELECT counted FROM "
                                "conversion_click_mark WHERE name = 'clicks'), 0) ORDER BY id LIMIT 1")
    return None if row is None else str(row[0])


def _pass_parameters(statement: str, counted: int, last: int, folded: str) -> tuple[Any, ...]:
    """The parameters of one of :func:`_pass_statements`: the span of click ids for each that reads the clicks
    (its first two), then the fold mark for the coarse level's (its last)."""
    span = (counted, last) if "FROM clicks c WHERE c.id > ?" in statement else ()
    return (*span, folded) if "INSERT INTO conversion_level_clicks" in statement else span
WEEKS_MARK = "clicks"
"""The row of ``conversion_click_weeks`` holding the fold mark of the clicks' weekly rows: the first day whose
clicks are not in them yet."""


async def click_weeks_folded(conn: Conn) -> str | None:
    """The fold mark of the clicks' coarse level (YYYY-MM-DD): its weekly rows hold the clicks of every day
    before it, and none of the days from it on, which only its daily rows hold. None before the first pass of
    a release that folds: the weekly rows then hold every day (the passes before added to both)."""
    row = await fetch_one(conn, "SELECT day FROM conversion_click_weeks WHERE name = ?", (WEEKS_MARK,))
    return None if row is None else str(row[0])


async def fold_click_weeks(tx: Tx, today: str) -> str:
    """Adds the daily rows of the clicks' coarse level of the days from the fold mark up to the day before
    ``today`` (those days are over: the newest click counted is of ``today``) to their weeks, once, and moves
    the mark to ``today``; returns the mark. Before, each pass added every click to its day's row and to its
    week's: on clicks spread over many links, a row per click twice. A click of a folded day that is counted
    later (a node's late batch, a spill file read back) is added to both rows by its pass, so the weekly rows
    always hold exactly the days before the mark, and :func:`spans` reads the days from it by day. The first
    fold of a store puts the mark after the last day counted so far (whose weekly rows are whole)."""
    folded = await click_weeks_folded(tx)
    if folded is None:
        row = await fetch_one(tx, "SELECT max(day) FROM conversion_level_clicks WHERE period = ?", (DAILY,))
        newest = None if row is None or row[0] is None else str(row[0])
        folded = (date.fromisoformat(newest) + timedelta(days=1)).isoformat() if newest is not None else today
    elif folded < today:
        counts = ", ".join(CLICK_COUNTS)
        sums = ", ".join(f"sum({c})" for c in CLICK_COUNTS)
        await execute(
            tx, f"INSERT INTO conversion_level_clicks ({', '.join(LEVEL_KEY)}, {counts}) "
                f"SELECT account_id, level, '{WEEKLY}', {_monday_sql(tx, 'day')} AS week, a, b, {sums} "
                f"FROM conversion_level_clicks WHERE period = ? AND day >= ? AND day < ? "
                f"GROUP BY account_id, level, week, a, b "
                f"ON CONFLICT ({', '.join(LEVEL_KEY)}) DO UPDATE SET {_added('conversion_level_clicks', CLICK_COUNTS)}",
            (DAILY, folded, today))
        folded = today
    else:
        return folded
    await execute(tx, "INSERT INTO conversion_click_weeks (name, day) VALUES (?, ?) "
                      "ON CONFLICT (name) DO UPDATE SET day = excluded.day", (WEEKS_MARK, folded))
    return folded


async def roll_up_clicks(tx: Tx, upto: int, limit: int) -> tuple[int, bool]:
    """Counts into the rollups the stored clicks after the mark, up to id ``upto`` (a :func:`click_horizon`)
    and at most ``limit`` of them, and moves the mark past them in the same transaction: (how many were
    counted, whether clicks up to ``upto`` are left for another unit). The store sums them, in five
    statements whatever their number (:func:`_pass_statements`): no click's row comes into Python, so the pass
    holds no interpreter lock the event loop waits for (docs/decisions.md, "Rollups behind a mark"). Passes
    must take turns (``Store.write`` with one ``serial_key``: an advisory lock on PostgreSQL, where it then
    reads the mark its predecessor committed; SQLite's one writer)."""
    row = await fetch_one(tx, "SELECT counted FROM conversion_click_mark WHERE name = 'clicks'")
    counted = int(row[0]) if row is not None else 0
    if counted >= upto:
        return 0, False
    span = await fetch_one(tx, "SELECT count(*), max(id), max(clicked_at) FROM (SELECT id, clicked_at FROM clicks "
                               "WHERE id > ? AND id <= ? ORDER BY id LIMIT ?) s", (counted, upto, limit))
    found = int(span[0]) if span is not None else 0
    last = int(span[1]) if span is not None and found == limit else upto
    if found:
        assert span is not None
        folded = await fold_click_weeks(tx, str(span[2])[:10])
        kind = dialect(tx)
        statements = _PASS_STATEMENTS.get(kind)
        if statements is None:
            statements = _PASS_STATEMENTS[kind] = _pass_statements(tx)
        for statement in statements:
            await execute(tx, statement, _pass_parameters(statement, counted, last, folded))
    await execute(tx, "INSERT INTO conversion_click_mark (name, counted) VALUES ('clicks', ?) "
                      "ON CONFLICT (name) DO UPDATE SET counted = excluded.counted", (last,))
    return found, last < upto


# --- events ----------------------------------------------------------------------------------------------

ClickUtm = tuple[str, str, str]
"""The UTM (source, medium, campaign) of the click behind an event: the coarse level's key for it."""


def _attributed(key: tuple[str, ...], utm: ClickUtm | None) -> Key:
    """A fine key (the event's own UTM) with the click's UTM in its place, when given."""
    if utm is None:
        return key[:7]  # type: ignore[return-value]
    return (key[0], key[1], key[2], utm[0], utm[1], utm[2], key[6])


async def add_events(tx: Tx, rows: Sequence[tuple[str, str, str, str, str, str, str, str, int]],
                     by_click: Sequence[ClickUtm | None] | None = None,
                     dims_by_click: Sequence[ClickDims | None] | None = None) -> None:
    """Adds (account_id, day, link_id, utm_source, utm_medium, utm_campaign, platform, type, n) to
    conversion_events (``n`` may be negative: a correction), keyed by the event's own UTM; the coarse level is
    keyed by ``by_click[i]``, the UTM of the click behind row i, when given (the report's default, docs/decisions.md
    "Reports and bounded answers"), else by the row's own, and by ``dims_by_click[i]``, that click's
    :data:`CLICK_DIMENSIONS` ('' each when not given)."""
    sums: dict[tuple[str, ...], int] = defaultdict(int)
    attributed: dict[tuple[Key, ClickDims, str], int] = defaultdict(int)  # the coarse level's keys, summed first
    for i, (*key, n) in enumerate(rows):
        sums[tuple(key)] += n
        dims = (dims_by_click[i] if dims_by_click else None) or NO_DIMS
        attributed[_attributed(tuple(key[:7]), by_click[i] if by_click else None), dims, key[7]] += n
    levels: dict[tuple[str, ...], int] = defaultdict(int)
    for (fine, dims, type_), n in attributed.items():
        for level_key in level_keys(fine, dims):
            levels[(*level_key, type_)] += n
    await _add_counts(tx, "conversion_events", (*KEY, "type"), ("events",), {k: [n] for k, n in sums.items() if n})
    await _add_counts(tx, "conversion_level_events", (*LEVEL_KEY, "type"), ("events",),
                      {k: [n] for k, n in with_weeks(levels, _add_int).items() if n})


PurchaseRow = tuple[str, str, str, str, str, str, str, str, int, Decimal, int | None]

# PostgreSQL adds two JSON arrays of counts element by element (SQLite's are added in Python).
_PG_DELAYS = ("(SELECT jsonb_agg(a.n::bigint + b.n::bigint ORDER BY a.i) "
              "FROM jsonb_array_elements_text(conversion_revenue.delays) WITH ORDINALITY AS a(n, i) "
              "JOIN jsonb_array_elements_text(excluded.delays) WITH ORDINALITY AS b(n, i) ON a.i = b.i)")


async def add_purchases(tx: Tx, rows: Sequence[PurchaseRow], by_click: Sequence[ClickUtm | None] | None = None,
                        dims_by_click: Sequence[ClickDims | None] | None = None) -> None:
    """Adds (account_id, day, link_id, utm_source, utm_medium, utm_campaign, platform, currency,
    purchases_delta, revenue_delta, delay_seconds or None) to conversion_revenue and its coarse level (keyed by
    ``by_click`` and ``dims_by_click`` as in :func:`add_events`): purchases and revenue move by the deltas, and
    when a delay is given its bucket moves by purchases_delta (None: no click behind the purchase, no bucket).
    Revenue stays exact: Decimal in Python on SQLite (decimal text), numeric on PostgreSQL."""
    sums: dict[tuple[str, ...], Sums] = {}
    attributed: dict[tuple[Key, ClickDims, str], Sums] = {}  # the coarse level's keys, summed first
    for i, (*key, purchases, revenue, delay) in enumerate(rows):
        delays = [0] * len(BUCKETS)
        if delay is not None:
            delays[bucket_of(delay)] += purchases
        figures = (purchases, Decimal(revenue), delays)
        k = tuple(key)
        sums[k] = _add_sums(sums.get(k), figures)
        ak = (_attributed(k[:7], by_click[i] if by_click else None),
              (dims_by_click[i] if dims_by_click else None) or NO_DIMS, k[7])
        attributed[ak] = _add_sums(attributed.get(ak), figures)
    levels: dict[tuple[str, ...], Sums] = {}
    for (fine, dims, currency), figures in attributed.items():
        for level_key in level_keys(fine, dims):
            lk = (*level_key, currency)
            levels[lk] = _add_sums(levels.get(lk), figures)
    sums = {k: figures for k, figures in sums.items() if _moves(figures)}  # a purchase and its reversal: nothing
    if not sums:
        return
    await _add_revenue(tx, "conversion_revenue", (*KEY, "currency"), sums, delays_in_columns=False)
    await _add_revenue(tx, "conversion_level_revenue", (*LEVEL_KEY, "currency"),
                       {k: figures for k, figures in with_weeks(levels, _add_sums).items() if _moves(figures)},
                       delays_in_columns=True)


VariantPurchase = tuple[str, str, str, str, str, int, Decimal]
"""(account_id, link_id, variant, day, currency, purchases_delta, revenue_delta): a purchase whose click went to a
variant of its link's A/B split, on the purchase's day (``issued_at``, UTC, as the conversion report counts it; a
reversal: the purchase's day, -1 and minus the value)."""


async def add_variant_purchases(tx: Tx, rows: Sequence[VariantPurchase]) -> None:
    """Adds ``rows`` to ``conversion_variant_day_revenue``, one row per distinct (account, link, variant, day,
    currency): the event batch and reversals call it beside :func:`add_purchases`. Revenue stays exact (decimal
    text added with Decimal on SQLite, numeric on PostgreSQL)."""
    sums: dict[tuple[str, str, str, str, str], list[Any]] = {}
    for account_id, link_id, variant, day, currency, purchases, revenue in rows:
        found = sums.setdefault((account_id, link_id, variant, day, currency), [0, Decimal(0)])
        found[0] += purchases
        found[1] += Decimal(revenue)
    sums = {k: v for k, v in sums.items() if v[0] or v[1]}
    if not sums:
        return
    table = "conversion_variant_day_revenue"
    key = (*VARIANT_DAY_KEY, "currency")
    columns = f"{', '.join(key)}, purchases, revenue"
    keys = sorted(sums)
    if dialect(tx) != "postgresql":  # SQLite, inside the writer's transaction: read, add in Python, write back
        for chunk in _chunks(keys):
            for row in await fetch_all(
                    tx, f"SELECT {columns} FROM {table} WHERE ({', '.join(key)}) IN "
                        f"(VALUES {_marks(len(key), len(chunk))})", [v for k in chunk for v in k]):
                stored = sums[tuple(row[:5])]  # type: ignore[index]
                stored[0] += int(row[5])
                stored[1] += Decimal(row[6])
        added = "purchases = excluded.purchases, revenue = excluded.revenue"
    else:
        added = _added(table, ["purchases", "revenue"])
    for chunk in _chunks(keys):
        await execute(
            tx, f"INSERT INTO {table} ({columns}) VALUES {_marks(len(key) + 2, len(chunk))} "
                f"ON CONFLICT ({', '.join(key)}) DO UPDATE SET {added}",
            [v for k in chunk for v in (*k, sums[k][0], format(sums[k][1], "f"))])


def _moves(figures: Sums) -> bool:
    """Whether adding ``figures`` changes a row (a batch writes no row only to add zero)."""
    return bool(figures[0] or figures[1] or any(figures[2]))


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

FINE_DIMENSIONS = ("day", "link_id", "utm_source", "utm_medium", "utm_campaign", "platform")
"""The dimensions of the fine rollups (an event's own UTM is read there)."""
DIMENSIONS = (*FINE_DIMENSIONS, *CLICK_DIMENSIONS)

# Not a column: whether the row's events had a click behind them (1 on a level's rows, 0 on the unattributed
# ones). A report that does not group by link asks for this beside its dimensions.
ATTRIBUTED = "attributed"


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


def _level_of(columns: Sequence[str]) -> str:
    """The coarse level holding ``columns`` (of :data:`DIMENSIONS` and :data:`ATTRIBUTED`; day aside: every
    level is per day): every one or two of the fine dimensions have one, the click dimensions those of
    :data:`CLICK_LEVELS`."""
    unknown = set(columns) - set(DIMENSIONS) - {ATTRIBUTED}
    level = ",".join(c for c in DIMENSIONS[1:] if c in columns)
    if unknown or not columns or level not in LEVELS:
        raise ValueError(f"no coarse level holds {list(columns)}")
    return level


def spans(first: str, last: str, by_day: bool, folded: str | None = None) -> list[tuple[str, str, str]]:
    """The (period, first day, last day) whose rows a report over ``first`` .. ``last`` (inclusive) sums: the
    weekly rows of the whole ISO weeks in the range and the daily rows of the days before and after them; the
    daily rows only when the report is grouped ``by_day`` or holds no whole week. With ``folded`` (the clicks'
    fold mark, :func:`click_weeks_folded`) only weeks that end before it are read from their weekly rows."""
    if by_day:
        return [(DAILY, first, last)]
    start, end = date.fromisoformat(first), date.fromisoformat(last)
    if folded is not None:
        end = min(end, date.fromisoformat(folded) - timedelta(days=1))
    weeks_from = start + timedelta(days=-start.weekday() % 7)  # the first Monday from start
    weeks_to = end - timedelta(days=(end.weekday() + 1) % 7)  # the last Sunday up to end
    end = date.fromisoformat(last)
    if weeks_to < weeks_from:
        return [(DAILY, first, last)]
    found = [(WEEKLY, weeks_from.isoformat(), (weeks_to - timedelta(days=6)).isoformat())]
    if start < weeks_from:
        found.insert(0, (DAILY, first, (weeks_from - timedelta(days=1)).isoformat()))
    if weeks_to < end:
        found.append((DAILY, (weeks_to + timedelta(days=1)).isoformat(), last))
    return found


def _level_rows(table: str, account_id: str, level: str, periods: Sequence[tuple[str, str, str]]
                ) -> tuple[str, list[str]]:
    """What to select from (``table``'s rows of ``level`` in the ``periods``: one range of its key each) and
    its parameters."""
    _own(table)
    where = "WHERE account_id = ? AND level = ? AND period = ? AND day >= ? AND day <= ?"
    if table == "conversion_level_clicks" and level in EMPTY_FROM:
        # The level's rows, the totals' rows under '', and the level's rows again under '' taken away: summed
        # per key, the '' group is the clicks no rule (or variant) sent (:data:`EMPTY_FROM`).
        counts = ", ".join(CLICK_COUNTS)
        less = ", ".join(f"-{c} AS {c}" for c in CLICK_COUNTS)
        empty = "a, '' AS b" if "," in level else "'' AS a, '' AS b"
        parts = []
        params = []
        for period in periods:
            parts += [f"SELECT day, a, b, {counts} FROM {table} {where}",
                      f"SELECT day, a, b, {counts} FROM {table} {where}",
                      f"SELECT day, {empty}, {less} FROM {table} {where}"]
            params += [account_id, level, *period, account_id, EMPTY_FROM[level], *period,
                       account_id, level, *period]
        return "(" + " UNION ALL ".join(parts) + ") AS r", params
    params = [value for period in periods for value in (account_id, level, *period)]
    if len(periods) == 1:
        return f"{table} {where}", params
    return "(" + " UNION ALL ".join([f"SELECT * FROM {table} {where}"] * len(periods)) + ") AS r", params


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


CAMPAIGN = "campaign_id"
"""Not a column: the current campaign of the row's link ('' when none), a key column of :func:`top_groups`
and of the ``only`` filter of the sums."""


def _campaign_of(link: str) -> str:
    return f"coalesce((SELECT l.campaign_id FROM links l WHERE l.id = {link}), '')"


def _level_exprs(level: str) -> dict[str, str]:
    """Each key column's expression on ``level``'s rows."""
    found = {"day": "day"}
    for column, name in zip(level.split(",") if level else [], ("a", "b"), strict=False):
        found[column] = name
    if "link_id" in found:
        found[CAMPAIGN] = _campaign_of(found["link_id"])
    return found


_FINE_EXPRS = {**{c: c for c in FINE_DIMENSIONS}, CAMPAIGN: _campaign_of("link_id")}


@dataclass(frozen=True, slots=True)
class Only:
    """The groups a report shows (:func:`top_groups`): the sums are read for these keys only."""

    columns: tuple[str, ...]  # of DIMENSIONS and CAMPAIGN
    keys: tuple[tuple[str, ...], ...]


def _restricted(source: str, params: list[Any], exprs: dict[str, str], only: Only | None) -> tuple[str, list[Any]]:
    """``source`` (a table with its WHERE clause, or a subquery ``AS r``) narrowed to ``only``'s keys."""
    if only is None:
        return source, params
    if not only.keys:
        return f"{source}{' WHERE' if source.endswith(' AS r') else ' AND'} 1 = 0", params
    tuple_of = ", ".join(exprs[c] for c in only.columns)
    one = "(" + ", ".join("?" * len(only.columns)) + ")"
    return (f"{source}{' WHERE' if source.endswith(' AS r') else ' AND'} ({tuple_of}) IN "
            f"(VALUES {', '.join([one] * len(only.keys))})", [*params, *(v for key in only.keys for v in key)])


async def clicks_by(conn: Conn, account_id: str, first: str, last: str, columns: Sequence[str],
                    only: Only | None = None) -> list[ClickSum]:
    """Click counts summed per distinct ``columns`` (of :data:`DIMENSIONS`) over the account's days ``first``
    to ``last`` (inclusive); of ``only``'s groups when given."""
    width = len(columns)
    level = _level_of(columns)
    sums = ", ".join(f"sum({c})" for c in CLICK_COUNTS)
    select, group = _level_select(columns, level)
    folded = await click_weeks_folded(conn)  # before the rows: the mark only moves on
    source, params = _level_rows("conversion_level_clicks", account_id, level,
                                 spans(first, last, "day" in columns, folded))
    source, params = _restricted(source, params, _level_exprs(level), only)
    rows = await fetch_all(conn, f"SELECT {select}, {sums} FROM {source}{group}", params)
    return [ClickSum(tuple(row[:width]), tuple(int(n) for n in tuple(row)[width:])) for row in rows
            if row[width] is not None and int(row[width]) + int(row[width + 1]) > 0]  # a '' group of no click


async def events_by(conn: Conn, account_id: str, first: str, last: str, columns: Sequence[str],
                    own_utm: bool = False, only: Only | None = None) -> list[EventSum]:
    """Events summed per distinct ``columns`` and type; the unattributed have link_id '' (or attributed 0).
    Their UTM is the click's (the coarse level); with ``own_utm``, the event's own (the fine rollups). The
    attributed ones of ``only``'s groups when given."""
    width = len(columns)
    if own_utm:
        select, group, source, params = _fine_rows("conversion_events", account_id, first, last, columns)
        narrowed, narrowed_params = _restricted(f"{source} AND link_id <> ''", params, _FINE_EXPRS, only)
        found = [EventSum(tuple(row[:width]), row[width], int(row[width + 1])) for row in await fetch_all(
            conn, f"SELECT {select}, type, sum(events) FROM {narrowed}{group}, type", narrowed_params)]
        rows = await fetch_all(conn, f"SELECT type, sum(events) FROM {source} AND link_id = '' GROUP BY type",
                               params)
    else:
        level = _level_of(columns)
        periods = spans(first, last, "day" in columns)
        select, group = _level_select(columns, level)
        source, params = _level_rows("conversion_level_events", account_id, level, periods)
        source, params = _restricted(source, params, _level_exprs(level), only)
        found = [EventSum(tuple(row[:width]), row[width], int(row[width + 1])) for row in await fetch_all(
            conn, f"SELECT {select}, type, sum(events) FROM {source}{group + ', type' if group else ' GROUP BY type'}",
            params)]
        source, params = _level_rows("conversion_level_events", account_id, UNATTRIBUTED, periods)
        rows = await fetch_all(conn, f"SELECT type, sum(events) FROM {source} GROUP BY type", params)
    none = _unattributed_dims(columns)
    found += [EventSum(none, row[0], int(row[1])) for row in rows]
    return found


def _fine_rows(table: str, account_id: str, first: str, last: str, columns: Sequence[str]
               ) -> tuple[str, str, str, list[str]]:
    """The select list, GROUP BY list, source (ending in a WHERE clause to add to) and parameters reading
    ``columns`` from a fine rollup's rows (the event's own UTM) of the account's days ``first`` .. ``last``."""
    _own(table)
    unknown = set(columns) - set(FINE_DIMENSIONS) - {ATTRIBUTED}
    if unknown or not columns:
        raise ValueError(f"no fine rollup holds {list(columns)}")
    select = ", ".join("1" if c == ATTRIBUTED else c for c in columns)
    group = ", ".join(c for c in columns if c != ATTRIBUTED)
    return (select, f" GROUP BY {group}" if group else " GROUP BY 1",
            f"{table} WHERE account_id = ? AND day >= ? AND day <= ?", [account_id, first, last])


async def revenue_by(conn: Conn, account_id: str, first: str, last: str, columns: Sequence[str],
                     own_utm: bool = False, only: Only | None = None) -> list[RevenueSum]:
    """Purchases, revenue and the delay histogram per distinct ``columns`` and currency, the UTM the click's or
    with ``own_utm`` the event's own (as :func:`events_by`). Revenue is added
    exactly: by PostgreSQL (numeric), or here with Decimal from SQLite's decimal text (which SQL would add as
    REAL), the amounts of a group joined by commas."""
    width = len(columns)
    revenue = "sum(revenue)::text" if dialect(conn) == "postgresql" else "group_concat(revenue, ',')"

    def sums(found: list[Row], dims: tuple[Any, ...] | None = None) -> list[RevenueSum]:
        at = 0 if dims is not None else width
        return [RevenueSum(dims if dims is not None else tuple(row[:width]), row[at], int(row[at + 1]),
                           _exact_sum(row[at + 2]), tuple(int(n or 0) for n in tuple(row)[at + 3:]))
                for row in found]

    if own_utm:
        pg = dialect(conn) == "postgresql"
        buckets = ", ".join(f"sum((delays->>{i})::bigint)" if pg else f"sum(json_extract(delays, '$[{i}]'))"
                            for i in range(len(BUCKETS)))
        select, group, source, params = _fine_rows("conversion_revenue", account_id, first, last, columns)
        narrowed, narrowed_params = _restricted(f"{source} AND link_id <> ''", params, _FINE_EXPRS, only)
        found = sums(await fetch_all(
            conn, f"SELECT {select}, currency, sum(purchases), {revenue}, {buckets} FROM {narrowed}"
                  f"{group}, currency", narrowed_params))
        return found + sums(await fetch_all(
            conn, f"SELECT currency, sum(purchases), {revenue}, {buckets} FROM {source} AND link_id = '' "
                  "GROUP BY currency", params), _unattributed_dims(columns))
    level = _level_of(columns)
    periods = spans(first, last, "day" in columns)
    buckets = ", ".join(f"sum({c})" for c in DELAY_COLUMNS)
    select, group = _level_select(columns, level)
    source, params = _level_rows("conversion_level_revenue", account_id, level, periods)
    source, params = _restricted(source, params, _level_exprs(level), only)
    found = sums(await fetch_all(
        conn, f"SELECT {select}, currency, sum(purchases), {revenue}, {buckets} FROM {source}"
              f"{group + ', currency' if group else ' GROUP BY currency'}", params))
    source, params = _level_rows("conversion_level_revenue", account_id, UNATTRIBUTED, periods)
    return found + sums(await fetch_all(
        conn, f"SELECT currency, sum(purchases), {revenue}, {buckets} FROM {source} GROUP BY currency", params),
        _unattributed_dims(columns))


async def top_groups(conn: Conn, account_id: str, first: str, last: str, columns: Sequence[str], limit: int,
                     own_utm: bool = False) -> tuple[list[tuple[str, ...]], int]:
    """The first ``limit`` groups of distinct ``columns`` (of :data:`DIMENSIONS` and :data:`CAMPAIGN`) over the
    account's days, in the report's order (most purchases not reversed, then most human clicks, then the key),
    and how many groups there are in all: one statement over the rollups the report reads, so that however many
    distinct values the free-text dimensions hold, what comes back is ``limit`` keys. Events are attributed
    ones; their UTM is the click's, or the event's own with ``own_utm``."""
    width = len(columns)
    level = _level_of(["link_id" if c == CAMPAIGN else c for c in columns])
    periods = spans(first, last, "day" in columns)
    click_periods = spans(first, last, "day" in columns, await click_weeks_folded(conn))
    keys = [f"k{i}" for i in range(width)]
    parts: list[str] = []
    params: list[Any] = []
    exprs = _level_exprs(level)
    # c: whether a group has a row (a click, an event, a purchase). The clicks no rule or variant sent are read
    # as a difference (EMPTY_FROM), which may be a group of none.
    for table, figures in (("conversion_level_clicks", "0 AS p, human AS h, human + bot AS c"),
                           ("conversion_level_events", "0, 0, 1"), ("conversion_level_revenue", "purchases, 0, 1")):
        if own_utm and table != "conversion_level_clicks":
            fine = table.replace("_level", "")
            _own(fine)
            selected = ", ".join(f"{_FINE_EXPRS[c]}" for c in columns)
            parts.append(f"SELECT {selected}, {figures} FROM {fine} WHERE account_id = ? AND day >= ? AND day <= ? "
                         "AND link_id <> ''")
            params += [account_id, first, last]
            continue
        source, found = _level_rows(table, account_id, level,
                                    click_periods if table == "conversion_level_clicks" else periods)
        selected = ", ".join(f"{exprs[c]} AS {k}" for c, k in zip(columns, keys, strict=True))
        parts.append(f"SELECT {selected}, {figures} FROM {source}")
        params += found
    listed = ", ".join(keys)
    rows = await fetch_all(
        conn, f"SELECT {listed}, count(*) OVER () FROM ({' UNION ALL '.join(parts)}) AS u GROUP BY {listed} "
              f"HAVING sum(c) > 0 ORDER BY sum(p) DESC, sum(h) DESC, {listed} LIMIT ?", [*params, limit])
    return [tuple(str(v) for v in row[:width]) for row in rows], int(rows[0][width]) if rows else 0


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


@dataclass(frozen=True, slots=True)
class VariantClicks:
    """A variant's clicks as the rollup pass counted them (:func:`_variant_statements`)."""

    variant: str
    human: int
    bot: int
    visitors: int


@dataclass(frozen=True, slots=True)
class VariantRevenue:
    variant: str
    currency: str
    purchases: int
    revenue: Decimal


async def variant_figures(conn: Conn, account_id: str, link_id: str, first: str | None = None,
                          last: str | None = None) -> tuple[list[VariantClicks], list[VariantRevenue]]:
    """The variant report's rows of one link, for the days ``first`` to ``last`` (YYYY-MM-DD, inclusive; None:
    all time): a row per variant, and per variant and currency. Two indexed reads of the rollups' daily rows,
    never a scan of clicks or events; the revenue's daily rows are added up here (SQLite holds it as decimal
    text, which SQL's ``sum`` would add as binary floats)."""
    where, params = "account_id = ? AND link_id = ?", [account_id, link_id]
    if first is not None:
        where, params = f"{where} AND day >= ?", [*params, first]
    if last is not None:
        where, params = f"{where} AND day <= ?", [*params, last]
    clicks = await fetch_all(conn, "SELECT variant, sum(human), sum(bot), sum(visitors) FROM conversion_variant_days "
                                   f"WHERE {where} GROUP BY variant", params)
    revenue: dict[tuple[str, str], list[Any]] = {}
    for row in await fetch_all(conn, "SELECT variant, currency, purchases, revenue FROM conversion_variant_day_revenue "
                                     f"WHERE {where}", params):
        found = revenue.setdefault((str(row[0]), str(row[1])), [0, Decimal(0)])
        found[0] += int(row[2])
        found[1] += Decimal(str(row[3]))
    return ([VariantClicks(str(r[0]), int(r[1]), int(r[2]), int(r[3])) for r in clicks],
            [VariantRevenue(variant, currency, n, amount)
             for (variant, currency), (n, amount) in sorted(revenue.items())])
