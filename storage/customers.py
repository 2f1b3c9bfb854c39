"""Lookups of customers and contacts by their indexed identifiers, always inside one account."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from storage.db import Conn, Row, fetch_all, fetch_one

OWNS: tuple[str, ...] = ()

_CUSTOMER = "SELECT id, body, created_at, updated_at FROM customers WHERE account_id = ?"


async def find_customers(
    conn: Conn, account_id: str, document_number: str | None, phone_digits: str | None, limit: int = 2
) -> list[Row]:
    """Customers matching every given identifier (at least one must be given)."""
    sql, params = _CUSTOMER, [account_id]
    if document_number is not None:
        sql += " AND document_number = ?"
        params.append(document_number)
    if phone_digits is not None:
        sql += " AND phone_digits = ?"
        params.append(phone_digits)
    return await fetch_all(conn, sql + " ORDER BY created_at, id LIMIT ?", [*params, limit])


async def customer_by(conn: Conn, account_id: str, column: str, value: str) -> Row | None:
    if column not in ("id", "external_id", "document_number", "phone_digits", "email_lower"):
        raise KeyError(column)
    return await fetch_one(conn, f"{_CUSTOMER} AND {column} = ?", (account_id, value))


async def other_customer_with(conn: Conn, account_id: str, column: str, value: str, customer_id: str) -> Row | None:
    """A customer of the account other than ``customer_id`` whose ``column`` (external_id or document_number,
    unique per account) holds ``value``."""
    if column not in ("external_id", "document_number"):
        raise KeyError(column)
    return await fetch_one(
        conn, f"SELECT id FROM customers WHERE account_id = ? AND {column} = ? AND id != ?",
        (account_id, value, customer_id),
    )


async def find_contacts(
    conn: Conn, account_id: str, contact_id: str | None, email_lower: str | None, document_number: str | None,
    limit: int,
) -> list[Row]:
    """Live (not deleted) contacts matching every given indexed identifier."""
    sql = "SELECT id, body, created_at, updated_at FROM contacts WHERE account_id = ? AND deleted_at IS NULL"
    params: list[object] = [account_id]
    for column, value in (("id", contact_id), ("email_lower", email_lower), ("document_number", document_number)):
        if value is not None:
            sql += f" AND {column} = ?"
            params.append(value)
    return await fetch_all(conn, sql + " ORDER BY created_at, id LIMIT ?", [*params, limit])


LOOKUP_COLUMNS = ("id", "external_id", "document_number", "phone_digits", "email_lower")


async def customers_with(conn: Conn, account_id: str, keys: Mapping[str, Iterable[str]]) -> list[Row]:
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
    return await fetch_all(
        conn,
        f"SELECT id, body, created_at, {', '.join(LOOKUP_COLUMNS[1:])} FROM customers WHERE account_id = ? "
        f"AND ({' OR '.join(clauses)})",
        params,
    )
