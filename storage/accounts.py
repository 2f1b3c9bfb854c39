"""Accounts, API keys (hashed) and access tokens (hashed)."""

from __future__ import annotations

from dataclasses import dataclass

from storage.db import Conn, Row, Tx, execute, fetch_all, fetch_one

OWNS = ("accounts", "api_keys", "access_tokens")


@dataclass(frozen=True, slots=True)
class AccountRecord:
    id: str
    name: str
    environment: str
    created_at: str
    updated_at: str


@dataclass(frozen=True, slots=True)
class ApiKeyRecord:
    """An API key: its digest and first characters, never the key."""

    id: str
    account_id: str
    kind: str
    name: str
    key_hash: str
    key_prefix: str
    created_at: str
    revoked_at: str | None


@dataclass(frozen=True, slots=True)
class TokenGrant:
    """What an access token grants, with its key's revocation (a revoked key stops its tokens)."""

    account_id: str
    key_id: str
    kind: str
    expires_at: str
    revoked_at: str | None


_ACCOUNT = "id, name, environment, created_at, updated_at"
_KEY = "id, account_id, kind, name, key_hash, key_prefix, created_at, revoked_at"


def _account(row: Row | None) -> AccountRecord | None:
    return None if row is None else AccountRecord(row[0], row[1], row[2], row[3], row[4])


def _key(row: Row | None) -> ApiKeyRecord | None:
    return None if row is None else ApiKeyRecord(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7])


async def get_account(conn: Conn, account_id: str) -> AccountRecord | None:
    return _account(await fetch_one(conn, f"SELECT {_ACCOUNT} FROM accounts WHERE id = ?", (account_id,)))


async def list_accounts(conn: Conn, limit: int, offset: int) -> list[AccountRecord]:
    rows = await fetch_all(
        conn, f"SELECT {_ACCOUNT} FROM accounts ORDER BY created_at, id LIMIT ? OFFSET ?", (limit, offset)
    )
    return [AccountRecord(r[0], r[1], r[2], r[3], r[4]) for r in rows]


async def count_accounts(conn: Conn) -> int:
    row = await fetch_one(conn, "SELECT count(*) FROM accounts")
    return int(row[0]) if row else 0


async def insert_account(conn: Tx, account_id: str, name: str, environment: str, now: str) -> None:
    await execute(
        conn,
        "INSERT INTO accounts (id, name, environment, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
        (account_id, name, environment, now, now),
    )


async def update_account(conn: Tx, account_id: str, name: str, environment: str, now: str) -> bool:
    return (
        await execute(
            conn,
            "UPDATE accounts SET name = ?, environment = ?, updated_at = ? WHERE id = ?",
            (name, environment, now, account_id),
        )
        > 0
    )


async def delete_account(conn: Tx, account_id: str) -> bool:
    return await execute(conn, "DELETE FROM accounts WHERE id = ?", (account_id,)) > 0


async def insert_key(
    conn: Tx, key_id: str, account_id: str, kind: str, name: str, key_hash: str, prefix: str, now: str
) -> None:
    await execute(
        conn,
        "INSERT INTO api_keys (id, account_id, kind, name, key_hash, key_prefix, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (key_id, account_id, kind, name, key_hash, prefix, now),
    )


async def key_by_hash(conn: Conn, key_hash: str) -> ApiKeyRecord | None:
    return _key(await fetch_one(conn, f"SELECT {_KEY} FROM api_keys WHERE key_hash = ?", (key_hash,)))


async def get_key(conn: Conn, account_id: str, key_id: str) -> ApiKeyRecord | None:
    return _key(await fetch_one(
        conn, f"SELECT {_KEY} FROM api_keys WHERE account_id = ? AND id = ?", (account_id, key_id)
    ))


async def list_keys(conn: Conn, account_id: str) -> list[ApiKeyRecord]:
    rows = await fetch_all(
        conn, f"SELECT {_KEY} FROM api_keys WHERE account_id = ? ORDER BY created_at, id", (account_id,)
    )
    return [ApiKeyRecord(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]) for r in rows]


async def revoke_key(conn: Tx, account_id: str, key_id: str, now: str) -> bool:
    changed = await execute(
        conn,
        "UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE account_id = ? AND id = ?",
        (now, account_id, key_id),
    )
    if changed:
        await execute(conn, "DELETE FROM access_tokens WHERE key_id = ?", (key_id,))
    return changed > 0


async def insert_token(
    conn: Tx, token_hash: str, account_id: str, key_id: str, kind: str, now: str, expires_at: str
) -> None:
    await execute(
        conn,
        "INSERT INTO access_tokens (token_hash, account_id, key_id, kind, created_at, expires_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (token_hash, account_id, key_id, kind, now, expires_at),
    )


async def token_principal(conn: Conn, token_hash: str) -> TokenGrant | None:
    """The token's account, key and kind, joined with its key so that a revoked key stops it."""
    row = await fetch_one(
        conn,
        "SELECT t.account_id, t.key_id, t.kind, t.expires_at, k.revoked_at "
        "FROM access_tokens t JOIN api_keys k ON k.id = t.key_id WHERE t.token_hash = ?",
        (token_hash,),
    )
    return None if row is None else TokenGrant(row[0], row[1], row[2], row[3], row[4])


async def delete_expired_tokens(conn: Tx, now: str) -> int:
    return await execute(conn, "DELETE FROM access_tokens WHERE expires_at <= ?", (now,))
