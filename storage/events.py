"""Behavior events: insert, find by id or order, the customer's purchase history, the reversal.

Events come out as :class:`StoredEvent` records, their JSON columns decoded here once; new ones go in as
:class:`NewEvent` records, many in one statement.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import orjson

from storage.db import Conn, Row, Tx, dialect, execute, fetch_all, fetch_one, json_member, statement_chunks

OWNS = ("events",)

COLUMNS = ("id", "account_id", "type", "customer_id", "order_id", "payload_hash", "issued_at", "received_at",
           "key_kind", "body", "effects", "lineage")
_ROWS_PER_INSERT = 500


def _number(value: Any) -> Any:
    # As the service's JSON codec writes a Decimal: exact for integers, a double for fractions.
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")


def dumps(value: Any) -> str:
    return orjson.dumps(value, default=_number).decode()


loads = orjson.loads


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """An event as stored: ``body`` is the event as the service keeps it (the client's fields and what the
    service added), ``effects`` what it did to the wallet and tier, ``reversal`` what its reversal did."""

    id: str
    account_id: str
    type: str
    customer_id: str | None
    order_id: str | None
    payload_hash: str
    issued_at: str
    received_at: str
    key_kind: str
    body: dict[str, Any]
    effects: dict[str, Any]
    reversed_at: str | None = None
    reversal: dict[str, Any] | None = None
    # Where its attribution came from and the click behind it, as when it was written (None: stored before).
    lineage: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        """The stored event as forwarding reads it: every column, ``body``, ``effects`` and ``reversal``
        decoded. The one place this dictionary is made."""
        return {
            "id": self.id, "account_id": self.account_id, "type": self.type, "customer_id": self.customer_id,
            "order_id": self.order_id, "payload_hash": self.payload_hash, "issued_at": self.issued_at,
            "received_at": self.received_at, "key_kind": self.key_kind, "body": self.body, "effects": self.effects,
            "reversed_at": self.reversed_at, "reversal": self.reversal,
        }


@dataclass(frozen=True, slots=True)
class OrderSeen:
    """An event already stored for an order id: what a repeat of the order is compared against."""

    id: str
    order_id: str
    payload_hash: str


def _event_of(row: Row) -> StoredEvent:
    """An ``events`` row (``SELECT *``, or more columns) as its record."""
    return StoredEvent(
        id=row["id"], account_id=row["account_id"], type=row["type"], customer_id=row["customer_id"],
        order_id=row["order_id"], payload_hash=row["payload_hash"], issued_at=row["issued_at"],
        received_at=row["received_at"], key_kind=row["key_kind"], body=loads(row["body"]),
        effects=loads(row["effects"]), reversed_at=row["reversed_at"],
        reversal=loads(row["reversal"]) if row["reversal"] else None,
        lineage=loads(row["lineage"]) if row["lineage"] else None,
    )


def _values(event: StoredEvent) -> tuple[Any, ...]:
    return (event.id, event.account_id, event.type, event.customer_id, event.order_id, event.payload_hash,
            event.issued_at, event.received_at, event.key_kind, dumps(event.body), dumps(event.effects),
            dumps(event.lineage) if event.lineage is not None else None)


async def insert_many(tx: Tx, events: Sequence[StoredEvent]) -> None:
    """New events (not reversed), in order, a few hundred per statement (:func:`storage.db.statement_chunks`)."""
    marks = "(" + ", ".join("?" for _ in COLUMNS) + ")"
    for chunk in statement_chunks(events):
        await execute(tx, f"INSERT INTO events ({', '.join(COLUMNS)}) VALUES {', '.join([marks] * len(chunk))}",
                      [value for event in chunk for value in _values(event)])


async def insert(tx: Tx, event: StoredEvent) -> None:
    await insert_many(tx, [event])


async def by_id(conn: Conn, account_id: str, event_id: str) -> StoredEvent | None:
    row = await fetch_one(conn, "SELECT * FROM events WHERE account_id = ? AND id = ?", (account_id, event_id))
    return _event_of(row) if row is not None else None


async def by_ids(conn: Conn, event_ids: Sequence[str]) -> dict[str, StoredEvent]:
    """The events of those ids that exist (of any account), by id; a few hundred ids per statement."""
    found: dict[str, StoredEvent] = {}
    wanted = sorted(set(event_ids))
    for start in range(0, len(wanted), _ROWS_PER_INSERT):
        chunk = wanted[start:start + _ROWS_PER_INSERT]
        for row in await fetch_all(conn, f"SELECT * FROM events WHERE id IN ({', '.join('?' for _ in chunk)})",
                                   chunk):
            event = _event_of(row)
            found[event.id] = event
    return found


async def of_customer(conn: Conn, account_id: str, customer_id: str, limit: int, offset: int = 0) -> list[StoredEvent]:
    """A page of the customer's events, newest (by issued_at) first: ``limit`` of them after the first
    ``offset``."""
    rows = await fetch_all(conn, "SELECT * FROM events WHERE account_id = ? AND customer_id = ? "
                                 "ORDER BY issued_at DESC, id DESC LIMIT ? OFFSET ?",
                           (account_id, customer_id, limit, offset))
    return [_event_of(row) for row in rows]


async def count_of_customer(conn: Conn, account_id: str, customer_id: str) -> int:
    """How many events the customer has (read on the ``events_customer`` index)."""
    row = await fetch_one(conn, "SELECT count(*) FROM events WHERE account_id = ? AND customer_id = ?",
                          (account_id, customer_id))
    return int(row[0]) if row else 0


async def by_order(conn: Conn, account_id: str, order_id: str) -> OrderSeen | None:
    found = await by_orders(conn, account_id, [order_id])
    return found.get(order_id)


async def by_orders(conn: Conn, account_id: str, order_ids: Iterable[str]) -> dict[str, OrderSeen]:
    """The stored events of these order ids, by order id (one statement)."""
    wanted = sorted(set(order_ids))
    if not wanted:
        return {}
    marks = ", ".join("?" for _ in wanted)
    rows = await fetch_all(conn, f"SELECT id, order_id, payload_hash FROM events WHERE account_id = ? "
                                 f"AND order_id IN ({marks})", (account_id, *wanted))
    return {row["order_id"]: OrderSeen(row["id"], row["order_id"], row["payload_hash"]) for row in rows}


async def purchase_totals(conn: Conn, account_id: str, customer_id: str) -> tuple[Decimal, int]:
    """(sum of order values, count) of the customer's purchases that are not reversed."""
    return (await purchase_totals_of(conn, account_id, [customer_id]))[customer_id]


async def purchase_totals_of(conn: Conn, account_id: str,
                             customer_ids: Iterable[str]) -> dict[str, tuple[Decimal, int]]:
    """For each customer, (sum of order values, count) of its purchases that are not reversed (one statement)."""
    wanted = sorted(set(customer_ids))
    totals: dict[str, tuple[Decimal, int]] = {customer_id: (Decimal(0), 0) for customer_id in wanted}
    if not wanted:
        return totals
    marks = ", ".join("?" for _ in wanted)
    # PostgreSQL gives the value as its JSON text (exact), SQLite as the number it holds.
    sql = (f"SELECT customer_id, {json_member(conn, 'body', 'value')} AS value FROM events WHERE account_id = ? "
           f"AND customer_id IN ({marks}) AND type = 'PURCHASE' AND reversed_at IS NULL")
    rows = await fetch_all(conn, sql, (account_id, *wanted))
    for row in rows:
        total, count = totals[row["customer_id"]]
        value = Decimal(str(row["value"])) if row["value"] is not None else Decimal(0)
        totals[row["customer_id"]] = (total + value, count + 1)
    return totals


async def set_reversal(tx: Tx, event_id: str, reversed_at: str, reversal: dict[str, Any]) -> bool:
    """Marks the event reversed; False when it already was (a concurrent reversal won)."""
    changed = await execute(tx, "UPDATE events SET reversed_at = ?, reversal = ? WHERE id = ? AND reversed_at IS NULL",
                            (reversed_at, dumps(reversal), event_id))
    return changed == 1


async def behavior_campaigns(conn: Conn, account_id: str) -> list[dict[str, Any]]:
    """The bodies of the account's BEHAVIOR campaigns."""
    rows = await fetch_all(conn, "SELECT body FROM campaigns WHERE account_id = ? AND type = 'BEHAVIOR'",
                           (account_id,))
    return [loads(row["body"]) for row in rows]


async def tiers(conn: Conn, account_id: str) -> list[dict[str, Any]]:
    """The bodies of the account's tiers."""
    return [loads(row["body"]) for row in
            await fetch_all(conn, "SELECT body FROM tiers WHERE account_id = ?", (account_id,))]


async def active_custom_type(conn: Conn, account_id: str, name: str) -> bool:
    return name in await active_custom_types(conn, account_id, [name])


async def active_custom_types(conn: Conn, account_id: str, names: Iterable[str]) -> set[str]:
    """Which of ``names`` are active custom event types of the account (one statement)."""
    wanted = sorted(set(names))
    if not wanted:
        return set()
    marks = ", ".join("?" for _ in wanted)
    rows = await fetch_all(conn, f"SELECT name, active FROM custom_event_types WHERE account_id = ? "
                                 f"AND name IN ({marks})", (account_id, *wanted))
    return {str(row["name"]) for row in rows if row["active"]}


async def custom_types_named(conn: Conn, account_id: str, names: Iterable[str]) -> set[str]:
    """Which of ``names`` are custom event types of the account, active or not (one statement)."""
    wanted = sorted(set(names))
    if not wanted:
        return set()
    marks = ", ".join("?" for _ in wanted)
    rows = await fetch_all(conn, f"SELECT name FROM custom_event_types WHERE account_id = ? AND name IN ({marks})",
                           (account_id, *wanted))
    return {str(row["name"]) for row in rows}


async def other_custom_type_named(conn: Conn, account_id: str, name: str, type_id: str) -> str | None:
    """The id of a custom event type of the account other than ``type_id`` named ``name`` (names are unique per
    account)."""
    row = await fetch_one(
        conn, "SELECT id FROM custom_event_types WHERE account_id = ? AND name = ? AND id != ?",
        (account_id, name, type_id),
    )
    return str(row[0]) if row is not None else None


async def active_custom_type_names(conn: Conn, account_id: str, limit: int) -> list[str]:
    """The names of the account's active custom event types, by name, at most ``limit`` (-1: all)."""
    rows = await fetch_all(conn, "SELECT name FROM custom_event_types WHERE account_id = ? AND active = 1 "
                                 "ORDER BY name LIMIT ?",
                      (account_id, None if limit < 0 and dialect(conn) == "postgresql" else limit))  # NULL: all
    return [str(row["name"]) for row in rows]


# The export reads an account's events in rowid order (the order of their commits).
EVENT_COLUMNS = "rowid AS export_rowid, *"


async def count_events_after(conn: Conn, account_id: str, after_rowid: int) -> int:
    """How many of the account's events come after ``after_rowid`` (the progress of ``linksvc export``)."""
    row = await fetch_one(conn, "SELECT COUNT(*) FROM events WHERE account_id = ? AND rowid > ?",
                          (account_id, after_rowid))
    return int(row[0]) if row else 0


async def events_after(conn: Conn, account_id: str, after_rowid: int, limit: int) -> list[tuple[int, StoredEvent]]:
    """The account's next ``limit`` events after ``after_rowid``, in rowid order, each with its rowid."""
    return await _events(
        conn,
        f"SELECT {EVENT_COLUMNS} FROM events WHERE account_id = ? AND rowid > ? ORDER BY rowid LIMIT ?",
        (account_id, after_rowid, limit),
    )


async def events_between(conn: Conn, account_id: str, after_rowid: int,
                         upto_rowid: int) -> list[tuple[int, StoredEvent]]:
    """The account's events in (``after_rowid``, ``upto_rowid``], in rowid order, each with its rowid."""
    return await _events(
        conn,
        f"SELECT {EVENT_COLUMNS} FROM events WHERE account_id = ? AND rowid > ? AND rowid <= ? ORDER BY rowid",
        (account_id, after_rowid, upto_rowid),
    )


async def _events(conn: Conn, sql: str, params: tuple[object, ...]) -> list[tuple[int, StoredEvent]]:
    return [(int(row["export_rowid"]), _event_of(row)) for row in await fetch_all(conn, sql, params)]


async def count_received_between(conn: Conn, account_id: str, start: str, end: str) -> int:
    """How many of the account's events were accepted in [``start``, ``end``)."""
    row = await fetch_one(conn, "SELECT count(*) FROM events WHERE account_id = ? AND received_at >= ? "
                                "AND received_at < ?", (account_id, start, end))
    return int(row[0]) if row else 0


async def received_between(conn: Conn, account_id: str, start: str, end: str, after: tuple[str, str] | None,
                           limit: int) -> list[StoredEvent]:
    """The account's next ``limit`` events accepted in [``start``, ``end``), in (``received_at``, ``id``) order,
    after ``after`` (a ``(received_at, id)`` already taken) when given."""
    params: list[Any] = [account_id, start, end]
    past = ""
    if after is not None:
        past = " AND (received_at > ? OR (received_at = ? AND id > ?))"
        params += [after[0], after[0], after[1]]
    rows = await fetch_all(conn, f"SELECT * FROM events WHERE account_id = ? AND received_at >= ? AND received_at < ?"
                                 f"{past} ORDER BY received_at, id LIMIT ?", [*params, limit])
    return [_event_of(row) for row in rows]
