"""Replays: a connection sent the account's accepted events of a time range again (issue 37). A row keeps the
range, the state (``queued``, ``running``, ``done``, ``failed``), where the replay stopped (the last event taken,
in ``received_at``, ``id`` order) and its counts, so that any dispatcher resumes it after a restart. Its
deliveries are ordinary ``deliveries`` rows carrying its id (``storage.deliveries``)."""

from __future__ import annotations

from dataclasses import dataclass

from storage.db import Conn, Row, Tx, execute, fetch_all, fetch_one

OWNS = ("replays",)
ACTIVE = ("queued", "running")


@dataclass(frozen=True, slots=True)
class ReplayRecord:
    id: str
    account_id: str
    connection_id: str
    range_from: str
    range_to: str
    state: str
    events_total: int
    events_found: int
    queued: int
    skipped: int
    taken_all: bool
    cursor_at: str | None
    cursor_id: str | None
    error: str | None
    created_at: str
    updated_at: str
    finished_at: str | None


_FIELDS = ", ".join(ReplayRecord.__dataclass_fields__)
_MARKS = ", ".join("?" for _ in ReplayRecord.__dataclass_fields__)


def _replay(row: Row) -> ReplayRecord:
    values = list(row)
    values[10] = bool(values[10])
    return ReplayRecord(*values)


async def insert(tx: Tx, replay: ReplayRecord) -> None:
    values = [getattr(replay, name) for name in ReplayRecord.__dataclass_fields__]
    await execute(tx, f"INSERT INTO replays ({_FIELDS}) VALUES ({_MARKS})",
                  [int(v) if isinstance(v, bool) else v for v in values])


async def by_id(conn: Conn, account_id: str, connection_id: str, replay_id: str) -> ReplayRecord | None:
    row = await fetch_one(conn, f"SELECT {_FIELDS} FROM replays WHERE account_id = ? AND connection_id = ? AND id = ?",
                          (account_id, connection_id, replay_id))
    return None if row is None else _replay(row)


async def of_connection(conn: Conn, account_id: str, connection_id: str, limit: int,
                        offset: int) -> list[ReplayRecord]:
    """The connection's replays, newest first."""
    rows = await fetch_all(conn, f"SELECT {_FIELDS} FROM replays WHERE account_id = ? AND connection_id = ? "
                                 "ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
                           (account_id, connection_id, limit, offset))
    return [_replay(r) for r in rows]


async def active_of_connection(conn: Conn, account_id: str, connection_id: str) -> ReplayRecord | None:
    row = await fetch_one(conn, f"SELECT {_FIELDS} FROM replays WHERE account_id = ? AND connection_id = ? "
                                "AND state IN ('queued', 'running') ORDER BY created_at LIMIT 1",
                          (account_id, connection_id))
    return None if row is None else _replay(row)


async def any_active(conn: Conn) -> bool:
    """Whether any replay is still queued or running (read by every pass of the dispatcher: an index only)."""
    return await fetch_one(conn, "SELECT 1 FROM replays WHERE state IN ('queued', 'running') LIMIT 1") is not None


async def active(conn: Conn, limit: int) -> list[ReplayRecord]:
    """The replays still queued or running, oldest first."""
    rows = await fetch_all(conn, f"SELECT {_FIELDS} FROM replays WHERE state IN ('queued', 'running') "
                                 "ORDER BY created_at, id LIMIT ?", (limit,))
    return [_replay(r) for r in rows]


async def advance(tx: Tx, replay_id: str, cursor: tuple[str, str] | None, found: int, queued: int, skipped: int,
                  taken_all: bool, now: str) -> None:
    """A batch taken: the counts grow, the cursor moves (kept when ``None``), the replay runs."""
    await execute(tx, "UPDATE replays SET state = 'running', events_found = events_found + ?, queued = queued + ?, "
                      "skipped = skipped + ?, taken_all = ?, cursor_at = coalesce(?, cursor_at), "
                      "cursor_id = coalesce(?, cursor_id), updated_at = ? WHERE id = ?",
                  (found, queued, skipped, int(taken_all), cursor[0] if cursor else None,
                   cursor[1] if cursor else None, now, replay_id))


async def finish(tx: Tx, replay_id: str, state: str, error: str | None, now: str) -> None:
    """``done`` or ``failed`` (with why)."""
    await execute(tx, "UPDATE replays SET state = ?, error = ?, updated_at = ?, finished_at = ? WHERE id = ?",
                  (state, error, now, now, replay_id))
