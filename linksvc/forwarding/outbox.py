"""The outbox: an accepted event or reversal is written once, whatever the number of connections, and fanned
out into its deliveries by the dispatcher (issue 33; docs/decisions.md, "Fan-out").

With the event (or the reversal), in its unit of work, :func:`enqueue_many` writes one ``fanout`` row naming
it, when the account has an enabled connection that the outbox serves (not only ``s3_export`` ones, which the
export job serves). :func:`fan_out` takes those rows in their order and, for every enabled connection of the
account, each kind the destination receives for this trigger (an accepted event, or a reversal; webhooks also
reward and tier kinds, only when the event or reversal really did that: the stored event's ``effects`` and
``reversal`` say) becomes one delivery: ``pending``, or ``filtered`` with the reason the connection's rules
give (forwarding off, a type not allowed, consent). Disabled connections get nothing. The rules are applied
to the connections and customer as they are at the fan-out, a moment after the event (the dispatcher checks
them again before each send anyway). The dispatcher sends pending deliveries.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from typing import Any

from linksvc.forwarding.outgoing import kinds_for
from linksvc.forwarding.rules import filter_reason
from storage import customers as customer_repo
from storage import deliveries as repo
from storage import events as event_repo
from storage.db import Conn, Tx

FAN_OUT_TURN = "linksvc:fanout"
"""The serial key under which units that fan out take turns (every node): deliveries follow the rows' order."""
FAN_OUT_BATCH = 500


def delivery_id() -> str:
    """The delivery's own id, in the admin API (before issue 37 also its ``webhook-id``)."""
    return f"msg_{uuid.uuid4().hex}"


def message_id(account_id: str, connection_id: str, event_id: str, trigger: str, kind: str) -> str:
    """The ``webhook-id`` of a webhook: derived from what the message is, not drawn per delivery, so that retries
    and replays of one (connection, event, trigger, kind) carry the same one and receivers drop the repeats."""
    digest = hashlib.sha256("\x1f".join((account_id, connection_id, event_id, trigger, kind)).encode()).hexdigest()
    return f"msg_{digest[:32]}"


async def connections(conn: Conn, account_id: str) -> list[dict[str, Any]]:
    """The account's enabled connections, each its body."""
    return [document.body for document in await repo.connections(conn, account_id)]


def served(connections: Sequence[dict[str, Any]]) -> bool:
    """Whether any of these enabled connections receives deliveries (an ``s3_export`` one reads the event log
    itself)."""
    return any(c.get("destination") != "s3_export" for c in connections)


def deliveries(connections: Sequence[dict[str, Any]], account_id: str, event: dict[str, Any],
               customer: dict[str, Any] | None, trigger: str, effects: dict[str, Any],
               now: str) -> list[dict[str, Any]]:
    """The deliveries of one trigger, ``pending`` or ``filtered``: ``event`` is the stored event (row fields,
    ``body`` parsed); ``effects`` what this trigger did; ``customer`` as it is now."""
    rows = []
    for connection in connections:
        for kind in kinds_for(connection["destination"], trigger, effects):
            reason = filter_reason(connection, kind, event, customer)
            rows.append({
                "id": delivery_id(), "account_id": account_id, "connection_id": connection["id"],
                "destination": connection["destination"], "event_id": event["id"], "trigger": trigger,
                "kind": kind, "order_key": event.get("customer_id") or event["id"],
                "state": "filtered" if reason else "pending", "reason": reason, "next_attempt_at": now,
                "created_at": now, "updated_at": now,
                "message_id": message_id(account_id, connection["id"], event["id"], trigger, kind),
            })
    return rows


async def enqueue_many(tx: Tx, account_id: str,
                       items: Sequence[tuple[dict[str, Any], dict[str, Any] | None, str, dict[str, Any]]],
                       now: str, enabled: Sequence[dict[str, Any]] | None = None) -> int:
    """The batch form of :func:`enqueue`: ``(event, customer, trigger, effects)`` for each, in order (only the
    event's id and the trigger are kept: the fan-out reads the rest as stored). Returns how many rows were
    written (one per item, or none when no enabled connection receives deliveries)."""
    return await enqueue_each(tx, account_id, [(event["id"], trigger, now) for event, _, trigger, _ in items],
                              enabled)


async def enqueue_each(tx: Tx, account_id: str, items: Sequence[tuple[str, str, str]],
                       enabled: Sequence[dict[str, Any]] | None = None) -> int:
    """``(event_id, trigger, now)`` of each event or reversal, in order: one row each, whatever the number of
    connections. ``enabled`` are the account's enabled connections as the caller holds them (else read here),
    only to know whether any receives deliveries."""
    if not items:
        return 0
    if enabled is None:
        enabled = await connections(tx, account_id)
    if not served(enabled):
        return 0
    await repo.add_fanout(tx, [(account_id, event_id, trigger, now) for event_id, trigger, now in items])
    return len(items)


async def enqueue(tx: Tx, account_id: str, event: dict[str, Any], customer: dict[str, Any] | None, trigger: str,
                  effects: dict[str, Any], now: str) -> int:
    """``event`` is the stored event (row fields, ``body`` parsed); ``effects`` what this trigger did."""
    return await enqueue_many(tx, account_id, [(event, customer, trigger, effects)], now)


async def fan_out(tx: Tx, account_id: str | None = None, limit: int = FAN_OUT_BATCH) -> int:
    """Takes the first ``limit`` waiting events and reversals (of the account, when given) and writes their
    deliveries, in their order; how many were taken. Run under :data:`FAN_OUT_TURN`
    (``Store.write(..., FAN_OUT_TURN)``), so that units fanning out on several workers or nodes take turns."""
    taken = await repo.take_fanout(tx, limit, account_id)
    if not taken:
        return 0
    stored = await event_repo.by_ids(tx, [row.event_id for row in taken])
    accounts = dict.fromkeys(row.account_id for row in taken)
    enabled = {a: await connections(tx, a) for a in accounts}
    customers: dict[tuple[str, str], dict[str, Any]] = {}
    for a in accounts:
        ids = {e.customer_id for e in stored.values() if e.account_id == a and e.customer_id is not None}
        if ids and served(enabled[a]):
            for found in await customer_repo.customers_with(tx, a, {"id": ids}):
                customers[a, found.id] = found.body
    rows: list[dict[str, Any]] = []
    for row in taken:
        event = stored.get(row.event_id)
        if event is None or event.account_id != row.account_id:  # deleted with its account meanwhile
            continue
        effects = (event.reversal or {}) if row.trigger == "reversal" else event.effects
        customer = customers.get((row.account_id, event.customer_id)) if event.customer_id else None
        rows += deliveries(enabled[row.account_id], row.account_id, event.as_dict(), customer, row.trigger,
                           effects, row.created_at)
    await repo.enqueue(tx, rows)
    return len(taken)
