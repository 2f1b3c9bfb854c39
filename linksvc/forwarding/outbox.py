"""Writing deliveries into the outbox, in the same transaction as the event or reversal they are about.

For every enabled connection of the account, each kind the destination receives for this trigger (an
accepted event, or a reversal; webhooks also reward and tier kinds, only when the event really did that)
becomes one delivery: ``pending``, or ``filtered`` with the reason the connection's rules give (forwarding
off, a type not allowed, consent). Disabled connections get nothing. The dispatcher sends pending ones.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from linksvc.forwarding.outgoing import kinds_for
from linksvc.forwarding.rules import filter_reason
from storage import deliveries as repo
from storage.db import Conn, Tx


def delivery_id() -> str:
    """Also the ``webhook-id`` of a webhook: stable across retries, so receivers can drop duplicates."""
    return f"msg_{uuid.uuid4().hex}"


async def connections(conn: Conn, account_id: str) -> list[dict[str, Any]]:
    """The account's enabled connections, each its body."""
    return [document.body for document in await repo.connections(conn, account_id)]


def deliveries(connections: Sequence[dict[str, Any]], account_id: str, event: dict[str, Any],
               customer: dict[str, Any] | None, trigger: str, effects: dict[str, Any],
               now: str) -> list[dict[str, Any]]:
    """The deliveries of one trigger, ``pending`` or ``filtered``: ``event`` is the stored event (row fields,
    ``body`` parsed); ``effects`` what this trigger did; ``customer`` as it is after the trigger."""
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
            })
    return rows


async def enqueue_many(tx: Tx, account_id: str,
                       items: Sequence[tuple[dict[str, Any], dict[str, Any] | None, str, dict[str, Any]]],
                       now: str, enabled: Sequence[dict[str, Any]] | None = None) -> int:
    """The batch form of :func:`enqueue`: ``(event, customer, trigger, effects)`` for each, in order; the
    enabled connections read once (or as the caller holds them) and every delivery written together. Returns
    how many are pending."""
    return await enqueue_each(tx, account_id, [(*item, now) for item in items], enabled)


async def enqueue_each(tx: Tx, account_id: str,
                       items: Sequence[tuple[dict[str, Any], dict[str, Any] | None, str, dict[str, Any], str]],
                       enabled: Sequence[dict[str, Any]] | None = None) -> int:
    """:func:`enqueue_many` with each trigger's own time: ``(event, customer, trigger, effects, now)``."""
    if not items:
        return 0
    if enabled is None:
        enabled = await connections(tx, account_id)
    rows = [row for event, customer, trigger, effects, now in items
            for row in deliveries(enabled, account_id, event, customer, trigger, effects, now)]
    await repo.enqueue(tx, rows)
    return sum(1 for r in rows if r["state"] == "pending")


async def enqueue(tx: Tx, account_id: str, event: dict[str, Any], customer: dict[str, Any] | None, trigger: str,
                  effects: dict[str, Any], now: str) -> int:
    """``event`` is the stored event (row fields, ``body`` parsed); ``effects`` what this trigger did.
    Returns how many deliveries are pending."""
    return await enqueue_many(tx, account_id, [(event, customer, trigger, effects)], now)
