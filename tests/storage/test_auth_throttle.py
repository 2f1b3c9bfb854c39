"""The throttle of credential guesses against a real store, with explicit times: the limit, the wait it
announces, kinds and addresses apart, and a table that stays small."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from linksvc.accounts.throttle import AuthThrottle
from linksvc.errors import RateLimited
from storage.db import Database, fetch_one

T0 = 1_800_000_000_000  # milliseconds
WINDOW_MS = 600_000


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = Database(str(tmp_path / "throttle.db"), "NORMAL")
    await database.open()
    yield database
    await database.close()


async def _rows(db: Database) -> int:
    row = await fetch_one(db.reader, "SELECT count(*) FROM auth_failures")
    return int(row[0]) if row else 0


async def _refusal(throttle: AuthThrottle, kind: str, client: str, at_ms: int) -> int | None:
    """The Retry-After of a refused attempt, or None when the attempt may go ahead."""
    try:
        await throttle.check(kind, client, at_ms)
    except RateLimited as refused:
        return refused.retry_after
    return None


async def test_the_limit_th_failure_closes_the_address_until_the_oldest_leaves_the_window(db: Database) -> None:
    events: list[tuple[str, str]] = []
    throttle = AuthThrottle(db, limit=3, window_seconds=600, observe=lambda event, kind: events.append((event, kind)))
    for n, at in enumerate((T0, T0 + 10_000, T0 + 20_000)):
        assert await _refusal(throttle, "admin", "203.0.113.7", at) is None
        assert await throttle.failed("admin", "203.0.113.7", at) == n + 1
    # Whole seconds until the first failure (T0) leaves: 600 s after it, rounded up.
    assert await _refusal(throttle, "admin", "203.0.113.7", T0 + 20_000) == 580
    assert await _refusal(throttle, "admin", "203.0.113.7", T0 + 599_500) == 1
    assert await _refusal(throttle, "admin", "203.0.113.7", T0 + WINDOW_MS) is None  # T0 has left
    assert events == [("failures", "admin")] * 3 + [("throttled", "admin")] * 2


async def test_kinds_and_addresses_are_counted_apart(db: Database) -> None:
    throttle = AuthThrottle(db, limit=2, window_seconds=600)
    for _ in range(2):
        await throttle.failed("api_key", "203.0.113.7", T0)
    assert await _refusal(throttle, "api_key", "203.0.113.7", T0 + 1) is not None
    assert await _refusal(throttle, "admin", "203.0.113.7", T0 + 1) is None
    assert await _refusal(throttle, "sign_in", "203.0.113.7", T0 + 1) is None
    assert await _refusal(throttle, "api_key", "203.0.113.8", T0 + 1) is None


async def test_a_write_prunes_every_address_and_caps_its_own(db: Database) -> None:
    throttle = AuthThrottle(db, limit=3, window_seconds=600)
    for n in range(50):  # an address cycling through others: each leaves one row
        await throttle.failed("sign_in", f"198.51.100.{n}", T0)
    for _ in range(10):  # concurrent failures past the limit: only the newest `limit` are kept
        await throttle.failed("sign_in", "203.0.113.7", T0 + 1000)
    assert await _rows(db) == 53
    assert await _refusal(throttle, "sign_in", "203.0.113.7", T0 + 1000) == 600
    await throttle.failed("admin", "192.0.2.1", T0 + WINDOW_MS)  # the 50 have aged out by now
    assert await _rows(db) == 4


async def test_prune_deletes_what_has_aged_out_and_writes_nothing_otherwise(db: Database) -> None:
    throttle = AuthThrottle(db, limit=30, window_seconds=600)
    assert await throttle.prune(T0) == 0
    await throttle.failed("admin", "203.0.113.7", T0)
    await throttle.failed("admin", "203.0.113.8", T0 + 5000)
    assert await throttle.prune(T0 + WINDOW_MS - 1) == 0
    assert await throttle.prune(T0 + WINDOW_MS) == 1
    assert await throttle.prune(T0 + WINDOW_MS + 5000) == 1
    assert await _rows(db) == 0


async def test_two_throttles_on_one_file_share_the_count(db: Database, tmp_path: Path) -> None:
    other = Database(str(tmp_path / "throttle.db"), "NORMAL")  # another worker process's connections
    await other.open()
    try:
        mine, theirs = AuthThrottle(db, limit=4), AuthThrottle(other, limit=4)
        for throttle in (mine, theirs, mine, theirs):
            await throttle.failed("admin", "203.0.113.7", T0)
        assert await _refusal(mine, "admin", "203.0.113.7", T0 + 1) == 600
        assert await _refusal(theirs, "admin", "203.0.113.7", T0 + 1) == 600
    finally:
        await other.close()
