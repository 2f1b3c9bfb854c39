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


async def insert(tx: Tx, record: SessionRecord) -> None:
    await execute(
        tx,
        "INSERT INTO dashboard_sessions (id_hash, token_fingerprint, created_at, expires_at) VALUES (?, ?, ?, ?)",
        (record.id_hash, record.token_fingerprint, record.created_at, record.expires_at),
    )


async def get(conn: Conn, id_hash: str) -> SessionRecord | None:
    row = await fetch_one(
        conn,
        "SELECT id_hash, token_fingerprint, created_at, expires_at FROM dashboard_sessions WHERE id_hash = ?",
        (id_hash,),
    )
    if row is None:
        return None
    return SessionRecord(row["id_hash"], row["token_fingerprint"], row["created_at"], row["expires_at"])


async def delete(tx: Tx, id_hash: str) -> bool:
    return await execute(tx, "DELETE FROM dashboard_sessions WHERE id_hash = ?", (id_hash,)) > 0


async def delete_void(tx: Tx, token_fingerprint: str, now: str) -> int:
    """Deletes the sessions that expired by ``now`` or were opened under another admin token."""
    return await execute(
        tx,
        "DELETE FROM dashboard_sessions WHERE expires_at <= ? OR token_fingerprint != ?",
        (now, token_fingerprint),
    )


async def count(conn: Conn) -> int:
    row = await fetch_one(conn, "SELECT count(*) FROM dashboard_sessions")
    return int(row[0]) if row else 0
