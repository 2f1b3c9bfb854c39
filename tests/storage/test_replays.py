"""A replay takes its range in bounded batches, resumes after a restart from where it stopped (no event taken
twice, none left out), waits while its window of deliveries is full, and reads only its own account's events.
On both stores."""

from __future__ import annotations

import copy
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from linksvc.errors import ServiceError
from linksvc.forwarding import outbox, replays
from linksvc.loyalty import service as events
from linksvc.resources.service import Resources
from linksvc.seed import load_seed
from linksvc.settings import Settings
from storage.db import AnyDatabase, Tx, execute, fetch_all, open_store
from tests.factories import A, B, two_accounts

CUSTOMERS = {A: "cust-aaaa", B: "cust-bbbb"}


def _seed() -> dict[str, Any]:
    """The two accounts, each with one enabled webhook that takes every type."""
    seed = two_accounts()
    for account in seed["accounts"]:
        webhook = copy.deepcopy(account["connections"][0])
        webhook.update(enabled=True, event_types=["*"])
        account["connections"] = [webhook]
    return seed


async def _open(settings: Settings, seeded: bool) -> AnyDatabase:
    db = open_store(settings.db_path, settings.database_url)
    await db.open()
    if seeded:
        await load_seed(db, _seed(), allow_private=True)
    return db


async def _accept(db: AnyDatabase, account_id: str, count: int) -> None:
    raws = [{"type": "page_view", "customer_id": CUSTOMERS[account_id]} for _ in range(count)]
    results = await events.ingest(db, account_id, raws, "SERVER", datetime.now(UTC), bulk=True)
    assert not any(isinstance(r, ServiceError) for r in results), results
    while await db.write(outbox.fan_out, outbox.FAN_OUT_TURN):
        pass


async def _replayed(db: AnyDatabase, replay_id: str) -> Counter[str]:
    rows = await fetch_all(db.reader, "SELECT event_id FROM deliveries WHERE replay_id = ?", (replay_id,))
    return Counter(str(r[0]) for r in rows)


async def _send_all(tx: Tx) -> None:
    """What the dispatcher would record once the receiver took them."""
    await execute(tx, "UPDATE deliveries SET state = 'delivered' WHERE state = 'pending'")


async def test_a_replay_resumes_after_a_restart_and_takes_each_event_once(
        settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replays, "BATCH", 3)
    monkeypatch.setattr(replays, "WINDOW", 4)
    db = await _open(settings, seeded=True)
    start = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
    await _accept(db, A, 8)
    await _accept(db, B, 5)
    connection = (await fetch_all(db.reader, "SELECT id FROM connections WHERE account_id = ?", (A,)))[0][0]
    theirs = {str(r[0]) for r in await fetch_all(db.reader, "SELECT id FROM events WHERE account_id = ?", (B,))}
    ours = {str(r[0]) for r in await fetch_all(db.reader, "SELECT id FROM events WHERE account_id = ?", (A,))}
    made = await replays.create(db, Resources(db, True), A, connection, start,
                                (datetime.now(UTC) + timedelta(minutes=1)).isoformat())
    assert (made["state"], made["events_total"]) == ("queued", 8)

    assert await db.write(replays.step, replays.REPLAY_TURN)  # the first batch: more to take
    assert sum((await _replayed(db, made["id"])).values()) == 3
    # Its window is not full yet (3 of 4 waiting): a second batch; then it is, and nothing more is taken.
    await db.write(replays.step, replays.REPLAY_TURN)
    await db.write(replays.step, replays.REPLAY_TURN)
    assert sum((await _replayed(db, made["id"])).values()) == 6
    await db.close()

    db = await _open(settings, seeded=False)  # a restart: the replay goes on from its cursor
    try:
        await db.write(_send_all)
        for _ in range(10):
            await db.write(replays.step, replays.REPLAY_TURN)
            await db.write(_send_all)
        replayed = await _replayed(db, made["id"])
        assert set(replayed) == ours and set(replayed.values()) == {1}  # each event once; none of B's
        assert not set(replayed) & theirs
        done = await replays.one(db, Resources(db, True), A, connection, made["id"])
        assert (done["state"], done["events_found"], done["sent"], done["pending"], done["progress"]) == (
            "done", 8, 8, 0, 1.0)
    finally:
        await db.close()
