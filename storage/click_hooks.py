"""The ``link.clicked`` webhooks' bookkeeping (issue 37): how far each subscribed webhook connection has taken the
account's stored clicks, the clicks after that which match its filters, and the clicks a delivery names.

A connection's cursor (``last_id``) moves only in the unit of work that writes the deliveries of the clicks it
went past, and only from the value the writer read (compare-and-set, :func:`advance`): two dispatchers (two
workers, two nodes) that read the same clicks never both write their deliveries. Clicks are read up to the
horizon under which every id is committed (:func:`storage.feed.click_horizon`), so ``id > last_id`` is exactly
"stored and not yet looked at". On SQLite a deleted click above every click left moves cursors back (the trigger
of migration 0041), since its id is handed out again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from storage.click_exports import _CLICK_COLUMNS, StoredClick, _click_of
from storage.db import Conn, Tx, execute, fetch_all
from storage.documents import Document

OWNS = ("click_hook_progress",)
_IDS_PER_STATEMENT = 500


@dataclass(frozen=True, slots=True)
class HookCursor:
    """Where a subscribed connection stands: every click of its account up to ``last_id`` was looked at."""

    account_id: str
    connection_id: str
    last_id: int


async def webhook_connections(conn: Conn) -> list[Document]:
    """Every enabled webhook connection of every account (those whose config subscribes to clicks are the
    caller's to pick), by account and id."""
    rows = await fetch_all(conn, "SELECT id, account_id, body, created_at, updated_at FROM connections "
                                 "WHERE enabled = 1 AND destination = 'webhook' ORDER BY account_id, id")
    return [Document(r[0], r[1], orjson.loads(r[2]) if isinstance(r[2], str | bytes) else r[2], r[3], r[4])
            for r in rows]


async def cursors(conn: Conn, connection_ids: Sequence[str]) -> dict[str, HookCursor]:
    """The cursors of these connections that have one."""
    if not connection_ids:
        return {}
    marks = ", ".join("?" for _ in connection_ids)
    rows = await fetch_all(conn, "SELECT account_id, connection_id, last_id FROM click_hook_progress "
                                 f"WHERE connection_id IN ({marks})", list(connection_ids))
    return {r[1]: HookCursor(r[0], r[1], int(r[2])) for r in rows}


async def start(tx: Tx, account_id: str, connection_id: str, last_id: int, now: str) -> None:
    """The connection's cursor set at ``last_id`` (clicks after it are its to send), whether it had one or not."""
    await execute(tx, "INSERT INTO click_hook_progress (connection_id, account_id, last_id, updated_at) "
                      "VALUES (?, ?, ?, ?) ON CONFLICT (connection_id) DO UPDATE SET account_id = excluded.account_id, "
                      "last_id = excluded.last_id, updated_at = excluded.updated_at",
                  (connection_id, account_id, last_id, now))


async def advance(tx: Tx, connection_id: str, last_id: int, new_id: int, now: str) -> bool:
    """Moves the cursor from ``last_id`` to ``new_id``; False when it no longer stands at ``last_id`` (another
    dispatcher moved it first: its deliveries are written, these must not be)."""
    changed = await execute(tx, "UPDATE click_hook_progress SET last_id = ?, updated_at = ? "
                                "WHERE connection_id = ? AND last_id = ?", (new_id, now, connection_id, last_id))
    return changed == 1


async def matching(conn: Conn, account_id: str, after: int, upto: int, link_ids: Sequence[str],
                   tags: Sequence[str], bots: str, limit: int) -> tuple[list[StoredClick], int]:
    """The account's clicks with ``after < id <= upto`` that match (a link of ``link_ids`` or one tagged with one of
    ``tags``, when either is given; bots left out, alone or with the people as ``bots`` says), the first ``limit``
    in id order, and how far they were looked for: ``upto``, or the last one's id when ``limit`` were found."""
    if upto <= after:
        return [], after
    clauses, params = ["c.account_id = ?", "c.id > ?", "c.id <= ?"], [account_id, after, upto]
    chosen = []
    if link_ids:
        chosen.append(f"c.link_id IN ({', '.join('?' for _ in link_ids)})")
        params += list(link_ids)
    if tags:
        chosen.append("EXISTS (SELECT 1 FROM link_tags t WHERE t.link_id = c.link_id "
                      f"AND t.tag IN ({', '.join('?' for _ in tags)}))")
        params += list(tags)
    if chosen:
        clauses.append("(" + " OR ".join(chosen) + ")")
    if bots != "include":
        clauses.append("c.bot = ?")
        params.append(1 if bots == "only" else 0)
    rows = await fetch_all(conn, f"SELECT {_CLICK_COLUMNS} FROM clicks c LEFT JOIN links l ON l.id = c.link_id "
                                 f"WHERE {' AND '.join(clauses)} ORDER BY c.id LIMIT ?", [*params, limit])
    found = [_click_of(row) for row in rows]
    return found, (found[-1].id if len(found) == limit else upto)


async def clicks_by_ids(conn: Conn, account_id: str, ids: Sequence[int]) -> list[StoredClick]:
    """The account's clicks of these ids that are still stored (their link may have been deleted since), in id
    order."""
    if not ids:
        return []
    marks = ", ".join("?" for _ in ids)
    rows = await fetch_all(conn, f"SELECT {_CLICK_COLUMNS} FROM clicks c LEFT JOIN links l ON l.id = c.link_id "
                                 f"WHERE c.account_id = ? AND c.id IN ({marks}) ORDER BY c.id", [account_id, *ids])
    return [_click_of(row) for row in rows]


def decode_ids(value: Any) -> list[int]:
    """A delivery's ``click_ids`` column as a list of ids."""
    decoded = orjson.loads(value) if isinstance(value, str | bytes) else value
    return [int(i) for i in decoded] if isinstance(decoded, list) else []


async def link_codes(conn: Conn, account_id: str, ids: Sequence[int]) -> dict[int, str | None]:
    """The code of the link of each of the account's clicks of these ids still stored (what the deliveries page
    shows of a ``link.clicked`` delivery), a few hundred ids per statement."""
    found: dict[int, str | None] = {}
    wanted = sorted(set(ids))
    for start in range(0, len(wanted), _IDS_PER_STATEMENT):
        chunk = wanted[start:start + _IDS_PER_STATEMENT]
        rows = await fetch_all(conn, "SELECT c.id, l.code FROM clicks c LEFT JOIN links l ON l.id = c.link_id "
                                     f"WHERE c.account_id = ? AND c.id IN ({', '.join('?' for _ in chunk)})",
                               [account_id, *chunk])
        found.update({int(r[0]): r[1] for r in rows})
    return found
