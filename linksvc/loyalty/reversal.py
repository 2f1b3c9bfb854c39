"""Reversal of a purchase (product decisions, section 9): what it issued is taken back (never below zero; the
shortfall recorded), what it spent is given back, the customer's totals and tier move, and the reversal's
deliveries are enqueued, all in one unit of work. What it did is stored in the event's ``reversal``, so that
forwarding says only what happened.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from decimal import Decimal
from typing import Any

from linksvc.clock import iso
from linksvc.errors import BadRequest, Conflict, NotFound
from linksvc.forwarding import outbox
from linksvc.jsoncodec import dumps
from linksvc.loyalty import rules
from linksvc.loyalty.lineage import PLACE, click_dims, click_utm, delay_of, money, rollup_key
from linksvc.loyalty.models import PURCHASE
from linksvc.store import Store, account_turn
from storage import clicks as click_repo
from storage import conversions, documents
from storage import customer_stats as stats_repo
from storage import customers as customer_repo
from storage import events as repo
from storage import wallet as wallet_repo
from storage.db import Tx


async def _stats(tx: Tx, account_id: str, customer_id: str) -> stats_repo.Stats:
    """The customer's running totals; built from the history the first time (then kept up to date by every
    purchase, reversal and ledger entry)."""
    stats = await stats_repo.of_customer(tx, customer_id)
    if stats is None:
        total, count = await repo.purchase_totals(tx, account_id, customer_id)
        lines = await wallet_repo.lines_of_customer(tx, account_id, customer_id)
        stats = stats_repo.Stats(customer_id, account_id, total, count,
                                 sum((line.amount for line in lines), Decimal(0)))
        await stats_repo.insert(tx, stats)
    return stats


async def _expire(tx: Tx, account_id: str, customer_id: str, now: str, event_id: str) -> None:
    """Lapsed lines that still hold something get their ``expire`` entry."""
    for line in await wallet_repo.lapsed_lines(tx, account_id, customer_id, now):
        await wallet_repo.change_line(tx, line, -line.amount, "expire", event_id, now)


async def _uncount(tx: Tx, event: repo.StoredEvent) -> None:
    """The purchase leaves the conversion rollups' purchases, revenue and delay bucket, on its own key (from
    its stored lineage); it stays among the events by type (it was an event). An event stored before lineage
    was recorded was never counted, so nothing is taken."""
    if event.lineage is None:
        return
    click = event.lineage.get("click")
    key = rollup_key(event.account_id, event.issued_at, event.body.get("attribution") or {}, click)
    await conversions.add_purchases(tx, [(*key, event.body.get("currency") or "", -1, -money(event.body.get("value")),
                                          delay_of(datetime.fromisoformat(event.issued_at), click))],
                                    [click_utm(event.lineage)], [await _dims(tx, event.account_id, click)])
    if click and click.get("variant"):  # and the variant report's (issue 34)
        await conversions.add_variant_purchases(tx, [(event.account_id, click["link_id"], click["variant"], key[1],
                                                      event.body.get("currency") or "", -1,
                                                      -money(event.body.get("value")))])


async def _dims(tx: Tx, account_id: str, click: dict[str, Any] | None) -> conversions.ClickDims | None:
    """The click dimensions the purchase was counted under: its lineage's; for a purchase written before the
    lineage held them, the click's as migration 0032 read it (the click the lineage names: its tracking_id and
    time), '' when it is gone."""
    if not click:
        return None
    if any(name in click for name in PLACE[1:]) or not click.get("tracking_id"):
        return click_dims({"click": click})
    place = await click_repo.click_place(tx, account_id, click["tracking_id"], click["clicked_at"])
    if place is None:
        return click_dims({"click": click})
    return (place.country or "", place.referrer_host or "", place.rule or "", str(click.get("variant") or ""))


async def reverse(tx: Tx, account_id: str, event_id: str, reason: str, now_dt: datetime) -> dict[str, Any]:
    """Takes back what a purchase issued (never below zero; the shortfall recorded) and gives back what it
    spent; recomputes the tier. A second reversal is 409; only PURCHASE can be reversed (400)."""
    now = iso(now_dt)
    event = await repo.by_id(tx, account_id, event_id)
    if event is None:
        raise NotFound("Event not found", f"no event with id {event_id}")
    if event.type != PURCHASE:
        raise BadRequest("Not reversible", f"only PURCHASE events can be reversed; event {event_id} is {event.type}")
    if event.reversed_at is not None:
        raise Conflict("Already reversed", f"event {event_id} was reversed at {event.reversed_at}")
    effects = event.effects
    taken: list[dict[str, Any]] = []
    shortfall: list[dict[str, Any]] = []
    returned: list[dict[str, Any]] = []
    for issued in effects.get("issued", []):
        line = await wallet_repo.line(tx, issued["line_id"])
        if line is None:  # the customer's lines were removed meanwhile
            shortfall.append({"line_id": issued["line_id"], "reward_id": issued["reward_id"],
                              "amount": issued["amount"]})
            continue
        want = Decimal(issued["amount"])
        take = min(want, max(line.amount, Decimal(0)))
        if take > 0:
            await wallet_repo.change_line(tx, line, -take, "reverse_issue", event_id, now)
            taken.append({"line_id": line.id, "reward_id": line.reward_id, "amount": str(take)})
        if want > take:
            shortfall.append({"line_id": line.id, "reward_id": line.reward_id, "amount": str(want - take)})
    for spent in effects.get("spent", []):
        line = await wallet_repo.line(tx, spent["line_id"])
        if line is None:
            continue
        await wallet_repo.change_line(tx, line, Decimal(spent["amount"]), "reverse_spend", event_id, now)
        returned.append(spent)
    tier = None
    customer: dict[str, Any] | None = None
    customer_id = event.customer_id
    if customer_id is not None:
        person = await customer_repo.customer_by(tx, account_id, "id", customer_id)
        if person is not None:
            customer = person.body
            stats = await _stats(tx, account_id, customer_id)
            value = Decimal(str(event.body.get("value", 0)))
            total, count = stats.purchase_total - value, stats.purchase_count - 1
            await stats_repo.set_purchases(tx, customer_id, total, count)
            await _expire(tx, account_id, customer_id, now, event_id)
            facts = rules.Facts(Decimal(0), total, count, (await _stats(tx, account_id, customer_id)).points)
            tier = rules.retier(customer, await repo.tiers(tx, account_id), facts)
            if tier is not None:
                await documents.update(tx, "customers", account_id, customer["id"], dumps(customer),
                                       {"tier_id": customer["tier_id"]}, now)
    reversal = {"reason": reason, "reversed_at": now, "taken_back": taken, "shortfall": shortfall,
                "returned": returned, "tier": tier}
    if not await repo.set_reversal(tx, event_id, now, reversal):
        raise Conflict("Already reversed", f"event {event_id} was already reversed")
    await _uncount(tx, event)
    stored = replace(event, reversed_at=now, reversal=reversal)
    await outbox.enqueue(tx, account_id, stored.as_dict(), customer, "reversal", reversal, now)
    return {"id": event_id, "reversed_at": now, "reason": reason}


async def reverse_event(store: Store, account_id: str, event_id: str, reason: str,
                        now: datetime) -> dict[str, Any]:
    """A reversal as the endpoint asks for it: :func:`reverse` in one unit of work on the store's write queue."""
    return await store.write(lambda tx: reverse(tx, account_id, event_id, reason, now), account_turn(account_id))
