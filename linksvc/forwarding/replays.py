"""Replays (issue 37): a connection is sent the account's accepted events of a time range again, or for the first
time when it is newer than they are (docs/decisions.md, "Replays").

:func:`create` checks the range and writes the replay, ``queued``; the dispatcher of any worker or node then
calls :func:`step` on each pass: a batch of :data:`BATCH` events after the replay's cursor becomes ordinary
deliveries (``pending``, carrying the replay's id), through the same claim, builders, signing, retries and
outcomes as live ones, with the same vendor deduplication keys: Meta's and TikTok's ``event_id`` and GA4's and
Google Ads' order ids come from the event itself; a webhook's ``webhook-id`` is the message id the event's first
delivery to the connection had (:func:`linksvc.forwarding.outbox.message_id` when it had none). So a receiver
that deduplicates counts each event once, however many times it is replayed.

The connection's rules are applied as they are now, to each event: what they filter is counted ``skipped`` and
not sent (an event filtered when it was accepted is sent once the rules let it through). A replay takes no more
events while :data:`WINDOW` of its deliveries still wait, so that live deliveries, claimed by due time, never
queue behind a whole range. Its state, cursor and counts are in the ``replays`` table, advanced in the same
unit as the deliveries it writes: after a restart it resumes where it stopped, and no event is taken twice.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from linksvc.clock import iso, parse_iso, utcnow
from linksvc.errors import Conflict, InvalidField, NotFound
from linksvc.forwarding import outbox
from linksvc.resources.service import Resources
from linksvc.store import Store
from storage import customers as customer_repo
from storage import deliveries as delivery_repo
from storage import documents
from storage import events as event_repo
from storage import replays as repo
from storage.db import Tx
from storage.events import StoredEvent
from storage.replays import ReplayRecord

REPLAY_TURN = "linksvc:replay"
"""The serial key under which replays take their batches (every node): no batch is taken twice."""
MAX_RANGE = timedelta(days=92)
BATCH = 100
WINDOW = 200
ACTIVE_AT_ONCE = 10
SENT_STATES = ("delivered",)
SKIPPED_STATES = ("filtered", "skipped")
FAILED_STATES = ("failed", "dead")


def _moment(field: str, text: str) -> datetime:
    try:
        return parse_iso(text)
    except ValueError:
        raise InvalidField(field, "must be an ISO 8601 time, e.g. 2026-11-01T00:00:00Z (UTC when it names "
                                  "no offset)") from None


def view(replay: ReplayRecord, states: dict[str, int]) -> dict[str, Any]:
    """What the admin API shows of a replay: its counts read with its deliveries' states."""
    pending = states.get("pending", 0)
    progress = 1.0 if replay.state == "done" else (
        replay.events_found / replay.events_total if replay.events_total else 0.0)
    if replay.state != "done" and (pending or not replay.taken_all):
        progress = min(progress, 0.99)
    return {
        "id": replay.id, "connection_id": replay.connection_id, "from": replay.range_from, "to": replay.range_to,
        "state": replay.state, "events_total": replay.events_total, "events_found": replay.events_found,
        "deliveries": replay.queued, "pending": pending,
        "sent": sum(states.get(s, 0) for s in SENT_STATES),
        "skipped": replay.skipped + sum(states.get(s, 0) for s in SKIPPED_STATES),
        "failed": sum(states.get(s, 0) for s in FAILED_STATES),
        "progress": round(progress, 4), "error": replay.error, "created_at": replay.created_at,
        "updated_at": replay.updated_at, "finished_at": replay.finished_at,
    }


async def create(db: Store, resources: Resources, account_id: str, connection_id: str, start_text: str,
                 end_text: str) -> dict[str, Any]:
    """A replay of the account's events accepted in [``from``, ``to``) to the connection, queued. ``to`` later
    than now is now (what comes after is delivered live). 404 unless the account's connection; 400 for a range
    that is not one (from not before to, from not in the past, longer than :data:`MAX_RANGE`); 409 for a
    disabled or ``s3_export`` connection, or one that has a replay queued or running."""
    connection = await resources.get(account_id, "connections", connection_id)
    start, end = _moment("from", start_text), _moment("to", end_text)
    now = utcnow()
    if start >= end:
        raise InvalidField("to", "must be later than from", rule="range")
    if start >= now:
        raise InvalidField("from", "must be in the past: a replay sends events already accepted", rule="range")
    if end - start > MAX_RANGE:
        raise InvalidField("to", f"a replay covers at most {MAX_RANGE.days} days: replay a longer time in parts",
                           rule="range")
    end = min(end, now)
    if connection.get("destination") == "s3_export":
        raise Conflict("Not replayable", "s3_export connections are written by the export job, which writes "
                                         "each event once: nothing is sent to replay")
    if not connection.get("enabled", True):
        raise Conflict("Not replayable", "the connection is disabled: enable it first")
    replay_id = f"rpl_{uuid.uuid4().hex}"
    stamp = iso(now)

    async def unit(tx: Tx) -> ReplayRecord:
        running = await repo.active_of_connection(tx, account_id, connection_id)
        if running is not None:
            raise Conflict("Replay running", f"replay {running.id} of this connection is {running.state}: wait "
                                             "until it is done")
        total = await event_repo.count_received_between(tx, account_id, iso(start), iso(end))
        record = ReplayRecord(replay_id, account_id, connection_id, iso(start), iso(end), "queued", total, 0, 0, 0,
                              False, None, None, None, stamp, stamp, None)
        await repo.insert(tx, record)
        return record

    record = await db.write(unit, REPLAY_TURN)
    return view(record, {})


async def of_connection(db: Store, resources: Resources, account_id: str, connection_id: str, limit: int,
                        offset: int) -> list[dict[str, Any]]:
    """The connection's replays, newest first (404 unless the account's connection)."""
    await resources.get(account_id, "connections", connection_id)
    found = await repo.of_connection(db.reader, account_id, connection_id, limit, offset)
    return [view(r, await delivery_repo.replay_states(db.reader, r.id)) for r in found]


async def one(db: Store, resources: Resources, account_id: str, connection_id: str, replay_id: str) -> dict[str, Any]:
    await resources.get(account_id, "connections", connection_id)
    found = await repo.by_id(db.reader, account_id, connection_id, replay_id)
    if found is None:
        raise NotFound("Replay not found", f"no replay with id {replay_id} of this connection")
    return view(found, await delivery_repo.replay_states(db.reader, found.id))


async def step(tx: Tx) -> bool:
    """One batch of each replay queued or running (the oldest :data:`ACTIVE_AT_ONCE`); True when one of them has
    more events to take at once. Run under :data:`REPLAY_TURN`."""
    now = iso(utcnow())
    more = False
    for replay in await repo.active(tx, ACTIVE_AT_ONCE):
        more = await _step_one(tx, replay, now) or more
    return more


async def _step_one(tx: Tx, replay: ReplayRecord, now: str) -> bool:
    document = await documents.get(tx, "connections", replay.account_id, replay.connection_id)
    if document is None or not document.body.get("enabled", True):
        why = "the connection was deleted" if document is None else "the connection was disabled"
        await repo.finish(tx, replay.id, "failed", why, now)
        return False
    pending = await delivery_repo.replay_pending(tx, replay.id)
    if replay.taken_all or pending >= WINDOW:
        if replay.taken_all and pending == 0:
            await repo.finish(tx, replay.id, "done", None, now)
        return False
    after = (replay.cursor_at, replay.cursor_id) if replay.cursor_at and replay.cursor_id else None
    events = await event_repo.received_between(tx, replay.account_id, replay.range_from, replay.range_to, after,
                                               BATCH)
    taken_all = len(events) < BATCH
    rows, skipped = await _deliveries(tx, replay, document.body, events, now)
    await delivery_repo.enqueue(tx, rows)
    cursor = (events[-1].received_at, events[-1].id) if events else None
    await repo.advance(tx, replay.id, cursor, len(events), len(rows), skipped, taken_all, now)
    if taken_all and pending == 0 and not rows:
        await repo.finish(tx, replay.id, "done", None, now)
    return not taken_all


async def _deliveries(tx: Tx, replay: ReplayRecord, connection: dict[str, Any], events: list[StoredEvent],
                      now: str) -> tuple[list[dict[str, Any]], int]:
    """The pending deliveries of these events (a reversed purchase's reversal after it) that the connection's
    rules let through now, with the deduplication keys they already have; and how many the rules filter."""
    account_id = replay.account_id
    customers: dict[str, dict[str, Any]] = {}
    wanted = {e.customer_id for e in events if e.customer_id is not None}
    if wanted:
        for found in await customer_repo.customers_with(tx, account_id, {"id": wanted}):
            customers[found.id] = found.body
    keys = await delivery_repo.message_ids(tx, account_id, replay.connection_id, [e.id for e in events])
    rows: list[dict[str, Any]] = []
    skipped = 0
    for event in events:
        stored = event.as_dict()
        customer = customers.get(event.customer_id) if event.customer_id else None
        triggers = [("event", event.effects)]
        if event.reversal is not None:
            triggers.append(("reversal", event.reversal))
        for trigger, effects in triggers:
            for row in outbox.deliveries([connection], account_id, stored, customer, trigger, effects, now):
                if row["state"] == "filtered":
                    skipped += 1
                    continue
                row["message_id"] = keys.get((event.id, trigger, row["kind"]), row["message_id"])
                # Its own order among the replay's deliveries: a live delivery never waits behind a replay's.
                row["order_key"] = f"{replay.id}:{row['order_key']}"
                row["replay_id"] = replay.id
                rows.append(row)
    return rows, skipped
