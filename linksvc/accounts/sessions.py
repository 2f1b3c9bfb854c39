"""Dashboard sessions: signing in with the admin token (or as a person: :mod:`linksvc.people.service`), checking
a session cookie, signing out.

A session is a row in the store (:mod:`storage.dashboard_sessions`), so ending it is deleting the row: a
cookie replayed after sign-out is refused at once, by every worker process sharing the database, and after
a restart. The rules:

- the cookie holds a random session id of :data:`SESSION_ID_BYTES` bytes; the store keeps only its SHA-256
  (a digest of a high-entropy secret cannot be reversed, and looking it up does not leak it by timing);
- a session lasts :data:`SESSION_SECONDS` from sign-in; an expired one is refused;
- a session is tied to the admin token it was opened under by a fingerprint of that token, a slow salted
  hash (PBKDF2) so that a copy of the database does not make a weak admin token cheap to guess. Starting
  with another ``LINKSVC_ADMIN_TOKEN`` voids every session opened under the old one;
- checking a session is one indexed read and no write; void rows (expired, or under another token) are
  deleted at start-up and at each sign-in;
- a person's session (``person_id`` set) is not tied to the admin token: it ends at sign-out, at expiry, and
  when the person's password changes.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from linksvc.clock import iso, utcnow
from linksvc.errors import Unauthorized
from linksvc.store import Store, in_one_unit
from storage import dashboard_sessions as repo
from storage.db import Tx

SESSION_SECONDS = 12 * 3600
SESSION_ID_BYTES = 32
# token_urlsafe(32): 43 characters of base64url. Anything else is not a session id and is not looked up.
_SESSION_ID = re.compile(r"^[A-Za-z0-9_-]{43}$")
_FINGERPRINT_SALT = b"linksvc dashboard session: admin token fingerprint v1"
_FINGERPRINT_ROUNDS = 200_000


@dataclass(frozen=True)
class NewSession:
    """A session just opened: the id goes into the cookie, and only there."""

    session_id: str
    expires_at: datetime
    max_age: int


@functools.lru_cache(maxsize=4)
def token_fingerprint(admin_token: str) -> str:
    """What the store keeps of the admin token a session was opened under. Slow on purpose (tens of
    milliseconds), so it is computed once per token and process."""
    return hashlib.pbkdf2_hmac("sha256", admin_token.encode(), _FINGERPRINT_SALT, _FINGERPRINT_ROUNDS).hex()


def _id_hash(session_id: str) -> str:
    return hashlib.sha256(session_id.encode()).hexdigest()


def is_admin_token(given: str, admin_token: str) -> bool:
    """Constant-time comparison with the admin token; an unset admin token matches nothing."""
    return bool(admin_token) and hmac.compare_digest(given.encode(), admin_token.encode())


async def sign_in(db: Store, admin_token: str, given: str, replacing: str | None = None,
                  now: datetime | None = None) -> NewSession:
    """Opens a session when ``given`` is the admin token; ``replacing`` (the cookie the browser still
    holds, if any) is ended in the same transaction. Void sessions are deleted on the way."""
    if not is_admin_token(given, admin_token):
        raise Unauthorized("Invalid admin token", {"field": "token", "message": "this is not the admin token"})
    moment = now or utcnow()
    session_id = secrets.token_urlsafe(SESSION_ID_BYTES)
    expires_at = moment + timedelta(seconds=SESSION_SECONDS)
    record = repo.SessionRecord(_id_hash(session_id), token_fingerprint(admin_token), iso(moment), iso(expires_at))
    async def unit(tx: Tx) -> None:
        await repo.delete_void(tx, record.token_fingerprint, iso(moment))
        if replacing is not None and _SESSION_ID.match(replacing):
            await repo.delete(tx, _id_hash(replacing))
        await repo.insert(tx, record)

    await in_one_unit(db, unit)
    return NewSession(session_id, expires_at, SESSION_SECONDS)


async def open_person_session(tx: Tx, person_id: str, replacing: str | None, now: datetime) -> NewSession:
    """Opens a session for a person who proved who they are (``linksvc.people.service.sign_in``), in the
    caller's transaction; ``replacing`` (the cookie the browser still holds) is ended."""
    session_id = secrets.token_urlsafe(SESSION_ID_BYTES)
    expires_at = now + timedelta(seconds=SESSION_SECONDS)
    if replacing is not None and _SESSION_ID.match(replacing):
        await repo.delete(tx, _id_hash(replacing))
    await repo.insert(tx, repo.SessionRecord(_id_hash(session_id), "", iso(now), iso(expires_at), person_id))
    return NewSession(session_id, expires_at, SESSION_SECONDS)


async def end_person_sessions(tx: Tx, person_id: str) -> None:
    """Ends every session of the person (a new password), in the caller's transaction."""
    await repo.delete_of_person(tx, person_id)


@dataclass(frozen=True)
class SignedIn:
    """Who a live session is of: the person, or None for a session opened with the admin token."""

    person_id: str | None


async def session_of(db: Store, admin_token: str, session_id: str | None, now: datetime | None = None
                     ) -> SignedIn | None:
    """Who the cookie's ``session_id`` is signed in as: a live person's session, or a live session opened under
    the current admin token; None for anything else.

    Reads the store every time (no write, no cache): a sign-out on another worker counts at once."""
    if not session_id or not _SESSION_ID.match(session_id):
        return None
    record = await repo.get(db.reader, _id_hash(session_id))
    if record is None or iso(now or utcnow()) >= record.expires_at:
        return None
    if record.person_id is not None:
        return SignedIn(record.person_id)
    if admin_token and hmac.compare_digest(record.token_fingerprint, token_fingerprint(admin_token)):
        return SignedIn(None)
    return None


async def is_signed_in(db: Store, admin_token: str, session_id: str | None, now: datetime | None = None) -> bool:
    """Whether the cookie's ``session_id`` names a live session (:func:`session_of`)."""
    return await session_of(db, admin_token, session_id, now) is not None


async def sign_out(db: Store, session_id: str | None) -> None:
    """Ends the session at once; an unknown or malformed id ends nothing and is not an error."""
    if session_id is None or not _SESSION_ID.match(session_id):
        return
    hashed = _id_hash(session_id)

    async def unit(tx: Tx) -> None:
        await repo.delete(tx, hashed)

    await in_one_unit(db, unit)


async def delete_void_sessions(db: Store, admin_token: str, now: datetime | None = None) -> int:
    """Deletes expired sessions and those opened under another admin token (every operator session when no
    admin token is set; a person's session is not opened under it); run at start-up, so rotating the token
    leaves no stale row behind. The token's fingerprint (tens of milliseconds) is worked out only when there is
    an operator session to compare it with."""
    async with db.transaction() as tx:
        fingerprint: str | None = None
        if await repo.has_operator_sessions(tx):
            fingerprint = token_fingerprint(admin_token) if admin_token else ""
        return await repo.delete_void(tx, fingerprint, iso(now or utcnow()))
