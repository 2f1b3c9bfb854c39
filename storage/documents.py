"""Resource documents: one row per resource, its validated JSON in ``body``, filter columns beside it.

Every query is scoped by ``account_id``: there is no function here that reads or writes a resource
without naming its account. Table and column names come only from :data:`TABLES`, never from input.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from storage.db import Conn, Row, Tx, execute, execute_many, fetch_all, fetch_one

# table -> the filter columns copied out of the document (besides id, account_id, body, timestamps)
TABLES: dict[str, tuple[str, ...]] = {
    "brands": (),
    "tiers": ("level",),
    "rewards": (),
    "campaigns": (
        "type", "brand_id", "funded_by", "starts_at", "ends_at", "paused", "finished_at",
        "sort_order", "stores_any", "channels_any", "products_any",
    ),
    "contacts": ("external_id", "email_lower", "document_number", "deleted_at"),
    "customers": ("external_id", "document_number", "phone_digits", "email_lower", "tier_id"),
    "custom_event_types": ("name", "active"),
    "connections": ("destination", "enabled"),
    "links": ("code", "kind", "campaign_id", "folder"),
}
# Every document table is written here alone, through insert/update/delete with a table name checked against
# TABLES; the customer's tier too (the behavior service updates the customer document).
OWNS = tuple(TABLES)

# Default listing order of each table (stable, unique by id last).
ORDER: dict[str, str] = {
    "tiers": "level, id",
    "campaigns": "sort_order, created_at, id",
}


@dataclass(frozen=True, slots=True)
class Document:
    """A stored resource: its validated document, decoded once here (``body`` is free-form JSON by kind: the
    resource models of ``linksvc.resources`` give it its shape), and when it was written."""

    id: str
    account_id: str
    body: dict[str, Any]
    created_at: str
    updated_at: str


_DOCUMENT = "id, body, created_at, updated_at"


def _document(row: Row, account_id: str) -> Document:
    return Document(row[0], account_id, orjson.loads(row[1]), row[2], row[3])


def _known(table: str) -> None:
    """Only the tables of TABLES are ever named in SQL here."""
    if table not in TABLES:
        raise KeyError(f"no document table {table!r}")


def _columns(table: str, values: Mapping[str, Any]) -> tuple[str, ...]:
    _known(table)
    allowed = TABLES[table]
    unknown = set(values) - set(allowed)
    if unknown:
        raise KeyError(f"{table} has no filter columns {sorted(unknown)}")
    return tuple(values)


async def get(conn: Conn, table: str, account_id: str, doc_id: str) -> Document | None:
    _known(table)
    row = await fetch_one(
        conn,
        f"SELECT {_DOCUMENT} FROM {table} WHERE account_id = ? AND id = ?",
        (account_id, doc_id),
    )
    return None if row is None else _document(row, account_id)


async def owner(conn: Conn, table: str, doc_id: str) -> str | None:
    """The account that holds ``doc_id`` (ids are global), or None when no account does."""
    _known(table)
    row = await fetch_one(conn, f"SELECT account_id FROM {table} WHERE id = ?", (doc_id,))
    return None if row is None else str(row["account_id"])


async def exists(conn: Conn, table: str, account_id: str, doc_id: str) -> bool:
    _known(table)
    row = await fetch_one(
        conn, f"SELECT 1 FROM {table} WHERE account_id = ? AND id = ?", (account_id, doc_id)
    )
    return row is not None


async def list_page(conn: Conn, table: str, account_id: str, limit: int, offset: int) -> list[Document]:
    _known(table)
    order = ORDER.get(table, "created_at, id")
    rows = await fetch_all(
        conn,
        f"SELECT {_DOCUMENT} FROM {table} WHERE account_id = ? "
        f"ORDER BY {order} LIMIT ? OFFSET ?",
        (account_id, limit, offset),
    )
    return [_document(row, account_id) for row in rows]


async def list_all(conn: Conn, table: str, account_id: str) -> list[Document]:
    _known(table)
    order = ORDER.get(table, "created_at, id")
    rows = await fetch_all(
        conn,
        f"SELECT {_DOCUMENT} FROM {table} WHERE account_id = ? ORDER BY {order}",
        (account_id,),
    )
    return [_document(row, account_id) for row in rows]


async def count(conn: Conn, table: str, account_id: str) -> int:
    _known(table)
    row = await fetch_one(conn, f"SELECT count(*) FROM {table} WHERE account_id = ?", (account_id,))
    return int(row[0]) if row else 0


async def insert(
    conn: Tx, table: str, account_id: str, doc_id: str, body: str,
    columns: Mapping[str, Any], now: str,
) -> None:
    names = _columns(table, columns)
    all_names = ("id", "account_id", "body", "created_at", "updated_at", *names)
    marks = ", ".join("?" for _ in all_names)
    await execute(
        conn,
        f"INSERT INTO {table} ({', '.join(all_names)}) VALUES ({marks})",
        (doc_id, account_id, body, now, now, *(columns[n] for n in names)),
    )


async def insert_many(
    conn: Tx, table: str, account_id: str, rows: Sequence[tuple[str, str, Mapping[str, Any]]], now: str,
) -> None:
    """Inserts new documents of one account in one statement run for every row: ``rows`` are (id, body,
    filter columns), every row naming the same columns."""
    if not rows:
        return
    names = _columns(table, rows[0][2])
    all_names = ("id", "account_id", "body", "created_at", "updated_at", *names)
    marks = ", ".join("?" for _ in all_names)
    await execute_many(
        conn,
        f"INSERT INTO {table} ({', '.join(all_names)}) VALUES ({marks})",
        [(doc_id, account_id, body, now, now, *(columns[n] for n in names)) for doc_id, body, columns in rows],
    )


async def update(
    conn: Tx, table: str, account_id: str, doc_id: str, body: str,
    columns: Mapping[str, Any], now: str,
) -> bool:
    names = _columns(table, columns)
    sets = ", ".join(["body = ?", "updated_at = ?", *(f"{n} = ?" for n in names)])
    changed = await execute(
        conn,
        f"UPDATE {table} SET {sets} WHERE account_id = ? AND id = ?",
        (body, now, *(columns[n] for n in names), account_id, doc_id),
    )
    return changed > 0


async def delete(conn: Tx, table: str, account_id: str, doc_id: str) -> bool:
    _known(table)
    changed = await execute(
        conn, f"DELETE FROM {table} WHERE account_id = ? AND id = ?", (account_id, doc_id)
    )
    return changed > 0


# What may refer to a document: kind -> (referring table, column). Deleting a referred-to document is
# refused, so that no stored campaign, customer, link or wallet line points at nothing.
REFERENCES: dict[str, tuple[tuple[str, str], ...]] = {
    "brands": (("campaigns", "brand_id"),),
    "tiers": (("customers", "tier_id"),),
    "campaigns": (("links", "campaign_id"), ("wallet_lines", "campaign_id")),
    "rewards": (("wallet_lines", "reward_id"),),
}


async def referred_by(conn: Conn, table: str, account_id: str, doc_id: str) -> list[str]:
    """The tables holding rows of this account that refer to the document."""
    found = []
    for referring, column in REFERENCES.get(table, ()):
        row = await fetch_one(
            conn, f"SELECT 1 FROM {referring} WHERE account_id = ? AND {column} = ? LIMIT 1", (account_id, doc_id)
        )
        if row is not None:
            found.append(referring)
    return found


async def every_document(conn: Conn, table: str) -> list[Document]:
    """Every document of ``table`` in every account (at start-up and from a metrics scrape: on SQLite's reader
    it never waits)."""
    _known(table)
    return [Document(r[0], r[1], orjson.loads(r[2]), r[3], r[4])
            for r in await fetch_all(conn, f"SELECT id, account_id, body, created_at, updated_at FROM {table}")]
