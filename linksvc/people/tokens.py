"""Personal access tokens: for a person's scripts and CI, scoped to one account and a role.

- The token is ``lpt_`` and 32 random bytes (base64url), shown once at creation; the store keeps its SHA-256
  (a digest of a high-entropy secret cannot be reversed, and finding it by digest leaks nothing by timing).
- Its role is at most its person's role in the account (:func:`linksvc.people.roles.within`), and it is held to
  the person's role of the moment too (:func:`linksvc.people.access.authorize`).
- It expires (``expires_in_days``: 1 to 366, 90 by default) and can be revoked; either stops it at once.
- Its last use is written at most once a minute per token (:data:`TOUCH_SECONDS`): the request that finds the
  stored last use older than that writes the new one; the others write nothing.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from datetime import datetime, timedelta
from typing import Any

from linksvc.clock import iso, parse_iso, utcnow
from linksvc.errors import Forbidden, InvalidField, NotFound, Unauthorized
from linksvc.people import roles
from linksvc.people.access import Actor, account_not_found
from linksvc.store import Store, in_one_unit
from storage import people as repo
from storage.db import Tx
from storage.people import TokenRecord

PREFIX = "lpt_"
TOUCH_SECONDS = 60
DEFAULT_DAYS = 90
MAX_DAYS = 366


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def is_personal_token(given: str) -> bool:
    return given.startswith(PREFIX)


def token_view(token: TokenRecord, now: datetime | None = None) -> dict[str, Any]:
    moment = iso(now or utcnow())
    status = "revoked" if token.revoked_at else "expired" if token.expires_at <= moment else "active"
    return {
        "id": token.id,
        "account_id": token.account_id,
        "role": token.role,
        "name": token.name,
        "prefix": token.token_prefix,
        "created_at": token.created_at,
        "expires_at": token.expires_at,
        "revoked_at": token.revoked_at,
        "last_used_at": token.last_used_at,
        "status": status,
    }


async def create_token(db: Store, person_id: str, account_id: str, role: str, name: str,
                       expires_in_days: int = DEFAULT_DAYS) -> dict[str, Any]:
    """A new token of the person for ``account_id`` with ``role``; the token itself is in this answer only."""
    if role not in roles.ROLES:
        raise InvalidField("role", f"is one of {', '.join(roles.ROLES)}", "Invalid body", rule="enum")
    if not name.isprintable():
        raise InvalidField("name", "may not contain control characters", "Invalid body", rule="format")
    if not 1 <= expires_in_days <= MAX_DAYS:
        raise InvalidField("expires_in_days", f"is between 1 and {MAX_DAYS}", "Invalid body", rule="range")
    secret = PREFIX + secrets.token_urlsafe(32)
    now = utcnow()

    async def unit(tx: Tx) -> TokenRecord:
        held = await repo.role_in(tx, person_id, account_id)
        if held is None:
            raise account_not_found(account_id)
        if not roles.within(role, held):
            raise Forbidden("Role too high", f"a token's role may grant no more than yours ({held}) in this account")
        record = TokenRecord(str(uuid.uuid4()), person_id, account_id, role, name, digest(secret), secret[:8],
                             iso(now), iso(now + timedelta(days=expires_in_days)), None, None)
        await repo.insert_token(tx, record)
        return record

    record = await in_one_unit(db, unit)
    return {**token_view(record, now), "token": secret}


async def list_tokens(db: Store, person_id: str) -> list[dict[str, Any]]:
    now = utcnow()
    return [token_view(t, now) for t in await repo.tokens_of(db.reader, person_id)]


async def revoke_token(db: Store, person_id: str, token_id: str) -> dict[str, Any]:
    async def unit(tx: Tx) -> TokenRecord:
        if not await repo.revoke_token(tx, person_id, token_id, iso(utcnow())):
            raise NotFound("Token not found", f"no personal token with id {token_id}")
        found = await repo.get_token(tx, person_id, token_id)
        assert found is not None
        return found

    return token_view(await in_one_unit(db, unit))


async def actor_of_token(db: Store, given: str, now: datetime | None = None) -> Actor:
    """The actor a personal token stands for; Unauthorized for an unknown, revoked or expired one. Notes its use
    when the stored last use is older than :data:`TOUCH_SECONDS`."""
    moment = now or utcnow()
    record = await repo.token_by_hash(db.reader, digest(given))
    if record is None:
        raise Unauthorized("Invalid token", "the bearer token is neither the admin token nor a personal token")
    if record.revoked_at is not None:
        raise Unauthorized("Token revoked", "this personal token was revoked")
    if record.expires_at <= iso(moment):
        raise Unauthorized("Token expired", "this personal token has expired; create a new one")
    if record.last_used_at is None or (moment - parse_iso(record.last_used_at)).total_seconds() >= TOUCH_SECONDS:
        async def touch(tx: Tx) -> None:
            await repo.touch_token(tx, record.id, iso(moment))

        await db.write(touch)
    return Actor("token", record.person_id, record.id, record.account_id, record.role)
