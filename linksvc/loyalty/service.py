"""Ingest of behavior events (product decisions, section 8); their reversal is :mod:`linksvc.loyalty.reversal`.

:func:`prepare` checks one event without the store (fields, PURCHASE rules, the key's kind, time) and
resolves its attribution. :func:`apply_batch` writes a request's events inside one transaction, as if one
after another: custom type check, idempotent order, the customer, expiry of lapsed lines, redeems, earning,
the tier, the event row with its effects (:func:`apply` is a batch of one). :func:`ingest` is what the
endpoints call: every event checked, then all accepted ones written in one unit of work. Everything an event
did is stored in its ``effects``, so that forwarding can say "reward issued" or "tier changed" only when it
happened.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from functools import partial
from typing import Any

import orjson
from pydantic import TypeAdapter, ValidationError

from linksvc.campaigns import catalog
from linksvc.campaigns.catalog import Catalog
from linksvc.clock import iso
from linksvc.errors import Conflict, Forbidden, InvalidField, Issues, ServiceError
from linksvc.forwarding import outbox
from linksvc.jsoncodec import dumps
from linksvc.links.clicks import ClickRecorder
from linksvc.loyalty import attribution, rules
from linksvc.loyalty.ids import uuid7 as new_id
from linksvc.loyalty.lineage import click_dims, click_utm, delay_of, lineage_of, rollup_key
from linksvc.loyalty.models import PURCHASE, EventIn
from linksvc.resources.types import UtcDateTime, phone_digits
from linksvc.resources.validation import field_path, validate
from linksvc.store import PerStore, Store, StoreConstraintError, StoreError, account_turn
from linksvc.untrusted import MAX_JSON_DEPTH
from storage import clicks as click_repo
from storage import conversions, documents
from storage import customer_stats as stats_repo
from storage import customers as customer_repo
from storage import events as repo
from storage import wallet as wallet_repo
from storage.customers import KeyedCustomer
from storage.db import Conn, Tx, savepoint
from storage.wallet import WalletLine

log = logging.getLogger("linksvc.events")
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
    received_at: datetime | None = None  # when its request came (the batch's time when not given)
    sources: dict[str, str] = field(default_factory=dict)  # where each resolved attribution field came from

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


def _nests_deeper(node: dict[str, Any] | list[Any], limit: int) -> bool:
    """:func:`linksvc.untrusted.nesting_exceeds` of an object or array (the same answer), by recursion over the
    containers only: a flat event costs a scan of its members and no stack of pairs."""
    if limit < 1:
        return True
    for child in node.values() if isinstance(node, dict) else node:
        if isinstance(child, dict | list) and (limit == 1 or (child and _nests_deeper(child, limit - 1))):
            return True
    return False


def prepare(raw: Any, key_kind: str, now: datetime, prefix: str = "") -> Prepared:
    """Checks that need no store, every problem named at once. ``prefix`` names the event in a bulk request
    (``events[3]``)."""
    if not isinstance(raw, dict):
        raise InvalidField(prefix or "body", "must be a JSON object (one event)", "Invalid body", rule="type")
    if _nests_deeper(raw, MAX_JSON_DEPTH):
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
    sources: dict[str, str] = {}
    return Prepared(event, raw, key_kind, payload_hash(raw), issued_at,
                    attribution.resolve(raw, original, properties, sources), prefix, now, sources)


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


Result = tuple[str, bool] | ServiceError  # (event id, True when it was new), or why the event was refused


class _Customers:
    """The customers a batch of events names, looked up in one statement, and which one each event means:
    every identifier given must point at the same customer (the one a lookup by that identifier finds)."""

    def __init__(self, rows: Sequence[KeyedCustomer]) -> None:
        self._by: dict[tuple[str, str], KeyedCustomer] = {}
        self._of: dict[int, tuple[EventIn, KeyedCustomer | None]] = {}  # by id() of the event: found once
        for row in sorted(rows, key=lambda r: (r.created_at, r.id)):
            for column in customer_repo.LOOKUP_COLUMNS:
                value = row.key(column)
                if value is not None:
                    self._by.setdefault((column, value), row)

    @staticmethod
    def keys(event: EventIn) -> list[tuple[str, str]]:
        found = []
        for name, column in IDENTIFIERS:
            value = getattr(event, name)
            if value is None:
                continue
            key = phone_digits(value) if name == "phone" else value.lower() if name == "email" else value
            if key is not None:
                found.append((column, key))
        return found

    @classmethod
    async def load(cls, conn: Conn, account_id: str, events: Sequence[EventIn]) -> _Customers:
        wanted: dict[str, set[str]] = {}
        for event in events:
            for column, key in cls.keys(event):
                wanted.setdefault(column, set()).add(key)
        return cls(await customer_repo.customers_with(conn, account_id, wanted) if wanted else [])

    def of(self, event: EventIn) -> KeyedCustomer | None:
        known = self._of.get(id(event))
        if known is not None and known[0] is event:
            return known[1]
        found = self._find(event)
        self._of[id(event)] = (event, found)  # the event is kept, so that its id() is not reused meanwhile
        return found

    def _find(self, event: EventIn) -> KeyedCustomer | None:
        found: KeyedCustomer | None = None
        for key in self.keys(event):
            row = self._by.get(key)
            if row is None or (found is not None and row.id != found.id):
                return None
            found = row
        return found


def _day_start(now: datetime) -> str:
    return iso(now.replace(hour=0, minute=0, second=0, microsecond=0))


def _lapsed(lines: Iterable[WalletLine], now: str) -> list[WalletLine]:
    """Lines past their expiration that still hold something, in the order they are expired."""
    return sorted((line for line in lines if line.expiration_date is not None and line.expiration_date <= now
                   and line.amount > 0), key=lambda line: (line.expiration_date or "", line.id))


def _open_of_reward(lines: Iterable[WalletLine], reward_id: str, now: str) -> list[WalletLine]:
    """A reward's unexpired lines that hold something, earliest expiration first (never-expiring last)."""
    return sorted((line for line in lines if line.reward_id == reward_id and line.amount > 0
                   and (line.expiration_date is None or line.expiration_date > now)),
                  key=lambda line: (line.expiration_date is None, line.expiration_date or "", line.issued_at, line.id))


def _counts(line: WalletLine, campaign_id: str, since: str) -> bool:
    """Whether a line counts toward a campaign's max_per_day from ``since``."""
    return line.campaign_id == campaign_id and line.source == "event" and line.issued_at >= since


@dataclass
class _Holder:
    """One customer's state while a batch is applied: what is stored, with the effects of the batch's
    accepted events so far."""

    customer: dict[str, Any]
    lines: dict[str, WalletLine]
    stored_stats: stats_repo.Stats | None
    history: tuple[Decimal, int]  # purchase totals from the events, for stats not built yet
    stats: stats_repo.Stats | None = None  # current; None until an accepted event touched the customer
    tier_changed: bool = False
    tier_changed_at: str = ""  # when the last event that moved the tier came
    # The earliest expiration of a line that holds something ("" when unknown, None when there is none): no
    # line can have lapsed before it, so an event before it looks at no line to expire.
    earliest: str | None = ""
    # Lines a campaign issued since a moment, as counted for max_per_day: (campaign, since) -> how many.
    issued: dict[tuple[str, str], int] = field(default_factory=dict)

    def lapsed(self, now: str) -> list[WalletLine]:
        """:func:`_lapsed` of the held lines, without looking at them when none can have lapsed."""
        if self.earliest == "":
            self.earliest = min((line.expiration_date for line in self.lines.values()
                                 if line.expiration_date is not None and line.amount > 0), default=None)
        if self.earliest is None or self.earliest > now:
            return []
        return _lapsed(self.lines.values(), now)

    def issued_since(self, campaign_id: str, since: str) -> int:
        key = (campaign_id, since)
        found = self.issued.get(key)
        if found is None:
            found = self.issued[key] = sum(1 for line in self.lines.values() if _counts(line, campaign_id, since))
        return found

    def keep(self, line: WalletLine) -> None:
        """A line as an accepted event left it (new, or with its new amount)."""
        if line.id not in self.lines:
            for campaign_id, since in self.issued:
                if _counts(line, campaign_id, since):
                    self.issued[(campaign_id, since)] += 1
        self.lines[line.id] = line
        if self.earliest != "" and line.amount > 0 and line.expiration_date is not None:
            self.earliest = line.expiration_date if self.earliest is None else min(self.earliest,
                                                                                   line.expiration_date)
        elif line.amount <= 0:
            self.earliest = ""  # the earliest may be gone: found again when next needed

    def current_stats(self, account_id: str) -> stats_repo.Stats:
        """The running totals; built from the history the first time, as :func:`_stats` does."""
        if self.stats is not None:
            return self.stats
        if self.stored_stats is not None:
            return self.stored_stats
        # Every line that holds something, lapsed ones too: the running figure moves with every ledger entry.
        points = sum((line.amount for line in self.lines.values()), Decimal(0))
        return stats_repo.Stats(self.customer["id"], account_id, self.history[0], self.history[1], points)


def _with_points(stats: stats_repo.Stats, points: Decimal) -> stats_repo.Stats:
    # dataclasses.replace costs several times this, and runs for every change of every event
    return stats_repo.Stats(stats.customer_id, stats.account_id, stats.purchase_total, stats.purchase_count, points)


class _Work:
    """The changes one event makes to a customer, kept apart until the event is accepted (a refused event
    changes nothing)."""

    def __init__(self, holder: _Holder, account_id: str, event_id: str, now: str) -> None:
        self.holder = holder
        self.event_id = event_id
        self.now = now
        self.stats = holder.current_stats(account_id)
        self.changed: dict[str, WalletLine] = {}
        self.entries: list[wallet_repo.LedgerEntry] = []

    def lines(self) -> list[WalletLine]:
        return [self.changed.get(line_id, line) for line_id, line in self.holder.lines.items()] + [
            line for line_id, line in self.changed.items() if line_id not in self.holder.lines]

    def change(self, line: WalletLine, delta: Decimal, kind: str) -> None:
        self.changed[line.id] = replace(line, amount=line.amount + delta)
        self.entries.append(wallet_repo.entry_for(line, kind, delta, self.event_id, self.now))
        self.stats = _with_points(self.stats, self.stats.points + delta)

    def issue(self, line: WalletLine) -> None:
        self.changed[line.id] = line
        self.entries.append(wallet_repo.entry_for(line, "issue", line.amount, line.event_id, self.now))
        self.stats = _with_points(self.stats, self.stats.points + line.amount)

    def issued_since(self, campaign_id: str, since: str) -> int:
        """How many lines a campaign issued to the customer since ``since`` (reversed ones included)."""
        return self.holder.issued_since(campaign_id, since) + sum(
            1 for line_id, line in self.changed.items()
            if line_id not in self.holder.lines and _counts(line, campaign_id, since))

    def keep(self, batch: _Batch) -> None:
        for line_id, line in self.changed.items():
            if line_id not in self.holder.lines and line_id not in batch.new_lines:
                batch.new_lines[line_id] = None
            self.holder.keep(line)
        batch.entries.extend(self.entries)
        self.holder.stats = self.stats


@dataclass
class _Batch:
    """What a batch reads once and writes at its end."""

    account_id: str
    now_dt: datetime
    active_types: set[str]
    orders: dict[str, repo.OrderSeen]
    customers: _Customers
    holders: dict[str, _Holder]
    campaigns: dict[str, dict[str, Any]]
    tiers: Sequence[dict[str, Any]]
    connections: list[dict[str, Any]] | None  # the enabled connections, when held (else read at the write)
    clicks: dict[str, click_repo.AttributedClick]  # the clicks behind the batch's tracking_ids
    # The campaigns and tiers as the rules read them, read once for the batch; each campaign's max_per_day.
    earning: rules.Campaigns = field(default_factory=lambda: rules.campaigns_of(()))
    tier_rules: rules.Tiers = field(default_factory=lambda: rules.tiers_of(()))
    limits: dict[str, Any] = field(default_factory=dict)
    # Moments as text (``iso``) and the starts of their days, made once per distinct moment of the batch.
    moments: dict[datetime, tuple[str, str]] = field(default_factory=dict)
    events: list[repo.StoredEvent] = field(default_factory=list)
    new_lines: dict[str, None] = field(default_factory=dict)  # ids of the lines the batch issued, in order
    entries: list[wallet_repo.LedgerEntry] = field(default_factory=list)
    deliveries: list[tuple[str, str, str]] = field(default_factory=list)  # (event id, trigger, time) to fan out
    # What the accepted events add to the conversion rollups (storage.conversions.add_events, add_purchases).
    # Each on the event's own UTM (the fine rollups), beside it the UTM of the click behind it (the coarse level).
    counted: list[tuple[Any, ...]] = field(default_factory=list)
    counted_by: list[tuple[str, str, str] | None] = field(default_factory=list)
    purchases: list[tuple[Any, ...]] = field(default_factory=list)
    purchases_by: list[tuple[str, str, str] | None] = field(default_factory=list)
    # The click's country, referrer host, rule and variant, beside each (the coarse level's click dimensions).
    counted_dims: list[conversions.ClickDims | None] = field(default_factory=list)
    purchases_dims: list[conversions.ClickDims | None] = field(default_factory=list)
    variant_purchases: list[conversions.VariantPurchase] = field(default_factory=list)  # the variant report's

    @property
    def now(self) -> str:
        return iso(self.now_dt)

    def moment(self, when: datetime) -> tuple[str, str]:
        """``(iso(when), the start of its day)``."""
        found = self.moments.get(when)
        if found is None:
            found = self.moments[when] = (iso(when), _day_start(when))
        return found

    def text(self, when: datetime) -> str:
        """``iso(when)``, made once per distinct moment (the events of a request share theirs)."""
        return self.moment(when)[0]


async def _load(tx: Tx, account_id: str, batch: Sequence[Prepared], now_dt: datetime,
                held: Catalog | None = None) -> _Batch:
    """Everything the batch's events read, a few statements whatever their number; the account's campaigns,
    tiers, custom types and connections from ``held`` when given (the worker's catalog)."""
    events = [p.event for p in batch]
    named = {e.type for e in events if e.type != PURCHASE}
    if held is not None:
        active = named & held.active_types
    else:
        active = await repo.active_custom_types(tx, account_id, named)
    orders = await repo.by_orders(tx, account_id, [e.order_id for e in events if e.order_id is not None])
    customers = await _Customers.load(tx, account_id, events)
    rows = {row.id: row for row in (customers.of(e) for e in events) if row is not None}
    holders: dict[str, _Holder] = {}
    campaigns: dict[str, dict[str, Any]] = {}
    tiers: Sequence[dict[str, Any]] = []
    if rows:
        if held is not None:
            campaigns = {c["id"]: c for c in held.behavior_campaigns}
        else:
            campaigns = {c["id"]: c for c in await repo.behavior_campaigns(tx, account_id)}
        stored = await stats_repo.of_customers(tx, rows)
        history = await repo.purchase_totals_of(tx, account_id, [c for c in rows if c not in stored])
        # Every line of those who redeem or whose totals are built; of the others, what can lapse or count.
        whole = {c for c in rows if c not in stored} | {
            row.id for row, e in ((customers.of(e), e) for e in events) if row is not None and e.redeem}
        capped = [c for c, body in campaigns.items() if (body.get("attributes") or {}).get("max_per_day")]
        received = [p.received_at for p in batch if p.received_at is not None] or [now_dt]
        lines: dict[str, dict[str, WalletLine]] = {customer_id: {} for customer_id in rows}
        for line in await wallet_repo.lines_for_events(tx, account_id, rows, iso(max(received)), whole, capped,
                                                        _day_start(min(received))):
            lines[line.customer_id][line.id] = line
        for customer_id, row in rows.items():
            holders[customer_id] = _Holder(row.body, lines[customer_id], stored.get(customer_id),
                                           history.get(customer_id, (Decimal(0), 0)))
        if any(e.type == PURCHASE for e in events):
            tiers = held.tier_rules if held is not None else await repo.tiers(tx, account_id)
    connections = list(held.connections) if held is not None else None
    clicks = await click_repo.clicks_for_tracking_ids(
        tx, account_id, [p.attribution["tracking_id"] for p in batch if "tracking_id" in p.attribution])
    return _Batch(account_id, now_dt, active, orders, customers, holders, campaigns, tiers, connections, clicks,
                  earning=rules.campaigns_of(campaigns.values()), tier_rules=rules.tiers_of(tiers),
                  limits={c: (body.get("attributes", {}) or {}).get("max_per_day") for c, body in campaigns.items()})


def _redeem(work: _Work, prepared: Prepared, effects: Effects) -> None:
    """Spends each redeem entry from the reward's lines, earliest expiration first; an entry over the balance
    is an issue, and every such entry is named (the event is then refused whole)."""
    issues = Issues()
    for index, entry in enumerate(prepared.event.redeem or []):
        owned = _open_of_reward(work.lines(), entry.id, work.now)
        balance = sum((line.amount for line in owned), Decimal(0))
        if entry.amount > balance:
            issues.add(prepared.path(f"redeem[{index}].amount"),
                       f"is more than the customer's balance of that reward ({balance})", "insufficient_balance")
            continue
        remaining = entry.amount
        for line in owned:
            if remaining <= 0:
                break
            take = min(line.amount, remaining)
            work.change(line, -take, "spend")
            remaining -= take
            effects.spent.append({"line_id": line.id, "reward_id": entry.id, "amount": str(take)})
    issues.raise_if_any("Invalid body")


async def _one(tx: Tx, state: _Batch, prepared: Prepared) -> tuple[str, bool]:
    """One event of the batch, against the batch's state: what ``apply`` did for one event, step by step,
    with the reads answered from the state and the writes kept in it. Raises ServiceError (nothing kept)."""
    event = prepared.event
    account_id = state.account_id
    now_dt = prepared.received_at or state.now_dt
    now, day_start = state.moment(now_dt)
    if event.type != PURCHASE and event.type not in state.active_types:
        raise await _type_issue(tx, account_id, event.type, prepared.path("type"))
    if event.order_id is not None:
        earlier = state.orders.get(event.order_id)
        if earlier is not None:
            if earlier.payload_hash == prepared.payload_hash:
                return earlier.id, False
            raise Conflict("Order already received",
                           f"order_id {event.order_id!r} was already received with a different payload "
                           f"(event {earlier.id})")
    event_id = new_id()
    effects = Effects()
    row = state.customers.of(event)
    holder = state.holders[row.id] if row is not None else None
    customer = holder.customer if holder is not None else None
    work: _Work | None = None
    if holder is not None and customer is not None:
        work = _Work(holder, account_id, event_id, now)
        for line in holder.lapsed(now):  # the event's first change: the held lines are the work's
            work.change(line, -line.amount, "expire")
            effects.expired.append({"line_id": line.id, "reward_id": line.reward_id, "amount": str(line.amount)})
        if event.redeem:
            _redeem(work, prepared, effects)
        value = event.value or Decimal(0)
        total, count = work.stats.purchase_total, work.stats.purchase_count
        if event.type == PURCHASE:
            total, count = total + value, count + 1
            stats = work.stats
            work.stats = stats_repo.Stats(stats.customer_id, stats.account_id, total, count, stats.points)
        points = work.stats.points  # after expiry and redeems
        facts = rules.Facts(value if event.type == PURCHASE else Decimal(0), total, count, points)
        products = frozenset(p for product in event.products or [] for p in (product.sku, product.id) if p)
        facts_of_event = rules.EventFacts(event.type, event.store_id, event.channel_id, products, value)
        for issue in rules.earnings(state.earning, facts_of_event, customer, facts, now_dt):
            limit = state.limits[issue.campaign_id]
            if limit and work.issued_since(issue.campaign_id, day_start) >= limit:
                continue
            line = WalletLine(
                id=new_id(), account_id=account_id, customer_id=customer["id"], reward_id=issue.reward_id,
                campaign_id=issue.campaign_id, brand_id=issue.brand_id, amount=issue.amount, issued_at=now,
                expiration_date=state.text(issue.expiration_date) if issue.expiration_date else None,
                reservation_expires_at=None, source="event", event_id=event_id,
            )
            work.issue(line)
            effects.issued.append({"line_id": line.id, "reward_id": issue.reward_id,
                                   "campaign_id": issue.campaign_id, "amount": str(line.amount),
                                   "expiration_date": line.expiration_date})
        if event.type == PURCHASE:
            effects.tier = rules.retier(customer, state.tier_rules, facts)
            if effects.tier is not None:
                holder.tier_changed, holder.tier_changed_at = True, now
        work.keep(state)
    body = {
        **event.model_dump(mode="json", exclude_none=True, exclude={"attribution"}),
        "id": event_id,
        "customer_id": customer["id"] if customer is not None else None,
        "issued_at": state.text(prepared.issued_at),
        "received_at": now,
        "attribution": prepared.attribution,
        "attribution_original": prepared.raw.get("attribution"),
        "analytics": prepared.raw.get("analytics"),
        "click_ids": prepared.raw.get("click_ids"),
    }
    stored = repo.StoredEvent(
        id=event_id, account_id=account_id, type=event.type, customer_id=body["customer_id"],
        order_id=event.order_id, payload_hash=prepared.payload_hash, issued_at=body["issued_at"], received_at=now,
        key_kind=prepared.key_kind, body=body, effects=effects.as_dict(),
        lineage=lineage_of(prepared.attribution, prepared.sources,
                           state.clicks.get(prepared.attribution.get("tracking_id", ""))),
    )
    state.events.append(stored)
    _count(state, stored, prepared)
    if event.order_id is not None:
        state.orders[event.order_id] = repo.OrderSeen(event_id, event.order_id, prepared.payload_hash)
    if state.connections != []:  # none enabled: nothing to fan out (the outbox writes one row per event)
        state.deliveries.append((event_id, "event", now))
    return event_id, True


def _count(state: _Batch, stored: repo.StoredEvent, prepared: Prepared) -> None:
    """What an accepted event adds to the conversion rollups: on the link and platform of the click behind it,
    with the event's own UTM (fine rollups) and the click's (the coarse level the report reads by default)."""
    click = stored.lineage["click"] if stored.lineage is not None else None
    key = rollup_key(state.account_id, stored.issued_at, prepared.attribution, click)
    utm = click_utm(stored.lineage)
    dims = click_dims(stored.lineage)
    state.counted.append((*key, stored.type, 1))
    state.counted_by.append(utm)
    state.counted_dims.append(dims)
    event = prepared.event
    if event.type == PURCHASE:
        state.purchases.append((*key, event.currency or "", 1, event.value or Decimal(0),
                                delay_of(prepared.issued_at, click)))
        state.purchases_by.append(utm)
        state.purchases_dims.append(dims)
        if click is not None and click.get("variant"):
            state.variant_purchases.append((state.account_id, click["link_id"], click["variant"], key[1],
                                            event.currency or "", 1, event.value or Decimal(0)))


async def _write(tx: Tx, state: _Batch) -> None:
    """The batch's writes, a statement or a few per table."""
    await repo.insert_many(tx, state.events)
    if state.counted:
        await conversions.add_events(tx, state.counted, state.counted_by, state.counted_dims)
    if state.purchases:
        await conversions.add_purchases(tx, state.purchases, state.purchases_by, state.purchases_dims)
    if state.variant_purchases:
        await conversions.add_variant_purchases(tx, state.variant_purchases)
    lines = {line_id: line for holder in state.holders.values() for line_id, line in holder.lines.items()}
    await wallet_repo.insert_lines(tx, [lines[line_id] for line_id in state.new_lines])
    stored = [(line_id, lines[line_id].amount) for line_id in dict.fromkeys(e.line_id for e in state.entries)
              if line_id not in state.new_lines]
    await wallet_repo.set_amounts(tx, stored)
    await wallet_repo.add_entries(tx, state.entries)
    await stats_repo.put_many(tx, [holder.stats for holder in state.holders.values() if holder.stats is not None])
    for holder in state.holders.values():
        if holder.tier_changed:
            customer = holder.customer
            await documents.update(tx, "customers", state.account_id, customer["id"], dumps(customer),
                                   {"tier_id": customer.get("tier_id")}, holder.tier_changed_at)
    await outbox.enqueue_each(tx, state.account_id, state.deliveries, state.connections)


async def _apply_together(tx: Tx, account_id: str, batch: Sequence[Prepared], now_dt: datetime,
                          held: Catalog | None) -> list[Result]:
    state = await _load(tx, account_id, batch, now_dt, held)
    results: list[Result] = []
    for prepared in batch:
        try:
            results.append(await _one(tx, state, prepared))
        except ServiceError as refused:
            results.append(refused)
    await _write(tx, state)
    return results


async def apply_batch(tx: Tx, account_id: str, batch: Sequence[Prepared], now_dt: datetime,
                      held: Catalog | None = None) -> list[Result]:
    """Writes prepared events in their order, as if one after another: each sees the effects of the accepted
    ones before it (expiry, redeems, running totals, max_per_day, the tier, its order id). Reads what the
    batch needs in a few statements, works out every event's effects in memory, then writes them in a few
    statements. A refused event gets its ServiceError and writes nothing; the others go on.

    Should a set-based write meet a constraint the state did not foresee, the batch is rolled back and applied
    again one event at a time, each in its own savepoint. ``held``: the account's catalog as the worker holds it
    (read in the transaction when not given)."""
    if len(batch) <= 1:
        return await _apply_together(tx, account_id, batch, now_dt, held)
    try:
        async with savepoint(tx, "event_batch"):
            return await _apply_together(tx, account_id, batch, now_dt, held)
    except StoreConstraintError:
        log.warning("a batch of %d events met a constraint; applying them one at a time", len(batch), exc_info=True)
    results: list[Result] = []
    for prepared in batch:
        async with savepoint(tx, "event_one"):
            results.extend(await _apply_together(tx, account_id, [prepared], now_dt, held))
    return results


async def apply(tx: Tx, account_id: str, prepared: Prepared, now_dt: datetime) -> tuple[str, bool]:
    """Writes one prepared event; returns (event id, True when it was new). Raises ServiceError (nothing
    written)."""
    [result] = await apply_batch(tx, account_id, [prepared], now_dt)
    if isinstance(result, ServiceError):
        raise result
    return result


async def ingest(store: Store, account_id: str, raws: Sequence[Any], key_kind: str,
                 now: datetime, bulk: bool = False, clicks: ClickRecorder | None = None) -> list[Result]:
    """Events as received: each checked (:func:`check`, on the reader), then every accepted one written by
    :func:`apply_batch` on the store's write queue, together with the accepted events of the other requests of
    the account that wait meanwhile (:class:`_Coalescer`). Returns each event's result in order, once committed.
    ``bulk`` names each event's problems ``events[i]...`` as the bulk endpoint does.

    ``clicks``, the process's click recorder: when a click behind an accepted event's tracking_id still waits
    in its buffer (answered within the last flush interval, as an app opened through ``$app-found`` sends its
    event), the recorder writes first, so that the batch finds the click for the event's lineage and rollups.
    An event whose click is stored already, or is not in this process's buffer, costs no write. A click
    buffered by another worker process or node is not seen: it is found once that process wrote it (within
    ``click_flush_seconds``)."""
    results: list[Result | None] = []
    accepted: list[Prepared] = []
    for index, raw in enumerate(raws):
        try:
            accepted.append(await check(store.reader, account_id, raw, key_kind, now,
                                        prefix=f"events[{index}]" if bulk else ""))
            results.append(None)
        except ServiceError as refused:
            results.append(refused)
    if accepted:
        if clicks is not None:
            named = {p.attribution["tracking_id"] for p in accepted if "tracking_id" in p.attribution}
            await clicks.flush_if_holding(account_id, named)
        applied = iter(await _coalescer(store).apply(account_id, accepted))
        results = [next(applied) if result is None else result for result in results]
    return [result for result in results if result is not None]


# Requests as one batch ----------------------------------------------------------------------------------

MAX_GATHERED = 5000  # events in one gathered batch at most; more wait for the next


@dataclass(eq=False)
class _Gathering:
    """The accepted events of the requests of one account that wait for the same unit of the write queue."""

    requests: list[list[Prepared]] = field(default_factory=list)
    events: int = 0
    done: asyncio.Future[list[list[Result] | BaseException]] | None = None


class _Coalescer:
    """Gathers the requests of an account that arrive while the write queue is busy into ONE unit: the first
    request of a gathering queues the unit; the others join it until the unit begins (on the writer's thread,
    where it seals the gathering); then :func:`apply_requests` applies every event in arrival order as one
    batch, and each request is answered, after the commit, with its own events' results. Requests that arrive
    once the unit began gather for the next one."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._open: dict[str, _Gathering] = {}
        self._lock = threading.Lock()  # the loop joins, the writer's thread seals
        self.units = 0  # units queued (gatherings)
        # A store whose units begin at once (PostgreSQL) would run an account's gatherings side by side, each
        # touching the same customers, and have most refused as not serializable. One unit of an account at a
        # time per process instead: requests arriving while it runs gather for the next, as in SQLite's queue.
        self._turns: dict[str, asyncio.Lock] | None = None if store.queued_writes else {}

    async def apply(self, account_id: str, prepared: list[Prepared]) -> list[Result]:
        with self._lock:
            gathering = self._open.get(account_id)
            first = (gathering is None or gathering.events + len(prepared) > MAX_GATHERED
                     or (gathering.done is not None and gathering.done.done()))
            if first:
                gathering = self._open[account_id] = _Gathering()
            assert gathering is not None
            index = len(gathering.requests)
            gathering.requests.append(prepared)
            gathering.events += len(prepared)
        if first:
            self.units += 1
            # A task of its own, so that a request that goes away does not take the others' write with it.
            gathering.done = asyncio.ensure_future(self._write(account_id, gathering))
            # The unit may never run (the group failed to begin: the store is locked): forget it all the same.
            gathering.done.add_done_callback(partial(self._forget, account_id, gathering))
        assert gathering.done is not None
        outcomes = await asyncio.shield(gathering.done)
        outcome = outcomes[index]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    async def _write(self, account_id: str, gathering: _Gathering) -> list[list[Result] | BaseException]:
        unit = partial(self._unit, account_id, gathering)
        if self._turns is None:
            return await self._store.write(unit, account_turn(account_id))
        turn = self._turns.setdefault(account_id, asyncio.Lock())
        async with turn:
            return await self._store.write(unit, account_turn(account_id))

    def _forget(self, account_id: str, gathering: _Gathering, _: object) -> None:
        with self._lock:
            if self._open.get(account_id) is gathering:
                del self._open[account_id]

    async def _unit(self, account_id: str, gathering: _Gathering, tx: Tx) -> list[list[Result] | BaseException]:
        with self._lock:  # sealed: taken out of the open gatherings, later requests gather for the next unit
            if self._open.get(account_id) is gathering:
                del self._open[account_id]
            requests = list(gathering.requests)
        held = await catalog.catalog_of(self._store, account_id, tx)
        return await apply_requests(tx, account_id, requests, held)


_coalescer = PerStore(_Coalescer)  # the process's coalescer of a store


def _fails_everything(exc: BaseException) -> bool:
    """A failure of the store itself (a full disk, the lock held elsewhere), which fails the whole group."""
    return isinstance(exc, StoreError) and not isinstance(exc, StoreConstraintError)


async def apply_requests(tx: Tx, account_id: str, requests: Sequence[Sequence[Prepared]],
                         held: Catalog | None = None) -> list[list[Result] | BaseException]:
    """The events of several requests, in arrival order, as ONE :func:`apply_batch`; each request's results.
    Should the batch raise anything but a refusal (a fault of one request's events), each request is applied
    alone in its own savepoint instead, so that only that request gets the exception."""
    flat = [p for request in requests for p in request]
    now_dt = max((p.received_at for p in flat if p.received_at is not None), default=None) or datetime.now(UTC)
    try:
        if len(requests) == 1:
            results = await apply_batch(tx, account_id, flat, now_dt, held)
        else:
            async with savepoint(tx, "event_requests"):
                results = await apply_batch(tx, account_id, flat, now_dt, held)
    except Exception as exc:
        if len(requests) == 1 or _fails_everything(exc):
            raise
        log.warning("a batch of %d requests failed; applying each request alone", len(requests), exc_info=True)
        alone: list[list[Result] | BaseException] = []
        for request in requests:
            try:
                async with savepoint(tx, "event_request"):
                    alone.append(await apply_batch(tx, account_id, request, now_dt, held))
            except Exception as own:
                if _fails_everything(own):
                    raise
                alone.append(own)
        return alone
    made: list[list[Result] | BaseException] = []
    start = 0
    for request in requests:
        made.append(results[start:start + len(request)])
        start += len(request)
    return made
