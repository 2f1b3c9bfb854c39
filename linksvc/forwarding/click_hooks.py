"""The ``link.clicked`` webhook (issue 37): each stored click sent to the webhook connections that subscribe to
clicks (``config.clicks``), one per delivery or in batches, through the outbox's deliveries, signing and retries.

Nothing is written on the click path. Each subscribed connection keeps a cursor over the stored clicks
(:mod:`storage.click_hooks`); about once a second the dispatcher (:meth:`Dispatcher._clicks`, every worker and
node) calls :func:`step`: for each subscribed connection it reads the account's clicks after the cursor up to the
clicks' horizon (:func:`storage.feed.click_horizon`: every id below it is committed) that match the connection's
filters (links, tags, bots), cuts them into deliveries (``batch_size`` clicks each; a batch that is not full waits
``batch_seconds`` for more), and writes the deliveries and the cursor's new place in one unit of work,
compare-and-set: two dispatchers that read the same clicks never both write them, a ``kill -9`` before the unit
leaves the cursor where it was (the next pass takes the clicks again), after it leaves the deliveries in the
outbox. So each click reaches a connection at least once, in one delivery, whose ``webhook-id`` is the same on
every retry. While :data:`WINDOW` of a connection's click deliveries wait to be sent (a receiver down), no more are
made for it: the clicks stay where they are, in the store, and the cursor waits.

A delivery names its clicks (``deliveries.click_ids``); its body is built when it is sent, from the clicks as
stored (:func:`click_lines`), as ``{"type": "link.clicked", "timestamp", "data": {"clicks": [...]}}``.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

import orjson

from linksvc.clock import iso, parse_iso, utcnow
from linksvc.forwarding.click_export import click_line
from linksvc.forwarding.configs import ClickWebhookSettings
from linksvc.forwarding.outbox import delivery_id
from linksvc.forwarding.webhook import LINK_CLICKED
from linksvc.store import Store
from storage import click_hooks as repo
from storage import deliveries as delivery_repo
from storage import feed as feed_repo
from storage.click_exports import StoredClick
from storage.db import Conn, Tx

log = logging.getLogger("linksvc.forwarding")

TRIGGER = "click"
WINDOW = 200
"""A connection's click deliveries waiting to be sent at most: no more are made for it while that many wait."""
READ = 1000
"""Clicks read for one connection in one pass at most."""
NOT_SUBSCRIBED = "the connection no longer subscribes to link.clicked"
GONE = "the clicks are gone (their link was deleted)"


def settings_of(connection: dict[str, Any]) -> ClickWebhookSettings | None:
    """The connection's click subscription, or None: not a webhook, disabled, or no (valid) ``config.clicks``."""
    if connection.get("destination") != "webhook" or not connection.get("enabled", True):
        return None
    value = (connection.get("config") or {}).get("clicks")
    if not isinstance(value, dict):
        return None
    try:
        return ClickWebhookSettings.model_validate(value)
    except ValueError:  # stored before the rules, or by hand: not a subscription
        return None


async def start_cursor(tx: Tx, account_id: str, connection_id: str, now: str) -> None:
    """The connection sends the clicks stored from now on: its cursor at the clicks' horizon (called by the
    connection's save when it starts subscribing: created so, ``clicks`` set, or enabled again)."""
    await repo.start(tx, account_id, connection_id, await feed_repo.click_horizon(tx), now)


def message_id(account_id: str, connection_id: str, first: StoredClick) -> str:
    """The ``webhook-id`` of a delivery of clicks: derived from the connection and its first click (a click is in
    one delivery per connection), its time included, since SQLite may hand a deleted click's id out again."""
    key = "\x1f".join((account_id, connection_id, TRIGGER, str(first.id), first.clicked_at, LINK_CLICKED))
    return f"msg_{hashlib.sha256(key.encode()).hexdigest()[:32]}"


def batches(clicks: list[StoredClick], settings: ClickWebhookSettings, now: datetime) -> tuple[list[list[StoredClick]],
                                                                                              StoredClick | None]:
    """The clicks cut into deliveries of ``batch_size``, in id order, and the first click of a last batch that is
    not full and waits for more (None: nothing waits)."""
    size = settings.batch_size
    cut = [clicks[i:i + size] for i in range(0, len(clicks), size)]
    if cut and len(cut[-1]) < size:
        oldest = parse_iso(cut[-1][0].clicked_at)
        if now - oldest < timedelta(seconds=settings.batch_seconds):
            return cut[:-1], cut[-1][0]
    return cut, None


def deliveries(account_id: str, connection_id: str, cut: list[list[StoredClick]], now: str) -> list[dict[str, Any]]:
    rows = []
    for batch in cut:
        key = message_id(account_id, connection_id, batch[0])
        rows.append({
            "id": delivery_id(), "account_id": account_id, "connection_id": connection_id, "destination": "webhook",
            "event_id": batch[0].tracking_id, "trigger": TRIGGER, "kind": LINK_CLICKED, "order_key": key,
            "state": "pending", "reason": None, "next_attempt_at": now, "created_at": now, "updated_at": now,
            "message_id": key, "click_ids": orjson.dumps([c.id for c in batch]).decode(),
        })
    return rows


@dataclass(frozen=True, slots=True)
class Taken:
    """What one pass over one connection found: the deliveries to write and where the cursor goes."""

    cursor: repo.HookCursor
    new_id: int
    rows: list[dict[str, Any]]


async def _take(conn: Conn, cursor: repo.HookCursor, settings: ClickWebhookSettings, horizon: int,
                now: datetime) -> Taken | None:
    if await delivery_repo.clicks_pending(conn, cursor.connection_id, WINDOW) >= WINDOW:
        return None  # the receiver lags: the clicks wait in the store
    found, looked_to = await repo.matching(conn, cursor.account_id, cursor.last_id, horizon, settings.link_ids,
                                           settings.tags, settings.bots, READ)
    cut, waiting = batches(found, settings, now)
    new_id = looked_to if waiting is None else waiting.id - 1
    if new_id <= cursor.last_id:
        return None
    return Taken(cursor, new_id, deliveries(cursor.account_id, cursor.connection_id, cut, iso(now)))


async def _write(tx: Tx, taken: Taken, now: str) -> int:
    if not await repo.advance(tx, taken.cursor.connection_id, taken.cursor.last_id, taken.new_id, now):
        return 0  # another dispatcher wrote these first
    await delivery_repo.enqueue(tx, taken.rows)
    return len(taken.rows)


async def step(db: Store, now: datetime | None = None) -> int:
    """One pass over every subscribed connection (see the module's docstring); how many deliveries were made."""
    now = now or utcnow()
    subscribed = [(doc, found) for doc in await repo.webhook_connections(db.reader)
                  if (found := settings_of(doc.body)) is not None]
    if not subscribed:
        return 0
    conn = db.background
    known = await repo.cursors(conn, [doc.id for doc, _ in subscribed])
    horizon = await feed_repo.click_horizon(conn)
    made = 0
    for doc, settings in subscribed:
        cursor = known.get(doc.id)
        if cursor is None or cursor.account_id != doc.account_id:  # saved before its cursor could be (or moved)
            await db.write(partial(start_cursor, account_id=doc.account_id, connection_id=doc.id, now=iso(now)))
            continue
        taken = await _take(conn, cursor, settings, horizon, now)
        if taken is not None:
            made += await db.write(partial(_write, taken=taken, now=iso(now)))
    return made


def click_lines(clicks: list[StoredClick]) -> list[dict[str, Any]]:
    """The clicks as a ``link.clicked`` webhook carries them: the clicks export's lines
    (:func:`linksvc.forwarding.click_export.click_line`)."""
    return [click_line(click) for click in clicks]


async def clicks_of(conn: Conn, account_id: str, click_ids: str | None) -> list[StoredClick]:
    """The stored clicks a delivery names (those still stored)."""
    return await repo.clicks_by_ids(conn, account_id, repo.decode_ids(click_ids))

