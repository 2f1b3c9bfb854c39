"""Lookups of customers and contacts by their indexed identifiers, always inside one account."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from storage.db import Conn, Row, WouldWait, dialect, fetch_all, fetch_one, json_member
from storage.wallet import HeldReward, held_rewards, wallet_view_columns

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


def _unmatchable(conn: Conn, *values: str | None) -> bool:
    """Whether a value asked for cannot be stored in ``conn``'s store, so that nothing matches it: PostgreSQL's
    text holds no NUL character (and refuses a parameter with one), SQLite's does."""
    return dialect(conn) == "postgresql" and any(value is not None and "\x00" in value for value in values)


def _person(row: Row) -> Person:
    return Person(row[0], orjson.loads(row[1]), row[2], row[3])


async def find_customers(
    conn: Conn, account_id: str, document_number: str | None, phone_digits: str | None, limit: int = 2
) -> list[Person]:
    """Customers matching every given identifier (at least one must be given)."""
    if _unmatchable(conn, document_number, phone_digits):
        return []
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
    """A customer as the lookup answers it: its document (``body``, decoded) and its wallet
    (:func:`storage.wallet.wallet_view`), or None and ``[]`` when it has more lines than the lookup was to
    read. ``matches`` is 2 when another customer matches too."""

    matches: int
    id: str
    body: dict[str, Any]
    lines: str | None
    rewards: list[HeldReward]


_LINES, _REWARDS = wallet_view_columns("found.id")
# The customer (oldest first; a second one only to say there are two), its count of stored wallet lines (an
# index-only read) and, when it holds 1 to :max_lines of them, its wallet (storage.wallet.wallet_view's columns):
# one statement, one snapshot. The CTE is materialised so that the count is made once per customer.
_LOOKUP = ("WITH found AS MATERIALIZED (SELECT id, body, (SELECT count(*) FROM wallet_lines w "
           "WHERE w.customer_id = c.id) AS stored FROM customers c WHERE account_id = :account_id{where} "
           "ORDER BY created_at, id LIMIT 2) "
           f"SELECT id, body, stored, CASE WHEN stored BETWEEN 1 AND :max_lines THEN {_LINES} END, "
           f"CASE WHEN stored BETWEEN 1 AND :max_lines THEN {_REWARDS} END FROM found")
_LOOKUPS = {
    (document, phone): _LOOKUP.format(where="".join((" AND document_number = :document_number" if document else "",
                                                      " AND phone_digits = :phone_digits" if phone else "")))
    for document in (False, True) for phone in (False, True) if document or phone
}
# The same statement on PostgreSQL, with the wallet's columns in its dialect (the same JSON text).
_PG_LINES, _PG_REWARDS = wallet_view_columns("found.id", "postgresql")
_PG_LOOKUP = ("WITH found AS MATERIALIZED (SELECT id, body, (SELECT count(*) FROM wallet_lines w "
              "WHERE w.customer_id = c.id) AS stored FROM customers c WHERE account_id = :account_id{where} "
              "ORDER BY created_at, id LIMIT 2) "
              f"SELECT id, body, stored, CASE WHEN stored BETWEEN 1 AND :max_lines THEN {_PG_LINES} END, "
              f"CASE WHEN stored BETWEEN 1 AND :max_lines THEN {_PG_REWARDS} END FROM found")
_PG_LOOKUPS = {
    (document, phone): _PG_LOOKUP.replace("{where}", "".join((  # the wallet's JSON holds braces: no format()
        " AND document_number = :document_number" if document else "",
        " AND phone_digits = :phone_digits" if phone else "")))
    for document in (False, True) for phone in (False, True) if document or phone
}


async def lookup(conn: Conn, account_id: str, document_number: str | None, phone_digits: str | None, now: str,
                 max_lines: int) -> CustomerView | None:
    """The first customer (oldest) of the account matching every given identifier (at least one) and, when
    it has at most ``max_lines`` wallet lines (expired and used up ones counted), its wallet at ``now``: one
    statement of indexed reads, the wallet's JSON made by SQLite. None when no customer matches."""
    if isinstance(conn, sqlite3.Connection):
        return lookup_now(conn, account_id, document_number, phone_digits, now, max_lines)
    if _unmatchable(conn, document_number, phone_digits):
        return None
    sql, params = _lookup_statement(account_id, document_number, phone_digits, now, max_lines)
    if dialect(conn) == "postgresql":
        sql = _PG_LOOKUPS[(document_number is not None, phone_digits is not None)]
    return _view(await fetch_all(conn, sql, params))


def lookup_now(conn: Conn, account_id: str, document_number: str | None, phone_digits: str | None,
               now: str, max_lines: int) -> CustomerView | None:
    """:func:`lookup` on a plain ``sqlite3`` connection (the event loop's reader), without awaiting: for a
    path that answers at once (the lookup's fast lane) as well as for the handler. Raises :class:`WouldWait`
    on any other connection."""
    if not isinstance(conn, sqlite3.Connection):
        raise WouldWait(type(conn).__name__)
    return _view(conn.execute(*_lookup_statement(account_id, document_number, phone_digits, now, max_lines))
                 .fetchall())


def _lookup_statement(account_id: str, document_number: str | None, phone_digits: str | None, now: str,
                      max_lines: int) -> tuple[str, dict[str, object]]:
    sql = _LOOKUPS[(document_number is not None, phone_digits is not None)]
    params: dict[str, object] = {"account_id": account_id, "now": now, "max_lines": max_lines}
    if document_number is not None:
        params["document_number"] = document_number
    if phone_digits is not None:
        params["phone_digits"] = phone_digits
    return sql, params


def _view(rows: list[Row]) -> CustomerView | None:
    if not rows:
        return None
    customer_id, body, stored, lines, rewards = rows[0]
    if stored == 0:
        return CustomerView(len(rows), customer_id, orjson.loads(body), "[]", [])
    if lines is None:  # more lines than the lookup is to read
        return CustomerView(len(rows), customer_id, orjson.loads(body), None, [])
    return CustomerView(len(rows), customer_id, orjson.loads(body), lines, held_rewards(rewards))


async def customer_by(conn: Conn, account_id: str, column: str, value: str) -> Person | None:
    if column not in ("id", "external_id", "document_number", "phone_digits", "email_lower"):
        raise KeyError(column)
    if _unmatchable(conn, value):
        return None
    row = await fetch_one(conn, f"{_CUSTOMER} AND {column} = ?", (account_id, value))
    return _person(row) if row is not None else None


async def other_customer_with(conn: Conn, account_id: str, column: str, value: str, customer_id: str) -> str | None:
    """A customer of the account other than ``customer_id`` whose ``column`` (external_id or document_number,
    unique per account) holds ``value``."""
    if column not in ("external_id", "document_number"):
        raise KeyError(column)
    if _unmatchable(conn, value):
        return None
    row = await fetch_one(
        conn, f"SELECT id FROM customers WHERE account_id = ? AND {column} = ? AND id != ?",
        (account_id, value, customer_id),
    )
    return str(row[0]) if row is not None else None


def _like(text: str) -> str:
    """A LIKE pattern that finds ``text`` anywhere, its own wildcards taken literally (escaped with ``\\``)."""
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


async def search(conn: Conn, account_id: str, text: str, digits: str | None, limit: int) -> list[Person]:
    """The account's customers whose name or e-mail holds ``text`` (without regard to case), whose document
    number or external id is ``text``, or whose phone's digits hold ``digits``: by name, at most ``limit``. The
    name is in the document, so this reads every customer of the account: a back-office search, not a lookup."""
    if _unmatchable(conn, text):
        return []
    name = f"lower(coalesce({json_member(conn, 'body', 'name')}, ''))"
    pattern = _like(text.lower())
    clauses = [f"{name} LIKE ? ESCAPE '\\'", "email_lower LIKE ? ESCAPE '\\'", "document_number = ?",
               "external_id = ?"]
    params: list[object] = [account_id, pattern, pattern, text, text]
    if digits:
        clauses.append("phone_digits LIKE ?")
        params.append(f"%{digits}%")
    rows = await fetch_all(conn, f"{_CUSTOMER} AND ({' OR '.join(clauses)}) ORDER BY {name}, id LIMIT ?",
                           [*params, limit])
    return [_person(row) for row in rows]


async def find_contacts(
    conn: Conn, account_id: str, contact_id: str | None, email_lower: str | None, document_number: str | None,
    limit: int,
) -> list[Person]:
    """Live (not deleted) contacts matching every given indexed identifier."""
    if _unmatchable(conn, contact_id, email_lower, document_number):
        return []
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
        wanted = sorted(value for value in set(values) if not _unmatchable(conn, value))
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
