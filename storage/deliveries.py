"""The outbox: the events and reversals still to fan out (``fanout``, one row each, written with the event),
the deliveries they became (``deliveries``, one row per connection and kind, written by the dispatcher as it
takes the ``fanout`` rows), claims of due deliveries under a lease, their outcomes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from storage.db import Conn, Row, Tx, dialect, execute, fetch_all, fetch_one, statement_chunks
from storage.documents import Document

OWNS = ("deliveries", "fanout")


@dataclass(frozen=True, slots=True)
class DeliveryRecord:
    """One delivery of the outbox: what to send where, and how its tries went."""

    seq: int
    id: str
    account_id: str
    connection_id: str
    destination: str
    event_id: str
    trigger: str
    kind: str
    order_key: str
    state: str
    reason: str | None
    tries: int
    next_attempt_at: str
    lease_until: str | None
    last_status: int | None
    last_error: str | None
    created_at: str
    updated_at: str
    delivered_at: str | None
    # The webhook's ``webhook-id`` (None on rows written before issue 37: their ``id`` is) and the replay that
    # made the delivery (None: the live fan-out did).
    message_id: str | None = None
    replay_id: str | None = None
    # A ``link.clicked`` delivery's clicks, as the JSON array of their ids (None: an event's delivery).
    click_ids: str | None = None

    @property
    def dedup_key(self) -> str:
        """What a receiver deduplicates this delivery's message by: the same for every delivery of one
        (connection, event, trigger, kind), retries and replays included."""
        return self.message_id or self.id


_DELIVERY = ", ".join(DeliveryRecord.__dataclass_fields__)
_D_DELIVERY = ", ".join(f"d.{name}" for name in DeliveryRecord.__dataclass_fields__)


def _delivery(row: Row) -> DeliveryRecord:
    return DeliveryRecord(*row)

COLUMNS = ("id", "account_id", "connection_id", "destination", "event_id", "trigger", "kind", "order_key", "state",
           "reason", "next_attempt_at", "created_at", "updated_at", "message_id", "replay_id", "click_ids")
_MARKS = "(" + ", ".join("?" for _ in COLUMNS) + ")"
_ROWS_PER_STATEMENT = 500


async def enqueue(tx: Tx, rows: Sequence[dict[str, Any]]) -> None:
    """New deliveries in order, a few hundred per statement (``replay_id`` may be left out: a live one;
    ``click_ids`` too: an event's)."""
    for start in range(0, len(rows), _ROWS_PER_STATEMENT):
        chunk = rows[start:start + _ROWS_PER_STATEMENT]
        await execute(tx, f"INSERT INTO deliveries ({', '.join(COLUMNS)}) VALUES {', '.join([_MARKS] * len(chunk))}",
                      [row.get(c) for row in chunk for c in COLUMNS])


async def message_ids(conn: Conn, account_id: str, connection_id: str,
                      event_ids: Sequence[str]) -> dict[tuple[str, str, str], str]:
    """The deduplication key each (event, trigger, kind) of these events already has at the connection (its
    first delivery's), a few hundred events per statement."""
    found: dict[tuple[str, str, str], str] = {}
    wanted = sorted(set(event_ids))
    for start in range(0, len(wanted), _ROWS_PER_STATEMENT):
        chunk = wanted[start:start + _ROWS_PER_STATEMENT]
        rows = await fetch_all(
            conn,
            "SELECT event_id, trigger, kind, coalesce(message_id, id) FROM deliveries WHERE account_id = ? "
            f"AND connection_id = ? AND event_id IN ({', '.join('?' for _ in chunk)}) ORDER BY seq",
            [account_id, connection_id, *chunk])
        for r in rows:
            found.setdefault((r[0], r[1], r[2]), r[3])
    return found


async def replay_states(conn: Conn, replay_id: str) -> dict[str, int]:
    """How many of a replay's deliveries are in each state (the states they have)."""
    rows = await fetch_all(conn, "SELECT state, count(*) FROM deliveries WHERE replay_id = ? GROUP BY state",
                           (replay_id,))
    return {str(r[0]): int(r[1]) for r in rows}


async def clicks_pending(conn: Conn, connection_id: str, at_most: int) -> int:
    """How many of the connection's ``link.clicked`` deliveries still wait to be sent, counted up to ``at_most``
    (the pending ones of a connection are one range of ``deliveries_order``)."""
    row = await fetch_one(conn, "SELECT count(*) FROM (SELECT 1 FROM deliveries WHERE connection_id = ? "
                                "AND state = 'pending' AND trigger = 'click' LIMIT ?) AS waiting",
                          (connection_id, at_most))
    return int(row[0]) if row else 0


async def replay_pending(conn: Conn, replay_id: str) -> int:
    """How many of a replay's deliveries still wait to be sent."""
    row = await fetch_one(conn, "SELECT count(*) FROM deliveries WHERE replay_id = ? AND state = 'pending'",
                          (replay_id,))
    return int(row[0]) if row else 0


@dataclass(frozen=True, slots=True)
class FanoutRecord:
    """An accepted event (``trigger`` ``event``) or a reversal (``reversal``) whose deliveries are still to be
    worked out, from the time it was accepted."""

    seq: int
    account_id: str
    event_id: str
    trigger: str
    created_at: str


async def add_fanout(tx: Tx, rows: Sequence[tuple[str, str, str, str]]) -> None:
    """``(account_id, event_id, trigger, created_at)`` of each, in order (their ``seq`` is that order)."""
    for chunk in statement_chunks(rows):
        await execute(tx, "INSERT INTO fanout (account_id, event_id, trigger, created_at) VALUES "
                          + ", ".join(["(?, ?, ?, ?)"] * len(chunk)), [v for row in chunk for v in row])


async def fanout_waiting(conn: Conn, account_id: str | None = None) -> bool:
    """Whether any event or reversal (of the account, when given) waits to be fanned out."""
    if account_id is None:
        row = await fetch_one(conn, "SELECT 1 FROM fanout LIMIT 1")
    else:
        row = await fetch_one(conn, "SELECT 1 FROM fanout WHERE account_id = ? LIMIT 1", (account_id,))
    return row is not None


async def take_fanout(tx: Tx, limit: int, account_id: str | None = None) -> list[FanoutRecord]:
    """The first ``limit`` rows (of the account, when given) in their order, deleted: the caller writes their
    deliveries in the same unit of work. Callers take turns (one writer on SQLite; an advisory lock, at
    ``READ COMMITTED``, on PostgreSQL), so no row is taken twice and deliveries follow the rows' order."""
    where, params = ("WHERE account_id = ? ", [account_id]) if account_id is not None else ("", [])
    rows = await fetch_all(tx, f"SELECT seq, account_id, event_id, trigger, created_at FROM fanout {where}"
                               "ORDER BY seq LIMIT ?", [*params, limit])
    if rows:
        await execute(tx, f"DELETE FROM fanout WHERE seq IN ({', '.join('?' for _ in rows)})",
                      [r[0] for r in rows])
    return [FanoutRecord(int(r[0]), r[1], r[2], r[3], r[4]) for r in rows]


async def connections(conn: Conn, account_id: str) -> list[Document]:
    """The account's enabled connections (a disabled one gets no deliveries at all)."""
    rows = await fetch_all(conn, "SELECT id, body, created_at, updated_at FROM connections "
                                 "WHERE account_id = ? AND enabled = 1 ORDER BY id", (account_id,))
    return [Document(r[0], account_id, orjson.loads(r[1]), r[2], r[3]) for r in rows]


_CLAIMABLE = (
    "d.state = 'pending' AND d.next_attempt_at <= ? AND (d.lease_until IS NULL OR d.lease_until < ?) "
    "AND NOT EXISTS (SELECT 1 FROM deliveries e WHERE e.state = 'pending' AND e.connection_id = d.connection_id "
    "AND e.order_key = d.order_key AND e.seq < d.seq)"
)


async def claim(tx: Tx, now: str, lease_until: str, limit: int, claimant: str | None = None) -> list[DeliveryRecord]:
    """Due pending deliveries not leased by anyone, each the first pending one of its connection and
    order key (so one customer's deliveries reach a connection in order); leased to the caller.

    On PostgreSQL several nodes claim at once: the rows are locked ``FOR UPDATE SKIP LOCKED`` (a row another
    node is claiming is passed over, not waited for; one whose lease another node took meanwhile is read
    again and left out) and leased to ``claimant``, so that only its outcome is recorded
    (:func:`record`); the lease lets another node take them over once it has run out. Run it in a ``READ
    COMMITTED`` transaction there (:mod:`linksvc.forwarding.dispatcher`)."""
    if dialect(tx) == "postgresql":
        rows = await fetch_all(
            tx,
            f"SELECT {_D_DELIVERY} FROM deliveries d WHERE {_CLAIMABLE} ORDER BY d.next_attempt_at, d.seq LIMIT ? "
            "FOR UPDATE OF d SKIP LOCKED",
            (now, now, limit),
        )
        if rows:
            marks = ", ".join("?" for _ in rows)
            await execute(tx, f"UPDATE deliveries SET lease_until = ?, claimed_by = ? WHERE seq IN ({marks})",
                          [lease_until, claimant, *(r["seq"] for r in rows)])
        return [_delivery(r) for r in rows]
    rows = await fetch_all(
        tx,
        f"SELECT {_D_DELIVERY} FROM deliveries d WHERE {_CLAIMABLE} ORDER BY d.next_attempt_at, d.seq LIMIT ?",
        (now, now, limit),
    )
    if rows:
        marks = ", ".join("?" for _ in rows)
        await execute(tx, f"UPDATE deliveries SET lease_until = ? WHERE seq IN ({marks})",
                      [lease_until, *(r["seq"] for r in rows)])
    # lease_until as read, before this lease (the caller knows its own)
    return [_delivery(r) for r in rows]


async def record(tx: Tx, seq: int, state: str, tries: int, next_attempt_at: str, status: int | None,
                 error: str | None, reason: str | None, now: str, claimant: str | None = None) -> bool:
    """The outcome of a try; on PostgreSQL only while the delivery is still leased to ``claimant`` (False
    when another node took it over after the lease ran out: that node's outcome is the one kept)."""
    params = [state, tries, next_attempt_at, status, error, reason, now, state, now, seq]
    released, owned = "", ""
    if dialect(tx) == "postgresql":
        released, owned = "claimed_by = NULL, ", " AND claimed_by IS NOT DISTINCT FROM ?"
        params.append(claimant)
    changed = await execute(
        tx,
        f"UPDATE deliveries SET state = ?, tries = ?, next_attempt_at = ?, lease_until = NULL, {released}"
        "last_status = ?, "
        "last_error = ?, reason = coalesce(?, reason), updated_at = ?, "
        f"delivered_at = CASE WHEN ? = 'delivered' THEN ? ELSE delivered_at END WHERE seq = ?{owned}",
        params,
    )
    return changed == 1


async def next_due(conn: Conn) -> str | None:
    row = await fetch_one(conn, "SELECT min(next_attempt_at) AS at FROM deliveries WHERE state = 'pending'")
    return row["at"] if row else None


async def by_id(conn: Conn, account_id: str, delivery_id: str) -> DeliveryRecord | None:
    row = await fetch_one(conn, f"SELECT {_DELIVERY} FROM deliveries WHERE account_id = ? AND id = ?",
                          (account_id, delivery_id))
    return None if row is None else _delivery(row)


async def of_event(conn: Conn, account_id: str, event_id: str) -> list[DeliveryRecord]:
    rows = await fetch_all(conn, f"SELECT {_DELIVERY} FROM deliveries WHERE account_id = ? AND event_id = ? "
                                 "ORDER BY seq", (account_id, event_id))
    return [_delivery(r) for r in rows]


DELIVERY_ORDERS = {"created": "seq", "updated": "updated_at", "state": "state", "tries": "tries"}
"""The orders of a connection's deliveries by name: the column sorted by (``created``: the order they were made
in). Ties are ordered by ``seq``, the same way, so offset paging shows each delivery once."""


async def of_connection(conn: Conn, account_id: str, connection_id: str, state: str | None, limit: int,
                        offset: int, sort: str = "created", descending: bool = True, kind: str | None = None
                        ) -> list[DeliveryRecord]:
    """A page of the connection's deliveries in the order of ``sort`` (:data:`DELIVERY_ORDERS`, ties by when they
    were made), of one state and of one kind when given."""
    where = "account_id = ? AND connection_id = ?" + (" AND state = ?" if state else "") + (
        " AND kind = ?" if kind else "")
    params: list[Any] = [account_id, connection_id, *([state] if state else []), *([kind] if kind else [])]
    way = "DESC" if descending else "ASC"
    column = DELIVERY_ORDERS[sort]
    order = f"seq {way}" if column == "seq" else f"{column} {way}, seq {way}"
    rows = await fetch_all(conn, f"SELECT {_DELIVERY} FROM deliveries WHERE {where} ORDER BY {order} LIMIT ? "
                                 "OFFSET ?", [*params, limit, offset])
    return [_delivery(r) for r in rows]


async def retry(tx: Tx, account_id: str, delivery_id: str, now: str) -> bool:
    """A failed or dead delivery back to pending, due now; False when it is in another state."""
    changed = await execute(
        tx,
        "UPDATE deliveries SET state = 'pending', next_attempt_at = ?, lease_until = NULL, updated_at = ? "
        "WHERE account_id = ? AND id = ? AND state IN ('failed', 'dead')",
        (now, now, account_id, delivery_id),
    )
    return changed == 1


async def retry_failed(tx: Tx, account_id: str, connection_id: str, now: str) -> int:
    """Every failed or dead delivery of the connection back to pending, due now; how many."""
    return await execute(
        tx,
        "UPDATE deliveries SET state = 'pending', next_attempt_at = ?, lease_until = NULL, updated_at = ? "
        "WHERE account_id = ? AND connection_id = ? AND state IN ('failed', 'dead')",
        (now, now, account_id, connection_id),
    )


async def filtered_reasons(conn: Conn, account_id: str, connection_id: str) -> list[str]:
    """The distinct reasons of the connection's filtered deliveries (the connection's own rules give them: a
    bounded set, named by its types, destination and settings)."""
    rows = await fetch_all(conn, "SELECT DISTINCT reason FROM deliveries WHERE account_id = ? AND connection_id = ? "
                                 "AND state = 'filtered' AND reason IS NOT NULL", (account_id, connection_id))
    return sorted(str(r[0]) for r in rows)


@dataclass(frozen=True, slots=True)
class ReasonGroups:
    """The most frequent reasons of one state's deliveries (``rows``: (reason, deliveries), most first), how many
    reasons there are in all and how many deliveries they hold: read in one statement, so they agree."""

    rows: tuple[tuple[str | None, int], ...]
    groups: int
    deliveries: int


async def state_counts(conn: Conn, account_id: str, connection_id: str) -> dict[str, int]:
    """How many of the connection's deliveries are in each state (the states it has)."""
    rows = await fetch_all(conn, "SELECT state, count(*) FROM deliveries WHERE account_id = ? AND connection_id = ? "
                                 "GROUP BY state", (account_id, connection_id))
    return {str(r[0]): int(r[1]) for r in rows}


async def reason_groups(conn: Conn, account_id: str, connection_id: str, state: str, limit: int) -> ReasonGroups:
    """The ``limit`` most frequent reasons of the connection's deliveries in ``state`` (then by reason, null
    first): grouped, ordered and cut by the store, so what comes back is at most ``limit`` rows however many
    distinct reasons the deliveries carry (a vendor's reason may name the event's own time)."""
    nulls = " NULLS FIRST" if dialect(conn) == "postgresql" else ""
    rows = await fetch_all(
        conn,
        "SELECT reason, count(*), count(*) OVER (), sum(count(*)) OVER () FROM deliveries "
        "WHERE account_id = ? AND connection_id = ? AND state = ? GROUP BY reason "
        f"ORDER BY count(*) DESC, reason{nulls} LIMIT ?",
        (account_id, connection_id, state, limit))
    return ReasonGroups(tuple((r[0], int(r[1])) for r in rows), int(rows[0][2]) if rows else 0,
                        int(rows[0][3]) if rows else 0)


async def retry_filtered(tx: Tx, account_id: str, connection_id: str, reasons: Sequence[str], now: str,
                         delivery_id: str | None = None) -> int:
    """The connection's filtered deliveries with one of ``reasons`` (only ``delivery_id`` when given) back to
    pending, due now, their reason kept until an outcome replaces it; how many."""
    if not reasons:
        return 0
    marks = ", ".join("?" for _ in reasons)
    one = " AND id = ?" if delivery_id is not None else ""
    return await execute(
        tx,
        "UPDATE deliveries SET state = 'pending', next_attempt_at = ?, lease_until = NULL, updated_at = ? "
        f"WHERE account_id = ? AND connection_id = ? AND state = 'filtered' AND reason IN ({marks}){one}",
        [now, now, account_id, connection_id, *reasons, *([delivery_id] if delivery_id is not None else [])],
    )


async def counts_by_state(conn: Conn) -> list[tuple[str, str, int]]:
    """(destination, state, count) for the metrics (on SQLite's reader it never waits: a scrape calls it)."""
    return [(r[0], r[1], int(r[2])) for r in await fetch_all(
        conn, "SELECT destination, state, count(*) FROM deliveries GROUP BY destination, state")]
