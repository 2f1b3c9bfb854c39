"""Export bookkeeping: how far each export target has written each account's events, and the events to write.

An account's events are taken in ``rowid`` order. Rowids grow in commit order (one writer at a time) and an
account's events are deleted only with the account, whose progress goes with them, so ``rowid > last_rowid``
is exactly "not yet written". ``pending_rowid`` is a range an exporter claimed before writing it; claiming and
advancing are compare-and-set, so two exporters (two processes) never both advance the same range.
"""

from __future__ import annotations

from dataclasses import dataclass

from storage.db import Conn, Tx, execute, fetch_all

OWNS = ("export_progress",)



@dataclass(frozen=True, slots=True)
class ExportProgress:
    """How far a target has written an account's events: ``last_rowid`` written (0: none), ``pending_rowid`` the
    end of a claimed range not yet written (None: none); ``updated_at`` None where no progress is stored yet."""

    account_id: str
    last_rowid: int
    pending_rowid: int | None
    updated_at: str | None = None


async def accounts_to_export(conn: Conn, target: str) -> list[ExportProgress]:
    """Accounts with events past their watermark or a claimed range, with their progress."""
    rows = await fetch_all(
        conn,
        "SELECT a.id AS account_id, COALESCE(p.last_rowid, 0) AS last_rowid, p.pending_rowid AS pending_rowid "
        "FROM accounts a LEFT JOIN export_progress p ON p.target = ? AND p.account_id = a.id "
        "WHERE p.pending_rowid IS NOT NULL "
        "OR EXISTS (SELECT 1 FROM events e WHERE e.account_id = a.id AND e.rowid > COALESCE(p.last_rowid, 0)) "
        "ORDER BY a.id",
        (target,),
    )
    return [ExportProgress(r[0], int(r[1]), r[2]) for r in rows]


async def claim(tx: Tx, target: str, account_id: str, last_rowid: int, pending_rowid: int, now: str) -> bool:
    """Claims (``last_rowid``, ``pending_rowid``] for writing; False when the progress is no longer at
    ``last_rowid`` or another range is claimed (another exporter got there first)."""
    changed = await execute(
        tx,
        "INSERT INTO export_progress (target, account_id, last_rowid, pending_rowid, updated_at) "
        "VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (target, account_id) DO UPDATE SET pending_rowid = excluded.pending_rowid, "
        "updated_at = excluded.updated_at "
        "WHERE export_progress.last_rowid = excluded.last_rowid AND export_progress.pending_rowid IS NULL",
        (target, account_id, last_rowid, pending_rowid, now),
    )
    return changed == 1


async def advance(tx: Tx, target: str, account_id: str, last_rowid: int, pending_rowid: int, now: str) -> bool:
    """Records the claimed range as written; False when it already was (by another exporter)."""
    changed = await execute(
        tx,
        "UPDATE export_progress SET last_rowid = pending_rowid, pending_rowid = NULL, updated_at = ? "
        "WHERE target = ? AND account_id = ? AND last_rowid = ? AND pending_rowid = ?",
        (now, target, account_id, last_rowid, pending_rowid),
    )
    return changed == 1


async def progress(conn: Conn, target: str) -> list[ExportProgress]:
    """Every account's progress for ``target``."""
    rows = await fetch_all(
        conn,
        "SELECT account_id, last_rowid, pending_rowid, updated_at FROM export_progress WHERE target = ? "
        "ORDER BY account_id",
        (target,),
    )
    return [ExportProgress(r[0], int(r[1]), r[2], r[3]) for r in rows]
