"""Custom domains of accounts: one row per host an account claims, pending until it proves it owns it.

The rules (what a valid host is, the verification fetch, which links resolve where) live in
:mod:`linksvc.domains`; this module holds the SQL and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from storage.db import Conn, Row, Tx, execute, fetch_all, fetch_one

OWNS = ("domains",)

_COLUMNS = "id, account_id, host, status, token, created_at, verified_at, url_patterns"


@dataclass(frozen=True, slots=True)
class DomainRecord:
    id: str
    account_id: str
    host: str
    status: str  # "pending" or "live"
    token: str
    created_at: str
    verified_at: str | None
    url_patterns: tuple[str, ...] = ()  # the long links' allow-list (linksvc.domains.url_patterns), JSON when stored


def _record(row: Row) -> DomainRecord:
    return DomainRecord(str(row[0]), str(row[1]), str(row[2]), str(row[3]), str(row[4]), str(row[5]),
                        None if row[6] is None else str(row[6]), tuple(orjson.loads(row[7] or "[]")))


async def insert(tx: Tx, record: DomainRecord) -> None:
    await execute(
        tx, f"INSERT INTO domains ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (record.id, record.account_id, record.host, record.status, record.token, record.created_at,
         record.verified_at, orjson.dumps(list(record.url_patterns)).decode()),
    )


async def by_id(conn: Conn, account_id: str, domain_id: str) -> DomainRecord | None:
    row = await fetch_one(conn, f"SELECT {_COLUMNS} FROM domains WHERE id = ? AND account_id = ?",
                          (domain_id, account_id))
    return None if row is None else _record(row)


async def by_host(conn: Conn, host: str) -> DomainRecord | None:
    row = await fetch_one(conn, f"SELECT {_COLUMNS} FROM domains WHERE host = ?", (host,))
    return None if row is None else _record(row)


async def of_account(conn: Conn, account_id: str) -> list[DomainRecord]:
    rows = await fetch_all(conn, f"SELECT {_COLUMNS} FROM domains WHERE account_id = ? ORDER BY created_at, host",
                           (account_id,))
    return [_record(row) for row in rows]


async def every_domain(conn: Conn) -> list[DomainRecord]:
    """Every domain of every account (what each worker holds in memory)."""
    return [_record(row) for row in await fetch_all(conn, f"SELECT {_COLUMNS} FROM domains")]


async def mark_live(tx: Tx, domain_id: str, verified_at: str) -> bool:
    return await execute(tx, "UPDATE domains SET status = 'live', verified_at = ? WHERE id = ?",
                         (verified_at, domain_id)) > 0


async def set_url_patterns(tx: Tx, account_id: str, domain_id: str, patterns: tuple[str, ...]) -> bool:
    """Replaces the domain's allow-list; False when the account has no such domain."""
    return await execute(tx, "UPDATE domains SET url_patterns = ? WHERE id = ? AND account_id = ?",
                         (orjson.dumps(list(patterns)).decode(), domain_id, account_id)) > 0


async def delete(tx: Tx, account_id: str, domain_id: str) -> bool:
    return await execute(tx, "DELETE FROM domains WHERE id = ? AND account_id = ?", (domain_id, account_id)) > 0
