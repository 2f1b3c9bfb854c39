"""The clicks' conversion rollups, counted by the pass behind the mark (issue 33), hold exactly what counting the
same clicks one by one gives: every fine row, every visitor counted once per key across passes, every coarse row
of the 16 levels of the fine dimensions, the 7 of the click's country, referrer host, rule and variant (issue 34:
a new visitor under the dimensions of their first click) and the day's unattributed level, daily and weekly, on
either store; whatever the click
batches' sizes and the passes' spans, with passes that fail midway (rolled back whole: nothing counted twice),
and on SQLite when deleting a link hands its ids to the next clicks. The clicks span a week's end, so a pass
adds to two weeks; some carry no visitor, some are bots, some answers take no route."""

from __future__ import annotations

import json
import random
from collections import Counter
from functools import partial
from typing import Any

import pytest

from linksvc.reports.rollups import count_clicks
from linksvc.seed import load_seed
from linksvc.settings import Settings
from linksvc.store import Store, store_of
from storage import clicks as click_repo
from storage import conversions
from storage.db import Tx, dialect, execute, fetch_all, fetch_one
from tests.factories import A, B, ids, two_accounts

DAYS = ("2026-11-22", "2026-11-23", "2026-11-24")  # a Sunday, then the next week's Monday and Tuesday
UTMS: list[dict[str, str]] = [{}, {"utm_source": "mail"}, {"utm_source": "ads", "utm_campaign": "x"},
                              {"utm_source": "mail", "utm_medium": "email", "utm_campaign": "bf"}]
ANSWERS = ("destination", "fallback", "intent", "deeplink", "play", "app_store", "landing", "broken")
REFERERS = (None, None, "https://www.Example.com/path?q=1", "android-app://com.google.android.gm/",
            "http://user@Shop.example.org:8080/#top", "not a url")


def _clicks(count: int, seed: int = 33, links: tuple[str, ...] = tuple(f"link-{n}" for n in range(6))
            ) -> list[list[Any]]:
    draw = random.Random(seed)
    rows = []
    for n in range(count):
        utm = draw.choice(UTMS)
        referer = draw.choice(REFERERS)
        rows.append([draw.choice((A, B)), draw.choice(links), f"t{seed}-{n}",
                     f"{draw.choice(DAYS)}T10:{draw.randrange(60):02d}:00.000000Z",
                     draw.choice(("ios", "android", "web", "")),
                     int(draw.random() < 0.1), draw.choice(ANSWERS), "UA", referer, json.dumps(utm),
                     utm.get("utm_source"), None, None, None, None, None, None,
                     draw.choice((None, *(f"v{i}" for i in range(8)))), None,
                     draw.choice((None, "US", "BR")), None, None,  # country, region, city (issue 34)
                     draw.choice((None, None, "latam", "mobile")),  # the rule that matched
                     draw.choice((None, None, "A", "B", "C")),  # the variant of an A/B split
                     click_repo.referrer_host(referer)])
    return rows


def _one_by_one(rows: list[list[Any]], folded: str | None = None
                ) -> tuple[dict[tuple[Any, ...], list[int]], dict[tuple[Any, ...], list[int]]]:
    """The fine and coarse rows, counted click by click: the rule of docs/decisions.md, written plainly. Each
    fine key's counts are kept apart per click dimensions (country, referrer host, rule, variant), a visitor's
    under those of their first click. A day's clicks are in its week's rows when the day is before the fold
    mark ``folded`` (every day when None)."""
    by_dims: dict[tuple[Any, ...], list[int]] = {}
    seen: set[tuple[Any, ...]] = set()
    for row in rows:
        utm = json.loads(row[9])
        key = (row[0], row[3][:10], row[1], utm.get("utm_source", ""), utm.get("utm_medium", ""),
               utm.get("utm_campaign", ""), row[4])
        dims = (row[19] or "", row[24] or "", row[22] or "", row[23] or "")
        counts = by_dims.setdefault((key, dims), [0] * 6)
        if row[5]:
            counts[1] += 1
            continue
        counts[0] += 1
        if row[6] in conversions.ROUTES:
            counts[3 + conversions.ROUTES[row[6]]] += 1
        if row[17] is not None and (key, row[17]) not in seen:
            seen.add((key, row[17]))
            counts[2] += 1
    fine: dict[tuple[Any, ...], list[int]] = {}
    coarse: dict[tuple[Any, ...], list[int]] = {}
    for (key, dims), counts in by_dims.items():
        total = fine.setdefault(key, [0] * 6)
        for i, n in enumerate(counts):
            total[i] += n
        for level_key in conversions.level_keys(key, dims):
            if level_key[1] in conversions.EMPTY_FROM and level_key[5 if "," in level_key[1] else 4] == "":
                continue  # the clicks no rule or variant sent: not kept, read as a difference
            week = (*level_key[:2], conversions.WEEKLY, conversions.monday(level_key[3]), *level_key[4:])
            for k in (level_key, week) if folded is None or level_key[3] < folded else (level_key,):
                total = coarse.setdefault(k, [0] * 6)
                for i, n in enumerate(counts):
                    total[i] += n
    return fine, coarse


async def _assert_counted(db: Store, rows: list[list[Any]]) -> None:
    """``rows`` counted as the pass should have: in the order of their ids when they are all stored (nodes commit
    their batches in any order; a visitor's first click is the one of the smallest id), else as given."""
    ids = {row[0]: int(row[1]) for row in await fetch_all(db.reader, "SELECT tracking_id, id FROM clicks")}
    if all(row[2] in ids for row in rows):
        rows = sorted(rows, key=lambda row: ids[row[2]])
    fine, coarse = _one_by_one(rows, await conversions.click_weeks_folded(db.reader))
    stored_fine = await fetch_all(db.reader, f"SELECT {', '.join(conversions.KEY)}, "
                                             f"{', '.join(conversions.CLICK_COUNTS)} FROM conversion_clicks")
    assert {tuple(r[:7]): [int(n) for n in r[7:]] for r in stored_fine} == fine
    stored = await fetch_all(db.reader, f"SELECT {', '.join(conversions.LEVEL_KEY)}, "
                                        f"{', '.join(conversions.CLICK_COUNTS)} FROM conversion_level_clicks")
    assert {tuple(r[:6]): [int(n) for n in r[6:]] for r in stored} == coarse
    levels = Counter(r[1] for r in stored if r[2] == conversions.DAILY)
    assert set(levels) == set(conversions.LEVELS)
    visitors = await fetch_all(db.reader, "SELECT count(*) FROM conversion_visitors")
    assert int(visitors[0][0]) == sum(counts[2] for counts in fine.values())
    # The variant report's rollups (issue 34): per account, link, variant and day, human and bot clicks; the
    # distinct visitors of the human ones per account, link and variant (each on one of its days); clicks without
    # a variant add nothing.
    variants: dict[tuple[Any, ...], list[int]] = {}
    days: dict[tuple[Any, ...], list[int]] = {}
    met: set[tuple[Any, ...]] = set()
    for row in rows:
        if row[23] is None:
            continue
        key = (row[0], row[1], row[23])
        counts = variants.setdefault(key, [0, 0, 0])
        counts[1 if row[5] else 0] += 1
        days.setdefault((*key, row[3][:10]), [0, 0])[1 if row[5] else 0] += 1
        if not row[5] and row[17] is not None and (key, row[17]) not in met:
            met.add((key, row[17]))
            counts[2] += 1
    stored_days = await fetch_all(db.reader, "SELECT account_id, link_id, variant, day, human, bot, visitors "
                                             "FROM conversion_variant_days")
    assert {tuple(r[:4]): [int(r[4]), int(r[5])] for r in stored_days} == days
    stored_variants: dict[tuple[Any, ...], list[int]] = {}
    for r in stored_days:
        total = stored_variants.setdefault(tuple(r[:3]), [0, 0, 0])
        for i, n in enumerate(r[4:]):
            total[i] += int(n)
    assert stored_variants == variants


class Refused(Exception):
    """What a pass that fails after writing its rows raises (a store error, a crash midway)."""


async def _pass_then_fail(tx: Tx, upto: int, limit: int) -> None:
    await conversions.roll_up_clicks(tx, upto, limit)
    raise Refused()


async def test_the_pass_counts_what_counting_click_by_click_gives(settings: Settings) -> None:
    rows = _clicks(3_000)
    db = store_of(settings)
    await db.open()
    try:
        await load_seed(db, two_accounts(), allow_private=True)
        draw = random.Random(7)
        start = 0
        while start < len(rows):  # batches of uneven sizes, as the writer's are, and passes now and then
            size = draw.choice((1, 2, 7, 300, 513, 1_100))
            batch = rows[start:start + size]
            await db.write(lambda tx, batch=batch: click_repo.insert_clicks(tx, batch))
            start += size
            choice = draw.random()
            if choice < 0.3:  # a pass over what is stored, in units of uneven sizes
                upto = await db.write(conversions.click_horizon)
                limit = draw.choice((1, 50, 700, 5_000))
                while (await db.write(partial(conversions.roll_up_clicks, upto=upto, limit=limit)))[1]:
                    pass
            elif choice < 0.45:  # a pass that fails after writing its rows: rolled back whole
                upto = await db.write(conversions.click_horizon)
                with pytest.raises(Refused):
                    await db.write(partial(_pass_then_fail, upto=upto, limit=draw.choice((10, 5_000))))
        await count_clicks(db)
        await _assert_counted(db, rows)
        assert await count_clicks(db) == 0  # nothing is counted twice
        await _assert_counted(db, rows)
    finally:
        await db.close()


async def test_clicks_after_a_deleted_links_last_clicks_are_counted(settings: Settings) -> None:
    """On SQLite a new click takes the largest id left plus one: the ids of a deleted link's last clicks, which
    the mark had passed, are handed out again, and the mark goes back for them."""
    db = store_of(settings)
    await db.open()
    try:
        await load_seed(db, two_accounts(), allow_private=True)
        link = ids(A)["links"]
        first = _clicks(200, seed=1)
        last = [[A, link, *row[2:]] for row in _clicks(50, seed=2)]  # the last stored clicks, on a real link
        for batch in (first, last):
            await db.write(lambda tx, batch=batch: click_repo.insert_clicks(tx, batch))
        await count_clicks(db)
        before = await fetch_one(db.reader, "SELECT max(id) FROM clicks")
        await db.write(lambda tx: execute(tx, "DELETE FROM links WHERE id = ?", (link,)))
        after = _clicks(120, seed=3)
        await db.write(lambda tx: click_repo.insert_clicks(tx, after))
        reused = await fetch_one(db.reader, "SELECT min(id) FROM clicks WHERE tracking_id LIKE 't3-%'")
        assert before is not None and reused is not None
        if dialect(db.reader) == "sqlite":
            assert int(reused[0]) <= int(before[0])  # the ids came round again
        assert await count_clicks(db) == len(after)
        await _assert_counted(db, first + last + after)  # the deleted link's clicks were counted before
    finally:
        await db.close()


async def test_finished_days_are_folded_into_their_weeks_once(settings: Settings) -> None:
    """A pass adds a click to its day's row; the days before the newest click counted are added to their weeks
    once (the fold mark moves to that day), and a click of a folded day counted later goes to both. A report over
    weeks folded, half folded and not folded sums every click once, by day or not."""
    db = store_of(settings)
    await db.open()
    try:
        await load_seed(db, two_accounts(), allow_private=True)
        days = ("2026-11-13", "2026-11-16", "2026-11-22", "2026-11-23", "2026-11-25")  # Fri, Mon, Sun, Mon, Wed
        rows: list[list[Any]] = []
        for n, day in enumerate(days):
            batch = [[*row[:3], f"{day}{row[3][10:]}", *row[4:]] for row in _clicks(40, seed=100 + n)]
            await db.write(lambda tx, batch=batch: click_repo.insert_clicks(tx, batch))
            rows += batch
            await count_clicks(db)
            if n == 0:
                assert await conversions.click_weeks_folded(db.reader) == day  # a new store: nothing to fold
            else:  # every day before the newest counted is in its week
                assert await conversions.click_weeks_folded(db.reader) == day
                await _assert_counted(db, rows)
        late = [[*row[:3], f"{days[1]}{row[3][10:]}", *row[4:]] for row in _clicks(25, seed=200)]
        await db.write(lambda tx: click_repo.insert_clicks(tx, late))
        await count_clicks(db)
        assert await conversions.click_weeks_folded(db.reader) == days[-1]
        await _assert_counted(db, rows + late)
        everything = rows + late
        for first, last in (("2026-11-09", "2026-11-29"), ("2026-11-14", "2026-11-25"), ("2026-11-16", "2026-11-22"),
                            ("2026-11-23", "2026-11-29")):
            for by_day in (False, True):
                columns = ["day", "link_id"] if by_day else ["link_id"]
                found = Counter[tuple[str, ...]]()
                for account in (A, B):
                    for item in await conversions.clicks_by(db.reader, account, first, last, columns):
                        found[(account, *item.dims)] += item.counts[0] + item.counts[1]
                expected = Counter[tuple[str, ...]]()
                for row in everything:
                    if first <= row[3][:10] <= last:
                        expected[(row[0], *((row[3][:10],) if by_day else ()), row[1])] += 1
                assert found == expected, (first, last, by_day)
    finally:
        await db.close()
