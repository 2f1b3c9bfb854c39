"""Export bookkeeping: how far each export target has written each account's events, and the events to write.

On SQLite an account's events are taken in ``rowid`` order. Rowids grow in commit order (one writer at a time)
and an account's events are deleted only with the account, whose progress goes with them, so ``rowid >
last_rowid`` is exactly "not yet written". ``pending_rowid`` is a range an exporter claimed before writing it;
claiming and advancing are compare-and-set, so two exporters (two processes) never both advance the same range.

On PostgreSQL several nodes write events at once and no number they carry follows commit order, so a
watermark over events would skip one committed late. There an event is exported once the target has
claimed it: :func:`claim_next` gives the next events without an ``export_events`` row the positions after
``last_rowid`` and moves ``pending_rowid`` to the last of them, in one transaction holding the
``export_progress`` row's lock (``last_rowid`` and ``pending_rowid`` count positions there); an event committed
after that claim has no row yet and is taken by a later one. :func:`claimed_events` reads a claimed range back,
the same events in the same order however often it is written again.
"""

from __future__ import annotations

from dataclasses import dataclass

from storage.db import Conn, Tx, dialect, execute, fetch_all, fetch_one
from storage.events import StoredEvent, _event_of

OWNS = ("export_progress", "export_events")



@dataclass(frozen=True, slots=True)
class ExportProgress:
    """How far a target has written an account's events: ``last_rowid`` written (0: none), ``pending_rowid`` the
    end of a claimed range not yet written (None: none); ``updated_at`` None where no progress is stored yet."""

    account_id: str
    last_rowid: int
    pending_rowid: int | None
    updated_at: str | None = None


# PostgreSQL: an event of the account ``a.id`` that the target (the next parameter) has not claimed.
_UNCLAIMED = ("e.account_id = a.id AND NOT EXISTS (SELECT 1 FROM export_events x WHERE x.target = ? "
              "AND x.account_id = e.account_id AND x.event_id = e.id)")


async def accounts_to_export(conn: Conn, target: str) -> list[ExportProgress]:
    """Accounts with events past their watermark or a claimed range, with their progress."""
    if dialect(conn) == "postgresql":
        rows = await fetch_all(
            conn,
            "SELECT a.id AS account_id, COALESCE(p.last_rowid, 0) AS last_rowid, p.pending_rowid AS pending_rowid "
            "FROM accounts a LEFT JOIN export_progress p ON p.target = ? AND p.account_id = a.id "
            f"WHERE p.pending_rowid IS NOT NULL OR EXISTS (SELECT 1 FROM events e WHERE {_UNCLAIMED}) ORDER BY a.id",
            (target, target),
        )
        return [ExportProgress(r[0], int(r[1]), r[2]) for r in rows]
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


# -- PostgreSQL: claims of events, not ranges of rowids ------------------------------------------------------


async def try_lock_account(tx: Tx, target: str, account_id: str) -> bool:
    """Takes the transaction's lock on writing the account's events to ``target``; False when another node
    holds it (the lock goes with the transaction, or with the connection of a node that died)."""
    row = await fetch_one(tx, "SELECT pg_try_advisory_xact_lock(hashtextextended(?, 0))",
                          (f"linksvc-export|{target}|{account_id}",))
    return bool(row is not None and row[0])


async def ensure_progress(tx: Tx, target: str, account_id: str, now: str) -> None:
    """The account's progress row for ``target`` (nothing written yet), if it has none: the row whose lock
    :func:`claim_next` takes."""
    await execute(tx, "INSERT INTO export_progress (target, account_id, last_rowid, pending_rowid, updated_at) "
                      "VALUES (?, ?, 0, NULL, ?) ON CONFLICT (target, account_id) DO NOTHING",
                  (target, account_id, now))


async def claim_next(tx: Tx, target: str, account_id: str, last_rowid: int, limit: int, now: str) -> int | None:
    """Claims the account's next ``limit`` events not claimed by ``target`` (received first, first), as the
    positions after ``last_rowid``; returns the last position claimed. None when there are none, or when the
    progress is no longer at ``last_rowid`` or another range is claimed (another node got there first).

    Run it as a serializable unit that is run again when refused (:meth:`PostgresDatabase.write`): the
    progress row is locked first, so a second node's claim waits for the first's commit and is then refused
    and run again, and sees the range the first claimed."""
    row = await fetch_one(tx, "SELECT last_rowid, pending_rowid FROM export_progress WHERE target = ? "
                              "AND account_id = ? FOR UPDATE", (target, account_id))
    if row is None or int(row[0]) != last_rowid or row[1] is not None:
        return None
    claimed = await execute(
        tx,
        "INSERT INTO export_events (target, account_id, event_id, position) "
        "SELECT :target, :account_id, n.id, :last + row_number() OVER (ORDER BY n.received_at, n.id) FROM "
        "(SELECT e.id, e.received_at FROM events e WHERE e.account_id = :account_id AND NOT EXISTS "
        "(SELECT 1 FROM export_events x WHERE x.target = :target AND x.account_id = e.account_id "
        "AND x.event_id = e.id) ORDER BY e.received_at, e.id LIMIT :limit) n",
        {"target": target, "account_id": account_id, "last": last_rowid, "limit": limit},
    )
    if claimed <= 0:
        return None
    pending = last_rowid + claimed
    await execute(tx, "UPDATE export_progress SET pending_rowid = ?, updated_at = ? WHERE target = ? "
                      "AND account_id = ?", (pending, now, target, account_id))
    return pending


async def progress_of(conn: Conn, target: str, account_id: str) -> ExportProgress | None:
    """The account's progress for ``target``, if any."""
    row = await fetch_one(conn, "SELECT account_id, last_rowid, pending_rowid, updated_at FROM export_progress "
                                "WHERE target = ? AND account_id = ?", (target, account_id))
    return None if row is None else ExportProgress(row[0], int(row[1]), row[2], row[3])


async def claimed_events(conn: Conn, target: str, account_id: str, after: int,
                         upto: int) -> list[tuple[int, StoredEvent]]:
    """The events ``target`` claimed at positions (``after``, ``upto``], in position order, each with it."""
    rows = await fetch_all(
        conn,
        "SELECT x.position AS export_position, e.* FROM export_events x JOIN events e ON e.id = x.event_id "
        "WHERE x.target = ? AND x.account_id = ? AND x.position > ? AND x.position <= ? ORDER BY x.position",
        (target, account_id, after, upto),
    )
    return [(int(row["export_position"]), _event_of(row)) for row in rows]


async def count_unclaimed(conn: Conn, target: str, account_id: str) -> int:
    """How many of the account's events ``target`` has not claimed (the progress of ``linksvc export``)."""
    row = await fetch_one(conn, "SELECT count(*) FROM events e, (SELECT ?::text AS id) a "
                                f"WHERE {_UNCLAIMED}", (account_id, target))
    return int(row[0]) if row else 0
