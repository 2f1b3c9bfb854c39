"""The audit log: one row per change made through the admin API, append-only (no statement here updates or
deletes a row; ``tests/unit/test_audit_log.py`` holds every module to that).

A row is written in the transaction of the change it records. The admin API names the change it is about to
make as the *pending* entry of the request (:data:`storage.audit_context.PENDING`, a context variable: it
follows the request's task and nothing else); the first write unit or transaction the request then commits
carries the entry (:meth:`storage.db.Database.write`, :meth:`storage.db.Database.transaction` and their
PostgreSQL twins call :func:`storage.audit_context.carried`), so the change and its record commit together or
not at all.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from storage.audit_context import PENDING, Pending, pending
from storage.db import Conn, Row, Tx, execute, fetch_all, fetch_one

OWNS = ("audit_log",)
__all__ = ["PENDING", "AuditFilter", "AuditRecord", "Pending", "insert", "page", "pending", "pending_entry"]


@dataclass(frozen=True, slots=True)
class AuditRecord:
    id: str
    account_id: str
    actor_kind: str  # "operator", "person" or "token"
    actor_id: str  # "operator", the person's id or the token's id
    person_id: str | None  # the person behind a token or a session
    object_kind: str
    object_id: str
    action: str
    fields: str  # JSON of the fields sent, secrets masked
    client: str
    at: str
    seq: int = 0


def pending_entry(record: AuditRecord) -> Pending:
    """The entry a request is to write with its change (set it as :data:`storage.audit_context.PENDING`)."""

    async def write(tx: Tx, made: str | None) -> None:
        await insert(tx, replace(record, object_id=made) if made and not record.object_id else record)

    return Pending(record, write)


_COLUMNS = "id, account_id, actor_kind, actor_id, person_id, object_kind, object_id, action, fields, client, at"


async def insert(tx: Tx, record: AuditRecord) -> None:
    await execute(tx, f"INSERT INTO audit_log ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                  (record.id, record.account_id, record.actor_kind, record.actor_id, record.person_id,
                   record.object_kind, record.object_id, record.action, record.fields, record.client, record.at))


def _record(row: Row) -> AuditRecord:
    return AuditRecord(str(row[0]), str(row[1]), str(row[2]), str(row[3]), row[4], str(row[5]), str(row[6]),
                       str(row[7]), str(row[8]), str(row[9]), str(row[10]), int(row[11]))


@dataclass(frozen=True, slots=True)
class AuditFilter:
    account_id: str | None  # None: every account's entries and those of no account (a person's own changes)
    actor: str | None = None  # an actor id: "operator", a person's id (their tokens' rows too) or a token's id
    object_kind: str | None = None
    object_id: str | None = None
    action: str | None = None
    since: str | None = None  # at >= since
    until: str | None = None  # at < until


def _where(f: AuditFilter) -> tuple[str, list[Any]]:
    clauses, params = (["account_id = ?"], [f.account_id]) if f.account_id is not None else (["1 = 1"], [])
    if f.actor is not None:
        clauses.append("(actor_id = ? OR person_id = ?)")
        params += [f.actor, f.actor]
    for column, value in (("object_kind", f.object_kind), ("object_id", f.object_id), ("action", f.action)):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    if f.since is not None:
        clauses.append("at >= ?")
        params.append(f.since)
    if f.until is not None:
        clauses.append("at < ?")
        params.append(f.until)
    return " AND ".join(clauses), params


async def page(conn: Conn, f: AuditFilter, limit: int, offset: int) -> tuple[list[AuditRecord], int]:
    """The newest first, and how many rows match."""
    where, params = _where(f)
    rows = await fetch_all(conn, f"SELECT {_COLUMNS}, seq FROM audit_log WHERE {where} ORDER BY seq DESC "
                                 "LIMIT ? OFFSET ?", (*params, limit, offset))
    total = await fetch_one(conn, f"SELECT count(*) FROM audit_log WHERE {where}", tuple(params))
    return [_record(r) for r in rows], int(total[0]) if total else 0
