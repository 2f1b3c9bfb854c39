"""Writing deliveries into the outbox, in the same transaction as the event or reversal they are about.

For every enabled connection of the account, each kind the destination receives for this trigger (an
accepted event, or a reversal; webhooks also reward and tier kinds, only when the event really did that)
becomes one delivery: ``pending``, or ``filtered`` with the reason the connection's rules give (forwarding
off, a type not allowed, consent). Disabled connections get nothing. The dispatcher sends pending ones.
"""

from __future__ import annotations

import uuid
from typing import Any

from linksvc.forwarding.outgoing import kinds_for
from linksvc.forwarding.rules import filter_reason
from storage import deliveries as repo
from storage.db import Tx


def delivery_id() -> str:
    """Also the ``webhook-id`` of a webhook: stable across retries, so receivers can drop duplicates."""
    return f"msg_{uuid.uuid4().hex}"


async def enqueue(tx: Tx, account_id: str, event: dict[str, Any], customer: dict[str, Any] | None, trigger: str,
                  effects: dict[str, Any], now: str) -> int:
    """``event`` is the stored event (row fields, ``body`` parsed); ``effects`` what this trigger did.
    Returns how many deliveries are pending."""
    rows = []
    for stored in await repo.connections(tx, account_id):
        connection = stored.body
        for kind in kinds_for(connection["destination"], trigger, effects):
            reason = filter_reason(connection, kind, event, customer)
            rows.append({
                "id": delivery_id(), "account_id": account_id, "connection_id": connection["id"],
                "destination": connection["destination"], "event_id": event["id"], "trigger": trigger,
                "kind": kind, "order_key": event.get("customer_id") or event["id"],
                "state": "filtered" if reason else "pending", "reason": reason, "next_attempt_at": now,
                "created_at": now, "updated_at": now,
            })
    await repo.enqueue(tx, rows)
    return sum(1 for r in rows if r["state"] == "pending")
