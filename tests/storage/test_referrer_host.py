"""A click's referrer host (issue 34) is one definition on both stores: what the click writer stores
(storage.clicks.referrer_host, in Python) is what the clicks breakdown cuts out of the Referer in SQL, and what
migration 0032 (PostgreSQL 0017) fills for the clicks stored before it."""

from __future__ import annotations

from collections import Counter

from linksvc.seed import load_seed
from linksvc.settings import Settings
from linksvc.store import store_of
from storage import clicks as click_repo
from storage.db import MIGRATIONS_DIR, dialect, execute, fetch_all
from tests.factories import A, ids, two_accounts
from tests.storage.test_click_rollups_per_batch import _clicks

REFERERS = ["https://News.Example:8443/a?b#c", "https://user@news.example/x", "http://a.b/", "HTTP://A.B",
            "android-app://com.google.android.gm/", "no scheme", "https://", "https://host?x=1", "https://host#top",
            "ftp://u:p@Files.Example:21/", "https://ÉCOLE.Example/x", "https://[::1]:80/", "", None]


async def test_python_and_both_stores_cut_the_same_host(settings: Settings) -> None:
    db = store_of(settings)
    await db.open()
    try:
        await load_seed(db, two_accounts(), allow_private=True)
        link = ids(A)["links"]
        rows = []
        for n, row in enumerate(_clicks(len(REFERERS) * 3, seed=5)):
            referer = REFERERS[n % len(REFERERS)]
            rows.append([A, link, *row[2:8], referer, *row[9:24], click_repo.referrer_host(referer)])
        await db.write(lambda tx: click_repo.insert_clicks(tx, rows))
        expected = Counter(click_repo.referrer_host(r) for r in REFERERS for _ in range(3))
        assert expected[None] == 3 * 4 and expected["news.example"] == 6 and expected["a.b"] == 6
        assert expected["École.example"] == 3 and expected["école.example"] == 0  # ASCII letters only
        found = await click_repo.click_counts(db.reader, link, "2000-01-01", 100)
        assert {split.key: split.human + split.bot for split in found["referrer_host"].rows} == expected

        pg = dialect(db.reader) == "postgresql"
        script = (MIGRATIONS_DIR / "postgresql" / "0017_conversion_click_dimensions.sql" if pg
                  else MIGRATIONS_DIR / "0032_conversion_click_dimensions.sql").read_text(encoding="utf-8")
        fill = script[script.index("UPDATE clicks SET referrer_host"):].split(";\n")[0]

        async def refill(tx: object) -> None:
            await execute(tx, "UPDATE clicks SET referrer_host = NULL")  # type: ignore[arg-type]
            await execute(tx, fill)  # type: ignore[arg-type]
        await db.write(refill)
        stored = await fetch_all(db.reader, "SELECT referer, referrer_host FROM clicks")
        assert len(stored) == len(rows)
        assert all(row[1] == click_repo.referrer_host(row[0]) for row in stored), [tuple(r) for r in stored]
    finally:
        await db.close()
