"""The click writer's conversion rollups, summed per batch (issue 33), hold exactly what counting the same clicks
one by one gives: every fine row, every visitor counted once per key across batches, every coarse row of the 16
levels and the day's unattributed level, daily and weekly, on either store. The clicks span a week's end, so a
batch adds to two weeks; some carry no visitor, some are bots, some answers take no route."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

from linksvc.seed import load_seed
from linksvc.settings import Settings
from linksvc.store import store_of
from storage import clicks as click_repo
from storage import conversions
from storage.db import fetch_all
from tests.factories import A, B, two_accounts

DAYS = ("2026-11-22", "2026-11-23", "2026-11-24")  # a Sunday, then the next week's Monday and Tuesday
UTMS: list[dict[str, str]] = [{}, {"utm_source": "mail"}, {"utm_source": "ads", "utm_campaign": "x"},
                              {"utm_source": "mail", "utm_medium": "email", "utm_campaign": "bf"}]
ANSWERS = ("destination", "fallback", "intent", "deeplink", "play", "app_store", "landing", "broken")


def _clicks(count: int) -> list[list[Any]]:
    draw = random.Random(33)
    rows = []
    for n in range(count):
        utm = draw.choice(UTMS)
        rows.append([draw.choice((A, B)), f"link-{draw.randrange(6)}", f"t{n}",
                     f"{draw.choice(DAYS)}T10:{draw.randrange(60):02d}:00.000000Z",
                     draw.choice(("ios", "android", "web", "")),
                     int(draw.random() < 0.1), draw.choice(ANSWERS), "UA", "", json.dumps(utm), utm.get("utm_source"),
                     None, None, None, None, None, None, draw.choice((None, *(f"v{i}" for i in range(8)))), None])
    return rows


def _one_by_one(rows: list[list[Any]]) -> tuple[dict[tuple[Any, ...], list[int]], dict[tuple[Any, ...], list[int]]]:
    """The fine and coarse rows, counted click by click: the rule of docs/decisions.md, written plainly."""
    fine: dict[tuple[Any, ...], list[int]] = {}
    seen: set[tuple[Any, ...]] = set()
    for row in rows:
        utm = json.loads(row[9])
        key = (row[0], row[3][:10], row[1], utm.get("utm_source", ""), utm.get("utm_medium", ""),
               utm.get("utm_campaign", ""), row[4])
        counts = fine.setdefault(key, [0] * 6)
        if row[5]:
            counts[1] += 1
            continue
        counts[0] += 1
        if row[6] in conversions.ROUTES:
            counts[3 + conversions.ROUTES[row[6]]] += 1
        if row[17] is not None and (key, row[17]) not in seen:
            seen.add((key, row[17]))
            counts[2] += 1
    coarse: dict[tuple[Any, ...], list[int]] = {}
    for key, counts in fine.items():
        for level_key in conversions.level_keys(key):
            week = (*level_key[:2], conversions.WEEKLY, conversions.monday(level_key[3]), *level_key[4:])
            for k in (level_key, week):
                total = coarse.setdefault(k, [0] * 6)
                for i, n in enumerate(counts):
                    total[i] += n
    return fine, coarse


async def test_batched_rollups_equal_counting_click_by_click(settings: Settings) -> None:
    rows = _clicks(3_000)
    db = store_of(settings)
    await db.open()
    try:
        await load_seed(db, two_accounts(), allow_private=True)
        draw = random.Random(7)
        start = 0
        while start < len(rows):  # batches of uneven sizes, as the writer's are
            size = draw.choice((1, 2, 7, 300, 513, 1_100))
            batch = rows[start:start + size]
            await db.write(lambda tx, batch=batch: click_repo.insert_clicks(tx, batch))
            start += size
        fine, coarse = _one_by_one(rows)
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
    finally:
        await db.close()
