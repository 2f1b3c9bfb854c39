"""Clicks: batch inserts, the per-link counts the admin API shows, and a click by its tracking_id."""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from storage.db import Conn, Tx, dialect, execute, fetch_all, fetch_one, json_member

OWNS = ("clicks", "click_journals", "link_human_clicks")

COLUMNS = ("account_id", "link_id", "tracking_id", "clicked_at", "platform", "bot", "answer", "user_agent",
           "referer", "utm", "utm_source", "browser_family", "browser_version", "os_family", "os_version",
           "device_brand", "device_model", "visitor", "utm_origin", "country", "region", "city", "rule",
           "variant", "referrer_host")


def referrer_host(referer: str | None) -> str | None:
    """The host of a stored ``Referer`` as the clicks breakdown cuts it in SQL (:func:`_referrer_hosts`), step
    by step alike: after ``://`` (None without it), before ``/``, ``?``, ``#``, after a user's ``@``, before a
    port's ``:``, its ASCII letters in lower case (as both stores' ``lower`` does on this text); None when nothing
    is left. Stored with the click (``referrer_host``, SQLite 0032, PostgreSQL 0017), so that the conversion
    rollups' pass groups by a column, never by text cut per click."""
    if not referer:
        return None
    _, sep, rest = referer.partition("://")
    if not sep:
        return None
    host = rest.partition("/")[0].partition("?")[0].partition("#")[0]
    if "@" in host:
        host = host.partition("@")[2]
    return host.partition(":")[0].translate(_ASCII_LOWER) or None


_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


@dataclass(frozen=True, slots=True)
class ClickSplit:
    """How many clicks, human and bot, share a key: ``value`` is the second part of a two-part key (a major
    version, a device model), None for one-part keys (a day, a platform, a utm_source)."""

    key: Any
    value: Any
    human: int
    bot: int


@dataclass(frozen=True, slots=True)
class ClickGroups:
    """The first groups of a breakdown, and how many groups it has in all."""

    rows: tuple[ClickSplit, ...]
    groups: int


@dataclass(frozen=True, slots=True)
class TrackedClick:
    """The latest click that carried a tracking_id, with its link's code and stored destination."""

    user_agent: str | None
    referer: str | None
    clicked_at: str
    platform: str | None
    bot: int
    link_id: str | None
    code: str | None
    destination_url: str | None


@dataclass(frozen=True, slots=True)
class AttributedClick:
    """The latest click of an account that carried a tracking_id: what an event's lineage and the conversion
    rollups take from it. ``utm_origin`` is None for clicks stored before clicks recorded it."""

    tracking_id: str
    link_id: str
    code: str | None
    campaign_id: str | None
    clicked_at: str
    platform: str
    bot: int
    answer: str
    utm: dict[str, str]
    utm_origin: dict[str, str] | None
    variant: str | None = None  # the variant of the link's A/B split the click went to (issue 34)
    country: str | None = None  # where the client was, the rule that matched and the Referer's host (issue 34)
    rule: str | None = None
    referrer_host: str | None = None


@dataclass(frozen=True, slots=True)
class ClickPlace:
    """A click's country, rule and referrer host (issue 34): what the conversion report groups by besides the
    variant; None where the click has none."""

    country: str | None
    rule: str | None
    referrer_host: str | None


ROWS_PER_STATEMENT = 1000  # 25,000 parameters: under SQLite's limit of 32,766
_ROW_MARKS = "(" + ", ".join("?" for _ in COLUMNS) + ")"


CLICK_INSERTS = "linksvc:clicks"
"""On PostgreSQL, the advisory lock every transaction storing clicks holds shared until it commits, and the
conversion rollups' horizon takes alone for a moment (``storage.conversions.click_horizon``): once it has it,
every id handed out before is committed or rolled back, so the clicks up to the largest id are all there to
count. (Ids are handed out in one order and committed in another; SQLite's one writer commits them in order.)"""


async def insert_clicks(tx: Tx, rows: Sequence[Sequence[Any]], journal: tuple[str, int] | None = None) -> None:
    """The click writer's batch: the clicks' rows, and how far the click journal they came from is stored, in
    the same commit. Nothing else: the conversion rollups count the clicks afterwards, in a pass of their own
    (``storage.conversions.roll_up_clicks``; docs/decisions.md, "Rollups behind a mark")."""
    await insert_click_rows(tx, rows)
    await count_human_clicks(tx, rows)
    if journal is not None:  # how far the click journal these rows came from is stored, in the same commit
        # PostgreSQL names the larger of two values greatest() and wants the target's column qualified.
        larger = ("greatest(click_journals.stored, excluded.stored)" if dialect(tx) == "postgresql"
                  else "max(stored, excluded.stored)")
        await execute(tx, "INSERT INTO click_journals (name, stored) VALUES (?, ?) "
                          f"ON CONFLICT (name) DO UPDATE SET stored = {larger}", journal)


async def insert_click_rows(tx: Tx, rows: Sequence[Sequence[Any]]) -> None:
    """One multi-row ``INSERT`` per thousand clicks (``COLUMNS``).

    Not ``executemany``: it hands the GIL back and forth once per row, and while the event loop is busy
    each hand-back can wait for Python's switch interval (5 ms), so a batch of 500 clicks took seconds
    and stalled the redirects it competed with. One statement binds its parameters in one call and then
    runs inside SQLite with the GIL released. On PostgreSQL the transaction first takes :data:`CLICK_INSERTS`
    shared."""
    if not rows:
        return
    if dialect(tx) == "postgresql":
        await execute(tx, "SELECT pg_advisory_xact_lock_shared(hashtextextended(?, 0))", (CLICK_INSERTS,))
    for start in range(0, len(rows), ROWS_PER_STATEMENT):
        chunk = rows[start:start + ROWS_PER_STATEMENT]
        sql = f"INSERT INTO clicks ({', '.join(COLUMNS)}) VALUES {', '.join([_ROW_MARKS] * len(chunk))}"
        await execute(tx, sql, [value for row in chunk for value in row])


_LINK_ID, _BOT = COLUMNS.index("link_id"), COLUMNS.index("bot")


async def count_human_clicks(tx: Tx, rows: Sequence[Sequence[Any]]) -> None:
    """Adds the batch's clicks by people to ``link_human_clicks``, in the batch's commit: what ``max_clicks`` is
    checked against (docs/decisions.md, "Link lifecycle and passwords (issue 34)"). One row per link of the batch,
    inserted, never updated: a click transaction held open on one node never holds up another's (a statement per
    thousand links)."""
    counts: dict[str, int] = {}
    for row in rows:
        if not row[_BOT]:
            counts[row[_LINK_ID]] = counts.get(row[_LINK_ID], 0) + 1
    ordered = list(counts.items())
    for start in range(0, len(ordered), ROWS_PER_STATEMENT):  # 2,000 parameters a statement at most
        part = ordered[start:start + ROWS_PER_STATEMENT]
        marks = ", ".join("(?, ?)" for _ in part)
        await execute(tx, f"INSERT INTO link_human_clicks (link_id, clicks) VALUES {marks}",
                      [value for pair in part for value in pair])


@dataclass(frozen=True, slots=True)
class CompactedCounts:
    """What one compaction of ``link_human_clicks`` did: the links whose rows it summed, and the rows it removed
    (the rows it read less the one per link it wrote)."""

    links: int
    rows_removed: int


async def compact_human_clicks(tx: Tx, links: int) -> CompactedCounts:
    """Sums the rows of up to ``links`` links that hold more than one row in ``link_human_clicks`` (those with the
    most rows first) into one row each, in the caller's transaction: every count (a link's sum) is the same
    before and after, and a reader sees one or the other. On PostgreSQL one statement deletes the rows it sees
    and inserts what it deleted, summed: a click batch of another node committing meanwhile adds a row of its
    own, which this statement neither saw nor deletes (so nothing is lost or counted twice, and no click writer
    waits for it: the rows it locks are committed ones, which click writers never touch). On SQLite the unit
    holds the write lock from its first read, so it reads, deletes and inserts alone."""
    if dialect(tx) == "postgresql":
        row = await fetch_one(
            tx, "WITH chosen AS (SELECT link_id FROM link_human_clicks GROUP BY link_id HAVING count(*) > 1 "
                "ORDER BY count(*) DESC, link_id LIMIT ?), "
                "gone AS (DELETE FROM link_human_clicks h USING chosen c WHERE h.link_id = c.link_id "
                "RETURNING h.link_id, h.clicks), "
                "kept AS (INSERT INTO link_human_clicks (link_id, clicks) SELECT link_id, sum(clicks) FROM gone "
                "GROUP BY link_id RETURNING link_id) "
                "SELECT (SELECT count(*) FROM kept), (SELECT count(*) FROM gone)", (links,))
        kept, gone = (int(row[0]), int(row[1])) if row is not None else (0, 0)
        return CompactedCounts(kept, gone - kept)
    found = await fetch_all(tx, "SELECT link_id, sum(clicks), count(*) FROM link_human_clicks GROUP BY link_id "
                                "HAVING count(*) > 1 ORDER BY count(*) DESC, link_id LIMIT ?", (links,))
    if not found:
        return CompactedCounts(0, 0)
    for start in range(0, len(found), ROWS_PER_STATEMENT):
        part = found[start:start + ROWS_PER_STATEMENT]
        await execute(tx, f"DELETE FROM link_human_clicks WHERE link_id IN ({', '.join('?' for _ in part)})",
                      [row[0] for row in part])
        await execute(tx, f"INSERT INTO link_human_clicks (link_id, clicks) VALUES {', '.join('(?, ?)' for _ in part)}",
                      [value for row in part for value in (row[0], int(row[1]))])
    return CompactedCounts(len(found), sum(int(row[2]) for row in found) - len(found))


async def human_clicks_of(conn: Conn, link_id: str) -> int:
    """The clicks by people stored for a link."""
    return (await human_clicks_of_links(conn, [link_id]))[link_id]


async def human_clicks_of_links(conn: Conn, link_ids: Sequence[str]) -> dict[str, int]:
    """The clicks by people stored for each of ``link_ids`` (0 for a link without any), a statement per 500."""
    found = dict.fromkeys(link_ids, 0)
    wanted = list(found)
    for start in range(0, len(wanted), 500):
        part = wanted[start:start + 500]
        marks = ", ".join("?" for _ in part)
        for row in await fetch_all(conn, "SELECT link_id, sum(clicks) FROM link_human_clicks "
                                         f"WHERE link_id IN ({marks}) GROUP BY link_id", tuple(part)):
            found[str(row[0])] = int(row[1])
    return found


async def journal_marks(conn: Conn) -> dict[str, int]:
    """How far each click journal is stored, by its file name."""
    return {row[0]: int(row[1]) for row in await fetch_all(conn, "SELECT name, stored FROM click_journals")}


async def forget_journals(tx: Tx, names: Sequence[str]) -> None:
    """The marks of journals that are gone (recovered, or closed at a clean stop)."""
    for name in names:
        await execute(tx, "DELETE FROM click_journals WHERE name = ?", (name,))


def _major(column: str, postgresql: bool = False) -> str:
    """The part of a dotted version before its first dot."""
    if postgresql:  # no instr() there; split_part gives the whole text when it has no dot, as this does
        return f"split_part({column}, '.', 1)"
    return f"CASE WHEN instr({column}, '.') > 0 THEN substr({column}, 1, instr({column}, '.') - 1) ELSE {column} END"


def _referrer_hosts(postgresql: bool) -> str:
    """The common table ``hosts (host, bot)`` of a link's clicks since a time: the host of each click's
    ``Referer`` in lower case, without user or port (NULL when it has none: no header, or no ``scheme://``),
    cut step by step so that both stores read it alike."""
    find = "strpos" if postgresql else "instr"

    def cut(step: int, char: str) -> str:
        return (f"r{step} AS (SELECT bot, CASE WHEN {find}(h, '{char}') > 0 THEN substr(h, 1, {find}(h, '{char}') - 1) "
                f"ELSE h END AS h FROM r{step - 1})")

    return ", ".join([
        f"r0 AS (SELECT bot, CASE WHEN {find}(referer, '://') > 0 THEN substr(referer, {find}(referer, '://') + 3) "
        "END AS h FROM clicks WHERE link_id = ? AND clicked_at >= ?)",
        cut(1, "/"), cut(2, "?"), cut(3, "#"),
        f"r4 AS (SELECT bot, substr(h, {find}(h, '@') + 1) AS h FROM r3)",
        cut(5, ":"),
        "hosts AS (SELECT bot, nullif(lower(h), '') AS host FROM r5)",
    ])


async def click_counts(conn: Conn, link_id: str, since: str, limit: int) -> dict[str, ClickGroups]:
    """Clicks of a link since ``since``, human and bot apart: by day and platform (every group: their number
    is bounded), and by country, referrer host, rule, variant, utm_source, browser family and major version, OS family
    and major version, browser family and OS family alone, device brand and model, and the bots' clicks alone by
    the bot's name (the user agent's browser family), values a click's sender chooses: the ``limit`` most clicked
    groups (then by key, null first), with how many groups there are in all. The store groups, orders and cuts:
    what comes back is at most ``limit`` rows per breakdown, however many distinct values the clicks carry."""
    where = "FROM clicks WHERE link_id = ? AND clicked_at >= ?"
    pg = dialect(conn) == "postgresql"
    # PostgreSQL puts NULL last where SQLite puts it first.
    nulls = " NULLS FIRST" if pg else ""

    async def groups(key: str, value: str | None, cut: bool, bots: bool = False) -> ClickGroups:
        second = value or "NULL"
        rows = await fetch_all(
            conn, f"SELECT {key} AS k, {second} AS v, sum(1 - bot), sum(bot), count(*) OVER () {where}"
                  f"{' AND bot = 1' if bots else ''} "
                  f"GROUP BY {key}{', ' + value if value else ''} ORDER BY "
                  f"{'count(*) DESC, ' if cut else ''}k{nulls}{', v' + nulls if value else ''}"
                  f"{' LIMIT ?' if cut else ''}", (link_id, since, *((limit,) if cut else ())))
        return ClickGroups(tuple(ClickSplit(row[0], row[1], int(row[2]), int(row[3])) for row in rows),
                           int(rows[0][4]) if rows else 0)

    async def referrer_hosts() -> ClickGroups:
        rows = await fetch_all(
            conn, f"WITH {_referrer_hosts(pg)} SELECT host AS k, sum(1 - bot), sum(bot), count(*) OVER () FROM hosts "
                  f"GROUP BY host ORDER BY count(*) DESC, k{nulls} LIMIT ?", (link_id, since, limit))
        return ClickGroups(tuple(ClickSplit(row[0], None, int(row[1]), int(row[2])) for row in rows),
                           int(rows[0][3]) if rows else 0)

    return {
        "day": await groups("substr(clicked_at, 1, 10)", None, False),
        "country": await groups("country", None, True),
        "referrer_host": await referrer_hosts(),
        "rule": await groups("rule", None, True),
        "variant": await groups("variant", None, True),
        "platform": await groups("platform", None, False),
        "utm_source": await groups("utm_source", None, True),
        "browser": await groups("browser_family", _major("browser_version", pg), True),
        "os": await groups("os_family", _major("os_version", pg), True),
        "device": await groups("device_brand", "device_model", True),
        "browser_family": await groups("browser_family", None, True),
        "os_family": await groups("os_family", None, True),
        "bot_name": await groups("browser_family", None, True, bots=True),
    }


async def click_by_tracking_id(conn: Conn, account_id: str, tracking_id: str) -> TrackedClick | None:
    """The latest click of the account that carried ``tracking_id``, with its link's stored destination."""
    destination = json_member(conn, "l.body", "destination_url")
    row = await fetch_one(
        conn,
        "SELECT c.user_agent, c.referer, c.clicked_at, c.platform, c.bot, c.link_id, l.code, "
        f"{destination} AS destination_url FROM clicks c "
        "LEFT JOIN links l ON l.id = c.link_id WHERE c.tracking_id = ? AND c.account_id = ? "
        "ORDER BY c.id DESC LIMIT 1",
        (tracking_id, account_id),
    )
    return None if row is None else TrackedClick(*row)


async def clicks_for_tracking_ids(conn: Conn, account_id: str,
                                  tracking_ids: Sequence[str]) -> dict[str, AttributedClick]:
    """The latest click of the account behind each of ``tracking_ids`` (those that have one), with its link's
    code and campaign: one statement whatever their number."""
    wanted = sorted(set(tracking_ids))
    if not wanted:
        return {}
    marks = ", ".join("?" for _ in wanted)
    rows = await fetch_all(
        conn,
        "SELECT c.tracking_id, c.link_id, l.code, l.campaign_id, c.clicked_at, c.platform, c.bot, c.answer, "
        "c.utm, c.utm_origin, c.variant, c.country, c.rule, c.referrer_host FROM clicks c "
        "LEFT JOIN links l ON l.id = c.link_id "
        "WHERE c.id IN (SELECT max(id) FROM clicks WHERE account_id = ? "
        f"AND tracking_id IN ({marks}) GROUP BY tracking_id)",
        (account_id, *wanted),
    )
    return {row[0]: AttributedClick(row[0], row[1], row[2], row[3], row[4], row[5], int(row[6]), row[7],
                                    _json(row[8]) or {}, _json(row[9]), row[10], row[11], row[12], row[13])
            for row in rows}


async def click_place(conn: Conn, account_id: str, tracking_id: str, clicked_at: str) -> ClickPlace | None:
    """The country, rule and referrer host of the account's click that carried ``tracking_id`` at
    ``clicked_at`` (the click an event's lineage names; the latest of them if several), None when it is gone."""
    row = await fetch_one(conn, "SELECT country, rule, referrer_host FROM clicks WHERE account_id = ? AND "
                                "tracking_id = ? AND clicked_at = ? ORDER BY id DESC LIMIT 1",
                          (account_id, tracking_id, clicked_at))
    return None if row is None else ClickPlace(row[0], row[1], row[2])


def _json(value: Any) -> Any:
    return orjson.loads(value) if value is not None else None
