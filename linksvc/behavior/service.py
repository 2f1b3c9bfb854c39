"""Ingest and reversal of behavior events (product decisions, sections 8 and 9).

:func:`prepare` checks one event without the store (fields, PURCHASE rules, the key's kind, time) and
resolves its attribution. :func:`apply` writes it inside a transaction: custom type check, idempotent
order, the customer, expiry of lapsed lines, redeems, earning, the tier, the event row with its effects.
:func:`reverse` takes a purchase back. Everything an event did is stored in its ``effects`` (and a
reversal's in ``reversal``), so that forwarding can say "reward issued" or "tier changed" only when it
happened.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import orjson
from pydantic import TypeAdapter, ValidationError

from linksvc.behavior import attribution
from linksvc.behavior.models import PURCHASE, EventIn
from linksvc.clock import iso
from linksvc.errors import BadRequest, Conflict, Forbidden, InvalidField, Issues, NotFound
from linksvc.forwarding import outbox
from linksvc.jsoncodec import dumps, loads
from linksvc.loyalty import rules
from linksvc.resources.types import UtcDateTime, phone_digits
from linksvc.resources.validation import field_path, validate
from linksvc.untrusted import MAX_JSON_DEPTH, nesting_exceeds
from storage import customer_stats as stats_repo
from storage import customers as customer_repo
from storage import documents
from storage import events as repo
from storage import wallet as wallet_repo
from storage.db import Conn, Row, Tx

FUTURE_TOLERANCE = timedelta(minutes=5)
MAX_TYPES_LISTED = 100  # an unknown type's issue lists the account's active custom types, up to this many
_ISSUED_AT: TypeAdapter[datetime] = TypeAdapter(UtcDateTime)
IDENTIFIERS = (("customer_id", "id"), ("external_id", "external_id"), ("document_number", "document_number"),
               ("phone", "phone_digits"), ("email", "email_lower"))


@dataclass
class Prepared:
    event: EventIn
    raw: dict[str, Any]
    key_kind: str
    payload_hash: str
    issued_at: datetime
    attribution: dict[str, Any]
    prefix: str = ""  # where the event is in the request (``events[3]`` in a bulk request)

    def path(self, field: str) -> str:
        return field_path((field,), self.prefix)


@dataclass
class Effects:
    issued: list[dict[str, Any]] = field(default_factory=list)
    spent: list[dict[str, Any]] = field(default_factory=list)
    expired: list[dict[str, Any]] = field(default_factory=list)
    tier: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"issued": self.issued, "spent": self.spent, "expired": self.expired, "tier": self.tier}


def payload_hash(raw: dict[str, Any]) -> str:
    return hashlib.sha256(orjson.dumps(raw, option=orjson.OPT_SORT_KEYS)).hexdigest()


def prepare(raw: Any, key_kind: str, now: datetime, prefix: str = "") -> Prepared:
    """Checks that need no store, every problem named at once. ``prefix`` names the event in a bulk request
    (``events[3]``)."""
    if not isinstance(raw, dict):
        raise InvalidField(prefix or "body", "must be a JSON object (one event)", "Invalid body", rule="type")
    if nesting_exceeds(raw, MAX_JSON_DEPTH):
        raise InvalidField(prefix or "body", f"nests objects and arrays deeper than {MAX_JSON_DEPTH} levels",
                           "Invalid body", rule="too_deep")
    if raw.get("type") == PURCHASE and key_kind != "SERVER":
        raise Forbidden("SERVER key required", "PURCHASE events can be sent only with a SERVER API key's token")
    issues = Issues()
    event: EventIn | None = None
    with issues.collect():
        event = validate(EventIn, raw, prefix=prefix)
    issued_path = field_path(("issued_at",), prefix)
    issued_at: datetime | None = now
    if event is not None:
        issued_at = event.issued_at or now
    elif not issues.covers(issued_path) and raw.get("issued_at") is not None:
        try:
            issued_at = _ISSUED_AT.validate_python(raw["issued_at"])
        except ValidationError:  # cannot happen: the field's own issue would cover it
            issued_at = None
    if issued_at is not None and issued_at > now + FUTURE_TOLERANCE:
        issues.add(issued_path, "is more than 5 minutes in the future", "range")
    issues.raise_if_any("Invalid body")
    assert event is not None and issued_at is not None
    original = raw.get("attribution") if isinstance(raw.get("attribution"), dict) else None
    properties = raw.get("properties") if isinstance(raw.get("properties"), dict) else None
    return Prepared(event, raw, key_kind, payload_hash(raw), issued_at,
                    attribution.resolve(raw, original, properties), prefix)


async def _type_issue(conn: Conn, account_id: str, kind: str, path: str) -> InvalidField:
    names = await repo.active_custom_type_names(conn, account_id, MAX_TYPES_LISTED)
    return InvalidField(path, f"{kind!r} is neither PURCHASE nor an active custom event type of the account",
                        "Invalid body", rule="enum", accepted=[PURCHASE, *names])


async def check(conn: Conn, account_id: str, raw: Any, key_kind: str, now: datetime, prefix: str = "") -> Prepared:
    """:func:`prepare`; when the event is refused anyway, its type is also looked up, so that the refusal names
    an unknown type beside the other problems. (An event that passes is checked where it is written, in
    :func:`apply`: this costs nothing on the way of a valid event.)"""
    try:
        return prepare(raw, key_kind, now, prefix)
    except InvalidField as refused:
        kind = raw.get("type") if isinstance(raw, dict) else None
        path = field_path(("type",), prefix)
        if (not isinstance(kind, str) or kind == PURCHASE or any(i.path == path for i in refused.issues)
                or await repo.active_custom_type(conn, account_id, kind)):
            raise
        issues = Issues()
        issues.extend(refused)
        issues.extend(await _type_issue(conn, account_id, kind, path))
        raise InvalidField.of(issues.items, refused.error) from None


async def _customer(tx: Tx, account_id: str, event: EventIn) -> Row | None:
    """The customer the event names; every identifier given must point at the same one."""
    found: Row | None = None
    for name, column in IDENTIFIERS:
        value = getattr(event, name)
        if value is None:
            continue
        key = phone_digits(value) if name == "phone" else value.lower() if name == "email" else value
        if key is None:
            continue
        row = await customer_repo.customer_by(tx, account_id, column, key)
        if row is None or (found is not None and row["id"] != found["id"]):
            return None
        found = row
    return found


async def _expire(tx: Tx, account_id: str, customer_id: str, now: str, event_id: str, effects: Effects) -> None:
    """Lapsed lines that still hold something get their ``expire`` entry."""
    for line in await wallet_repo.lapsed_lines(tx, account_id, customer_id, now):
        await wallet_repo.change_line(tx, line, -Decimal(line["amount"]), "expire", event_id, now)
        effects.expired.append({"line_id": line["id"], "reward_id": line["reward_id"], "amount": line["amount"]})


@dataclass
class Stats:
    total: Decimal
    count: int
    points: Decimal


async def _stats(tx: Tx, account_id: str, customer_id: str) -> Stats:
    """The customer's running totals; built from the history the first time (then kept up to date by every
    purchase, reversal and ledger entry)."""
    row = await stats_repo.of_customer(tx, customer_id)
    if row is None:
        total, count = await repo.purchase_totals(tx, account_id, customer_id)
        # Every line, lapsed ones too: the running figure moves with every ledger entry, also the ``expire``
        # entries that later zero the lapsed ones. Read after ``_expire``, it is the unexpired balance.
        lines = await wallet_repo.lines_of_customer(tx, account_id, customer_id)
        points = sum((Decimal(line["amount"]) for line in lines), Decimal(0))
        await stats_repo.insert(tx, account_id, customer_id, total, count, points)
        return Stats(total, count, points)
    return Stats(Decimal(row["purchase_total"]), int(row["purchase_count"]), Decimal(row["points"]))


async def _redeem(tx: Tx, account_id: str, customer_id: str, prepared: Prepared, now: str, event_id: str,
                  effects: Effects) -> None:
    """Spends each redeem entry from the reward's lines, earliest expiration first; an entry over the balance
    is an issue, and every such entry is named (the caller rolls the event back)."""
    issues = Issues()
    for index, entry in enumerate(prepared.event.redeem or []):
        owned = await wallet_repo.open_lines_of_reward(tx, account_id, customer_id, entry.id, now)
        balance = sum((Decimal(line["amount"]) for line in owned), Decimal(0))
        if entry.amount > balance:
            issues.add(prepared.path(f"redeem[{index}].amount"),
                       f"is more than the customer's balance of that reward ({balance})", "insufficient_balance")
            continue
        remaining = entry.amount
        for line in owned:
            if remaining <= 0:
                break
            take = min(Decimal(line["amount"]), remaining)
            await wallet_repo.change_line(tx, line, -take, "spend", event_id, now)
            remaining -= take
            effects.spent.append({"line_id": line["id"], "reward_id": entry.id, "amount": str(take)})
    issues.raise_if_any("Invalid body")


async def _retier(tx: Tx, account_id: str, customer: dict[str, Any], facts: rules.Facts, now: str) -> dict | None:
    tiers = [loads(row["body"]) for row in await repo.tiers(tx, account_id)]
    before = customer.get("tier_id")
    after = rules.next_tier(before, tiers, facts)
    if after == before:
        return None
    customer["tier_id"] = after
    await documents.update(tx, "customers", account_id, customer["id"], dumps(customer), {"tier_id": after}, now)
    return {"from": before, "to": after}


async def apply(tx: Tx, account_id: str, prepared: Prepared, now_dt: datetime) -> tuple[str, bool]:
    """Writes one prepared event; returns (event id, True when it was new). Raises ServiceError (the caller
    rolls this event back alone)."""
    event = prepared.event
    now = iso(now_dt)
    if event.type != PURCHASE and not await repo.active_custom_type(tx, account_id, event.type):
        raise await _type_issue(tx, account_id, event.type, prepared.path("type"))
    if event.order_id is not None:
        earlier = await repo.by_order(tx, account_id, event.order_id)
        if earlier is not None:
            if earlier["payload_hash"] == prepared.payload_hash:
                return str(earlier["id"]), False
            raise Conflict("Order already received",
                           f"order_id {event.order_id!r} was already received with a different payload "
                           f"(event {earlier['id']})")
    event_id = str(uuid.uuid4())
    effects = Effects()
    row = await _customer(tx, account_id, event)
    customer = loads(row["body"]) if row is not None else None
    if customer is not None:
        customer_id = customer["id"]
        stats = await _stats(tx, account_id, customer_id)
        await _expire(tx, account_id, customer_id, now, event_id, effects)
        if event.redeem:
            await _redeem(tx, account_id, customer_id, prepared, now, event_id, effects)
        value = event.value or Decimal(0)
        total, count = stats.total, stats.count
        if event.type == PURCHASE:
            total, count = total + value, count + 1
            await stats_repo.set_purchases(tx, customer_id, total, count)
        points = (await _stats(tx, account_id, customer_id)).points  # after expiry and redeems
        facts = rules.Facts(value if event.type == PURCHASE else Decimal(0), total, count, points)
        products = frozenset(p for product in event.products or [] for p in (product.sku, product.id) if p)
        facts_of_event = rules.EventFacts(event.type, event.store_id, event.channel_id, products, value)
        campaigns = {c["id"]: c for c in (loads(r["body"]) for r in await repo.behavior_campaigns(tx, account_id))}
        day_start = iso(now_dt.replace(hour=0, minute=0, second=0, microsecond=0))
        for issue in rules.earnings(campaigns.values(), facts_of_event, customer, facts, now_dt):
            limit = campaigns[issue.campaign_id].get("attributes", {}).get("max_per_day")
            if limit and await wallet_repo.issued_since(tx, account_id, customer_id, issue.campaign_id,
                                                        day_start) >= limit:
                continue
            line = {
                "id": str(uuid.uuid4()), "account_id": account_id, "customer_id": customer_id,
                "reward_id": issue.reward_id, "campaign_id": issue.campaign_id, "brand_id": issue.brand_id,
                "amount": str(issue.amount), "issued_at": now,
                "expiration_date": iso(issue.expiration_date) if issue.expiration_date else None,
                "reservation_expires_at": None, "source": "event", "event_id": event_id,
            }
            await wallet_repo.insert_line(tx, line, "issue", now)
            effects.issued.append({"line_id": line["id"], "reward_id": issue.reward_id,
                                   "campaign_id": issue.campaign_id, "amount": line["amount"],
                                   "expiration_date": line["expiration_date"]})
        if event.type == PURCHASE:
            effects.tier = await _retier(tx, account_id, customer, facts, now)
    body = {
        **event.model_dump(mode="json", exclude_none=True, exclude={"attribution"}),
        "id": event_id,
        "customer_id": customer["id"] if customer is not None else None,
        "issued_at": iso(prepared.issued_at),
        "received_at": now,
        "attribution": prepared.attribution,
        "attribution_original": prepared.raw.get("attribution"),
        "analytics": prepared.raw.get("analytics"),
        "click_ids": prepared.raw.get("click_ids"),
    }
    row_values = {
        "id": event_id, "account_id": account_id, "type": event.type, "customer_id": body["customer_id"],
        "order_id": event.order_id, "payload_hash": prepared.payload_hash, "issued_at": body["issued_at"],
        "received_at": now, "key_kind": prepared.key_kind, "body": dumps(body), "effects": dumps(effects.as_dict()),
    }
    await repo.insert(tx, row_values)
    stored = {**row_values, "body": body, "effects": effects.as_dict(), "reversed_at": None, "reversal": None}
    await outbox.enqueue(tx, account_id, stored, customer, "event", effects.as_dict(), now)
    return event_id, True


async def reverse(tx: Tx, account_id: str, event_id: str, reason: str, now_dt: datetime) -> dict[str, Any]:
    """Takes back what a purchase issued (never below zero; the shortfall recorded) and gives back what it
    spent; recomputes the tier. A second reversal is 409; only PURCHASE can be reversed (400)."""
    now = iso(now_dt)
    row = await repo.by_id(tx, account_id, event_id)
    if row is None:
        raise NotFound("Event not found", f"no event with id {event_id}")
    if row["type"] != PURCHASE:
        raise BadRequest("Not reversible", f"only PURCHASE events can be reversed; event {event_id} is {row['type']}")
    if row["reversed_at"] is not None:
        raise Conflict("Already reversed", f"event {event_id} was reversed at {row['reversed_at']}")
    effects = loads(row["effects"])
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
        take = min(want, max(Decimal(line["amount"]), Decimal(0)))
        if take > 0:
            await wallet_repo.change_line(tx, line, -take, "reverse_issue", event_id, now)
            taken.append({"line_id": line["id"], "reward_id": line["reward_id"], "amount": str(take)})
        if want > take:
            shortfall.append({"line_id": line["id"], "reward_id": line["reward_id"], "amount": str(want - take)})
    for spent in effects.get("spent", []):
        line = await wallet_repo.line(tx, spent["line_id"])
        if line is None:
            continue
        await wallet_repo.change_line(tx, line, Decimal(spent["amount"]), "reverse_spend", event_id, now)
        returned.append(spent)
    tier = None
    customer: dict[str, Any] | None = None
    customer_id = row["customer_id"]
    if customer_id is not None:
        customer_row = await customer_repo.customer_by(tx, account_id, "id", customer_id)
        if customer_row is not None:
            customer = loads(customer_row["body"])
            stats = await _stats(tx, account_id, customer_id)
            value = Decimal(str(loads(row["body"]).get("value", 0)))
            total, count = stats.total - value, stats.count - 1
            await stats_repo.set_purchases(tx, customer_id, total, count)
            await _expire(tx, account_id, customer_id, now, event_id, Effects())
            facts = rules.Facts(Decimal(0), total, count, (await _stats(tx, account_id, customer_id)).points)
            tier = await _retier(tx, account_id, customer, facts, now)
    reversal = {"reason": reason, "reversed_at": now, "taken_back": taken, "shortfall": shortfall,
                "returned": returned, "tier": tier}
    if not await repo.set_reversal(tx, event_id, now, dumps(reversal)):
        raise Conflict("Already reversed", f"event {event_id} was already reversed")
    stored = {**dict(row), "body": loads(row["body"]), "effects": effects, "reversed_at": now, "reversal": reversal}
    await outbox.enqueue(tx, account_id, stored, customer, "reversal", reversal, now)
    return {"id": event_id, "reversed_at": now, "reason": reason}
