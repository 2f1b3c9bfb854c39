"""Accounts, API keys and access tokens: the rules of product decisions section 2.

API keys and access tokens are random secrets of at least 32 bytes. Only their SHA-256 digests are
stored: a digest of a high-entropy secret cannot be reversed, and looking it up by digest does not leak
the secret through timing.
"""

from __future__ import annotations

import hashlib
import secrets
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar
from weakref import WeakKeyDictionary

from linksvc.clock import iso, parse_iso, utcnow
from linksvc.errors import Conflict, InvalidField, NotFound, Unauthorized
from linksvc.readmodel import ReadModel, read_model
from linksvc.resources.models import Account, ApiKeyIn, Environment
from linksvc.store import Store, in_one_unit
from storage import accounts as repo
from storage.accounts import AccountRecord, ApiKeyRecord, TokenGrant
from storage.db import Conn, Tx, dialect

KEY_PREFIX = "lk_"
TOKEN_PREFIX = "lt_"
_KEY_NAMESPACE = uuid.UUID("1b0c3f52-6a0e-4b8e-9a53-6d1f1d7a8a10")


@dataclass(frozen=True)
class Principal:
    """Who is calling the storefront API: the token's account and its key's kind."""

    account_id: str
    key_id: str
    kind: str


def digest(secret: str) -> str:
    # surrogatepass: a credential made of undecodable header bytes hashes to something no key has, not an error
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def account_view(account: AccountRecord) -> dict[str, Any]:
    return {
        "id": account.id,
        "name": account.name,
        "environment": account.environment,
        "created_at": account.created_at,
        "updated_at": account.updated_at,
    }


def key_view(key: ApiKeyRecord) -> dict[str, Any]:
    return {
        "id": key.id,
        "account_id": key.account_id,
        "kind": key.kind,
        "name": key.name,
        "prefix": key.key_prefix,
        "created_at": key.created_at,
        "revoked_at": key.revoked_at,
    }


T = TypeVar("T")


async def upsert_account(tx: Tx, account: Account) -> bool:
    """Create or update; True when something changed."""
    if dialect(tx) == "postgresql" and "\x00" in account.name:  # PostgreSQL's text cannot hold it
        raise InvalidField("name", "may not contain the character U+0000", "Invalid body", rule="format")
    row = await repo.get_account(tx, account.id)
    now = iso(utcnow())
    if row is None:
        await repo.insert_account(tx, account.id, account.name, account.environment, now)
        return True
    if (row.name, row.environment) == (account.name, account.environment):
        return False
    await repo.update_account(tx, account.id, account.name, account.environment, now)
    return True


async def create_account(db: Store, account: Account) -> dict[str, Any]:
    async def unit(tx: Tx) -> AccountRecord | None:
        if await repo.get_account(tx, account.id) is not None:
            raise Conflict("Account exists", f"an account with id {account.id} exists")
        await upsert_account(tx, account)
        return await repo.get_account(tx, account.id)

    row = await in_one_unit(db, unit)
    assert row is not None
    return account_view(row)


async def get_account(conn: Conn, account_id: str) -> AccountRecord:
    row = await repo.get_account(conn, account_id)
    if row is None:
        raise NotFound("Account not found", f"no account with id {account_id}")
    return row


async def read_account(db: Store, account_id: str) -> dict[str, Any]:
    """The account as the admin API shows it."""
    return account_view(await get_account(db.reader, account_id))


async def patch_account(db: Store, account_id: str, name: str | None, environment: Environment | None
                        ) -> dict[str, Any]:
    """Renames the account or changes its environment; a field left None keeps its value."""
    current = await get_account(db.reader, account_id)
    merged = Account.model_validate(
        {"id": current.id, "name": name or current.name, "environment": environment or current.environment})
    return await update_account(db, merged)


async def list_accounts(db: Store, limit: int, offset: int) -> tuple[list[dict[str, Any]], int]:
    """A page of accounts as views, and how many accounts there are in all."""
    rows = await repo.list_accounts(db.reader, limit, offset)
    total = await repo.count_accounts(db.reader)
    return [account_view(r) for r in rows], total


async def list_keys(db: Store, account_id: str) -> list[dict[str, Any]]:
    """The account's API keys as views; NotFound for an unknown account."""
    await get_account(db.reader, account_id)
    return [key_view(r) for r in await repo.list_keys(db.reader, account_id)]


async def get_key(db: Store, account_id: str, key_id: str) -> dict[str, Any]:
    """One API key of the account as a view; NotFound for an unknown account or key."""
    await get_account(db.reader, account_id)
    row = await repo.get_key(db.reader, account_id, key_id)
    if row is None:
        raise NotFound("API key not found", f"no API key with id {key_id} in this account")
    return key_view(row)


async def update_account(db: Store, account: Account) -> dict[str, Any]:
    async def unit(tx: Tx) -> AccountRecord:
        await get_account(tx, account.id)
        await upsert_account(tx, account)
        return await get_account(tx, account.id)

    return account_view(await in_one_unit(db, unit))


async def delete_account(db: Store, account_id: str) -> None:
    async def unit(tx: Tx) -> None:
        if not await repo.delete_account(tx, account_id):
            raise NotFound("Account not found", f"no account with id {account_id}")

    await in_one_unit(db, unit)


async def add_key(tx: Tx, account_id: str, spec: ApiKeyIn) -> tuple[dict[str, Any], str, bool]:
    """Add a key (generated unless the spec carries one). Returns (view, secret, created)."""
    secret = spec.key or KEY_PREFIX + secrets.token_urlsafe(32)
    hashed = digest(secret)
    existing = await repo.key_by_hash(tx, hashed)
    if existing is not None:
        if existing.account_id != account_id:
            raise Conflict("Key in use", "this key belongs to another account")
        if existing.kind != spec.kind:
            # Changing what a live key may do is not an edit: revoke it and issue a new key.
            raise Conflict(
                "Key kind is fixed", f"this key exists as a {existing.kind} key; revoke it and add a new key"
            )
        return key_view(existing), secret, False
    # A seeded key gets an id derived from its digest, so that loading a seed twice adds it once.
    key_id = str(uuid.uuid5(_KEY_NAMESPACE, hashed)) if spec.key else str(uuid.uuid4())
    await repo.insert_key(tx, key_id, account_id, spec.kind, spec.name, hashed, secret[:7], iso(utcnow()))
    row = await repo.get_key(tx, account_id, key_id)
    assert row is not None
    return key_view(row), secret, True


async def create_key(db: Store, account_id: str, spec: ApiKeyIn) -> dict[str, Any]:
    async def unit(tx: Tx) -> tuple[dict[str, Any], str, bool]:
        await get_account(tx, account_id)
        return await add_key(tx, account_id, spec)

    view, secret, _ = await in_one_unit(db, unit)
    return {**view, "key": secret}


async def revoke_key(db: Store, account_id: str, key_id: str) -> dict[str, Any]:
    async def unit(tx: Tx) -> ApiKeyRecord | None:
        if not await repo.revoke_key(tx, account_id, key_id, iso(utcnow())):
            raise NotFound("API key not found", f"no API key with id {key_id} in this account")
        return await repo.get_key(tx, account_id, key_id)

    row = await in_one_unit(db, unit)
    assert row is not None
    return key_view(row)


async def issue_token(db: Store, api_key: str, ttl_seconds: int) -> tuple[str, int]:
    """Exchange an API key for a fresh access token; returns (token, lifetime in seconds)."""
    if not (api_key.isascii() and api_key.isprintable()):  # bytes that are not UTF-8 arrive as surrogates
        raise Unauthorized("Malformed API key", "an API key is printable ASCII")
    key = await repo.key_by_hash(db.reader, digest(api_key))
    if key is None or key.revoked_at is not None:
        raise Unauthorized("Invalid API key", "the x-api-key header holds no active API key")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    now = utcnow()

    async def unit(tx: Tx) -> None:
        # The key may have been revoked while we waited for the writer: check again inside.
        current = await repo.get_key(tx, key.account_id, key.id)
        if current is None or current.revoked_at is not None:
            raise Unauthorized("Invalid API key", "the x-api-key header holds no active API key")
        await repo.delete_expired_tokens(tx, iso(now))
        await repo.insert_token(
            tx, digest(token), key.account_id, key.id, key.kind,
            iso(now), iso(now + timedelta(seconds=ttl_seconds)),
        )

    await in_one_unit(db, unit)
    return token, ttl_seconds


MAX_TOKENS_HELD = 100_000  # access tokens each worker keeps in memory


async def principal_for(db: Store, token: str) -> Principal:
    """Who a bearer token is. What a token grants is held in memory by each worker until a token, key or
    account changes; revocation and expiry are checked at every use."""
    token_hash = digest(token)
    model: ReadModel[str, TokenGrant] = read_model(db, "access", MAX_TOKENS_HELD)
    row = await model.get(token_hash, lambda: repo.token_principal(db.reader, token_hash))
    if row is None:
        raise Unauthorized("Invalid token", "the bearer token is unknown")
    if row.revoked_at is not None:
        raise Unauthorized("Invalid token", "the bearer token's API key was revoked")
    if parse_iso(row.expires_at) <= utcnow():
        raise Unauthorized("Token expired", "the bearer token has expired; get a new one")
    return Principal(account_id=row.account_id, key_id=row.key_id, kind=row.kind)


# What a held, valid token grants, by the token as sent: its expiry (a Unix time) and its principal. Kept under the
# same generation as the tokens ("access"), so a revoked key, a deleted token or account drops it as promptly as
# the grant itself; the expiry is compared at every use.
_CLAIMS: WeakKeyDictionary[Store, ReadModel[str, tuple[float, Principal]]] = WeakKeyDictionary()


def _claims(db: Store) -> ReadModel[str, tuple[float, Principal]]:
    found = _CLAIMS.get(db)
    if found is None:
        found = _CLAIMS[db] = ReadModel(db, "access", MAX_TOKENS_HELD)
    return found


def held_principal(db: Store, token: str) -> Principal | None:
    """Who a bearer token is, if this worker holds the token now and it is valid (neither revoked nor
    expired); else None, without reading the store or saying why: :func:`principal_for` answers those. For a
    path that answers without awaiting anything: a token seen before costs a dictionary lookup, no digest and
    no date parsed (its claims are held until the access generation moves, their expiry checked each time)."""
    claims = _claims(db)
    held = claims.peek(token)
    if held is not None:
        return held[1] if time.time() < held[0] else None
    generation = db.generation("access")
    model: ReadModel[str, TokenGrant] = read_model(db, "access", MAX_TOKENS_HELD)
    row = model.peek(digest(token))
    if row is None or row.revoked_at is not None:
        return None
    expires = parse_iso(row.expires_at).timestamp()
    if expires <= time.time():
        return None
    principal = Principal(account_id=row.account_id, key_id=row.key_id, kind=row.kind)
    claims.keep(token, (expires, principal), generation)
    return principal


async def has_none(db: Store) -> bool:
    """Whether the store holds no account yet (a new database, which the demo data may fill)."""
    return await repo.count_accounts(db.reader) == 0
