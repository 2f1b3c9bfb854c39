"""Lookups of customers and contacts by their indexed identifiers, always inside one account."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from storage.db import Conn, Row, fetch_all, fetch_one
from storage.wallet import LINES_JSON, REWARDS_JSON, HeldReward, held_rewards

OWNS: tuple[str, ...] = ()

_CUSTOMER = "SELECT id, body, created_at, updated_at FROM customers WHERE account_id = ?"


@dataclass(frozen=True, slots=True)
class Person:
    """A customer or a contact: its document (``body``, decoded) and when it was stored."""

    id: str
    body: dict[str, Any]
    created_at: str
    updated_at: str


@dataclass(frozen=True, slots=True)
class KeyedCustomer:
    """A customer with its lookup columns, as a batch of events finds it (:func:`customers_with`)."""

    id: str
    body: dict[str, Any]
    created_at: str
    external_id: str | None
    document_number: str | None
    phone_digits: str | None
    email_lower: str | None

    def key(self, column: str) -> str | None:
        """The value of one of :data:`LOOKUP_COLUMNS`."""
        value: str | None = getattr(self, column)
        return value


def _person(row: Row) -> Person:
    return Person(row[0], orjson.loads(row[1]), row[2], row[3])


async def find_customers(
    conn: Conn, account_id: str, document_number: str | None, phone_digits: str | None, limit: int = 2
) -> list[Person]:
    """Customers matching every given identifier (at least one must be given)."""
    sql, params = _CUSTOMER, [account_id]
    if document_number is not None:
        sql += " AND document_number = ?"
        params.append(document_number)
    if phone_digits is not None:
        sql += " AND phone_digits = ?"
        params.append(phone_digits)
    return [_person(row) for row in await fetch_all(conn, sql + " ORDER BY created_at, id LIMIT ?", [*params, limit])]


@dataclass(frozen=True, slots=True)
class CustomerView:
    """A customer as the lookup answers it, read in one statement: ``customer`` is the JSON object of the
    fields asked for; ``lines`` (JSON text) and ``rewards`` are its wallet (:func:`storage.wallet.wallet_view`),
    or None and ``[]`` when it has more lines than the lookup was to read. ``matches`` is 2 when another
    customer matches too."""

    matches: int
    id: str
    customer: str
    lines: str | None
    rewards: list[HeldReward]


def _lookup_sql(fields: tuple[str, ...], document_number: bool, phone_digits: bool) -> str:
    where = "".join((" AND document_number = :document_number" if document_number else "",
                     " AND phone_digits = :phone_digits" if phone_digits else ""))
    for name in fields:  # names go into the statement's text
        if not name.isidentifier():
            raise ValueError(name)
    customer = ", ".join(f"'{name}', body -> '$.{name}'" for name in fields)
    return f"""
WITH found AS (SELECT id, body FROM customers WHERE account_id = :account_id{where}
               ORDER BY created_at, id LIMIT 2),
first AS (SELECT id, body FROM found LIMIT 1),
small AS (SELECT id FROM first WHERE (SELECT count(*) FROM wallet_lines w WHERE w.customer_id = first.id)
          <= :max_lines),
held AS (SELECT * FROM wallet_lines WHERE account_id = :account_id AND customer_id = (SELECT id FROM small)
         AND (expiration_date IS NULL OR expiration_date > :now) AND CAST(amount AS REAL) > 0)
SELECT (SELECT count(*) FROM found), body ->> '$.id', json_object({customer}),
       CASE WHEN EXISTS (SELECT 1 FROM small) THEN {LINES_JSON} END,
       CASE WHEN EXISTS (SELECT 1 FROM small) THEN {REWARDS_JSON} ELSE '[]' END
FROM first"""


_LOOKUPS: dict[tuple[tuple[str, ...], bool, bool], str] = {}


async def lookup(conn: Conn, account_id: str, document_number: str | None, phone_digits: str | None,
                 fields: tuple[str, ...], now: str, max_lines: int) -> CustomerView | None:
    """The first customer (oldest) of the account matching every given identifier (at least one), with the
    fields of its document named in ``fields`` (null when absent) and, when it has at most ``max_lines``
    wallet lines (expired and used up ones counted), its wallet at ``now``: one indexed statement, its JSON
    made by SQLite. None when no customer matches."""
    key = (fields, document_number is not None, phone_digits is not None)
    sql = _LOOKUPS.get(key)
    if sql is None:
        if not (key[1] or key[2]):
            raise ValueError("a document number or phone digits are needed")
        sql = _LOOKUPS[key] = _lookup_sql(*key)
    row = await fetch_one(conn, sql, {"account_id": account_id, "document_number": document_number,
                                      "phone_digits": phone_digits, "now": now, "max_lines": max_lines})
    if row is None:
        return None
    return CustomerView(row[0], row[1], row[2], row[3], held_rewards(row[4]))


async def customer_by(conn: Conn, account_id: str, column: str, value: str) -> Person | None:
    if column not in ("id", "external_id", "document_number", "phone_digits", "email_lower"):
        raise KeyError(column)
    row = await fetch_one(conn, f"{_CUSTOMER} AND {column} = ?", (account_id, value))
    return _person(row) if row is not None else None


async def other_customer_with(conn: Conn, account_id: str, column: str, value: str, customer_id: str) -> str | None:
    """A customer of the account other than ``customer_id`` whose ``column`` (external_id or document_number,
    unique per account) holds ``value``."""
    if column not in ("external_id", "document_number"):
        raise KeyError(column)
    row = await fetch_one(
        conn, f"SELECT id FROM customers WHERE account_id = ? AND {column} = ? AND id != ?",
        (account_id, value, customer_id),
    )
    return str(row[0]) if row is not None else None


async def find_contacts(
    conn: Conn, account_id: str, contact_id: str | None, email_lower: str | None, document_number: str | None,
    limit: int,
) -> list[Person]:
    """Live (not deleted) contacts matching every given indexed identifier."""
    sql = "SELECT id, body, created_at, updated_at FROM contacts WHERE account_id = ? AND deleted_at IS NULL"
    params: list[object] = [account_id]
    for column, value in (("id", contact_id), ("email_lower", email_lower), ("document_number", document_number)):
        if value is not None:
            sql += f" AND {column} = ?"
            params.append(value)
    return [_person(row) for row in await fetch_all(conn, sql + " ORDER BY created_at, id LIMIT ?", [*params, limit])]


LOOKUP_COLUMNS = ("id", "external_id", "document_number", "phone_digits", "email_lower")


async def customers_with(conn: Conn, account_id: str, keys: Mapping[str, Iterable[str]]) -> list[KeyedCustomer]:
    """In one statement, the customers of the account whose lookup column (``id``, ``external_id``,
    ``document_number``, ``phone_digits``, ``email_lower``) holds one of the values given for it: ``id``,
    ``body``, ``created_at`` and the lookup columns."""
    clauses: list[str] = []
    params: list[object] = [account_id]
    for column, values in keys.items():
        if column not in LOOKUP_COLUMNS:
            raise KeyError(column)
        wanted = sorted(set(values))
        if wanted:
            clauses.append(f"{column} IN ({', '.join('?' for _ in wanted)})")
            params.extend(wanted)
    if not clauses:
        return []
    rows = await fetch_all(
        conn,
        f"SELECT id, body, created_at, {', '.join(LOOKUP_COLUMNS[1:])} FROM customers WHERE account_id = ? "
        f"AND ({' OR '.join(clauses)})",
        params,
    )
    return [KeyedCustomer(row[0], orjson.loads(row[1]), *row[2:]) for row in rows]
