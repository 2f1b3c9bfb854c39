"""Dashboard sessions: one row per sign-in, found by the SHA-256 of the cookie's session id.

Rows hold digests only (of the session id, and a fingerprint of the admin token); the rules about them
(lifetime, which token is current) live in :mod:`linksvc.accounts.sessions`.
"""

from __future__ import annotations

from dataclasses import dataclass

from storage.db import Conn, Tx, execute, fetch_one

OWNS = ("dashboard_sessions",)


@dataclass(frozen=True)
class SessionRecord:
    id_hash: str
    token_fingerprint: str
    created_at: str
    expires_at: str
    person_id: str | None = None  # the person signed in; None: a session opened with the admin token


async def insert(tx: Tx, record: SessionRecord) -> None:
    await execute(
        tx,
        "INSERT INTO dashboard_sessions (id_hash, token_fingerprint, created_at, expires_at, person_id) "
        "VALUES (?, ?, ?, ?, ?)",
        (record.id_hash, record.token_fingerprint, record.created_at, record.expires_at, record.person_id),
    )


async def get(conn: Conn, id_hash: str) -> SessionRecord | None:
    row = await fetch_one(
        conn,
        "SELECT id_hash, token_fingerprint, created_at, expires_at, person_id FROM dashboard_sessions "
        "WHERE id_hash = ?",
        (id_hash,),
    )
    if row is None:
        return None
    return SessionRecord(row["id_hash"], row["token_fingerprint"], row["created_at"], row["expires_at"],
                         row["person_id"])


async def delete(tx: Tx, id_hash: str) -> bool:
    return await execute(tx, "DELETE FROM dashboard_sessions WHERE id_hash = ?", (id_hash,)) > 0


async def delete_void(tx: Tx, token_fingerprint: str | None, now: str) -> int:
    """Deletes the sessions that expired by ``now`` or were opened under another admin token (a person's
    session is not opened under the admin token: it lasts until it expires or the person's password changes);
    ``token_fingerprint`` None: the expired ones only."""
    if token_fingerprint is None:
        return await execute(tx, "DELETE FROM dashboard_sessions WHERE expires_at <= ?", (now,))
    return await execute(
        tx,
        "DELETE FROM dashboard_sessions WHERE expires_at <= ? OR (person_id IS NULL AND token_fingerprint != ?)",
        (now, token_fingerprint),
    )


async def has_operator_sessions(conn: Conn) -> bool:
    """Whether any session was opened under an admin token (not a person's)."""
    return await fetch_one(conn, "SELECT 1 FROM dashboard_sessions WHERE person_id IS NULL LIMIT 1") is not None


async def delete_of_person(tx: Tx, person_id: str) -> int:
    """Ends every session of the person (a new password, a removed person)."""
    return await execute(tx, "DELETE FROM dashboard_sessions WHERE person_id = ?", (person_id,))


async def count(conn: Conn) -> int:
    row = await fetch_one(conn, "SELECT count(*) FROM dashboard_sessions")
    return int(row[0]) if row else 0
