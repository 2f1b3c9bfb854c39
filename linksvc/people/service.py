"""People: who they are, how they sign in (an email, a password, and a one-time code when they enrolled one).

- An email is unique whatever its case; it is kept as given, trimmed, and found case-insensitively.
- A password is kept as its argon2id hash (argon2-cffi, :mod:`linksvc.links.passwords`: hashed and checked in a
  thread). An unknown email is checked against a hash all the same, so that the answer takes as long.
- The second factor is RFC 6238 as authenticator apps speak it (pyotp: 6 digits, 30 s steps, SHA-1), a code
  accepted in the step before or after too, and each step's code only once.
- Sign-in opens the same kind of dashboard session the operator token opens (:mod:`linksvc.accounts.sessions`);
  its failures are throttled by the caller (``api.accounts.throttle``, kind ``sign_in``). A new password ends
  every session of the person.
"""

from __future__ import annotations

import hmac
import secrets
import uuid
from datetime import datetime
from typing import Any

import pyotp

from linksvc.accounts import service as accounts
from linksvc.accounts import sessions
from linksvc.clock import iso, utcnow
from linksvc.errors import Conflict, InvalidField, NotFound, Unauthorized
from linksvc.links.passwords import hashed, matches
from linksvc.people import roles
from linksvc.store import Store, StoreConstraintError, in_one_unit
from storage import people as repo
from storage.db import Conn, Tx
from storage.people import PersonRecord

ISSUER = "linksvc"
MIN_PASSWORD = 10
_dummy_hash: str | None = None


def person_view(person: PersonRecord, memberships: list[repo.MembershipRecord] | None = None) -> dict[str, Any]:
    view: dict[str, Any] = {
        "id": person.id,
        "email": person.email,
        "name": person.name,
        "totp_enabled": person.totp_secret is not None,
        "created_at": person.created_at,
        "updated_at": person.updated_at,
    }
    if memberships is not None:
        view["accounts"] = [{"account_id": m.account_id, "role": m.role} for m in memberships]
    return view


def printable(field: str, value: str) -> str:
    """``value`` when it holds no control character (PostgreSQL's text cannot hold U+0000, and none belongs in
    a name); a 400 naming ``field`` otherwise."""
    if not value.isprintable():
        raise InvalidField(field, "may not contain control characters", "Invalid body", rule="format")
    return value


def normal_email(email: str) -> str:
    email = printable("email", email.strip())
    local, at, domain = email.rpartition("@")
    if not at or not local or "." not in domain or any(c.isspace() for c in email):
        raise InvalidField("email", "is not an email address", "Invalid body", rule="format")
    return email


def check_password(password: str, field: str = "password") -> None:
    if len(password) < MIN_PASSWORD:
        raise InvalidField(field, f"must be at least {MIN_PASSWORD} characters", "Invalid body", rule="min_length")


async def get_person(conn: Conn, person_id: str) -> PersonRecord:
    person = await repo.get_person(conn, person_id)
    if person is None:
        raise NotFound("Person not found", f"no person with id {person_id}")
    return person


async def put_member(tx: Tx, account_id: str, person_id: str, role: str) -> None:
    """Makes the person a member of the account with ``role`` (or changes their role there)."""
    if role not in roles.ROLES:
        raise InvalidField("role", f"is one of {', '.join(roles.ROLES)}", "Invalid body", rule="enum")
    await accounts.get_account(tx, account_id)
    await repo.put_membership(tx, person_id, account_id, role, iso(utcnow()))


async def add_person(tx: Tx, email: str, name: str, password_hash: str) -> PersonRecord:
    """Inserts a person in the caller's transaction; Conflict when the email is taken."""
    if await repo.person_by_email(tx, email) is not None:
        raise Conflict("Email in use", f"a person with the email {email} exists")
    now = iso(utcnow())
    person = PersonRecord(str(uuid.uuid4()), email, name, password_hash, None, None, 0, now, now)
    try:
        await repo.insert_person(tx, person)
    except StoreConstraintError:
        raise Conflict("Email in use", f"a person with the email {email} exists") from None
    return person


async def create_person(db: Store, email: str, name: str, password: str, account_id: str | None = None,
                        role: str | None = None) -> dict[str, Any]:
    """A new person (the operator's), and their membership of ``account_id`` with ``role`` when given."""
    email = normal_email(email)
    printable("name", name)
    check_password(password)
    if (account_id is None) != (role is None):
        raise InvalidField("role", "account_id and role go together", "Invalid body", rule="required")
    password_hash = await hashed(password)

    async def unit(tx: Tx) -> tuple[PersonRecord, list[repo.MembershipRecord]]:
        person = await add_person(tx, email, name, password_hash)
        if account_id is not None and role is not None:
            await put_member(tx, account_id, person.id, role)
        return person, await repo.memberships_of(tx, person.id)

    person, memberships = await in_one_unit(db, unit)
    return person_view(person, memberships)


async def read_person(db: Store, person_id: str) -> dict[str, Any]:
    person = await get_person(db.reader, person_id)
    return person_view(person, await repo.memberships_of(db.reader, person_id))


async def list_people(db: Store, limit: int, offset: int) -> tuple[list[dict[str, Any]], int]:
    rows = await repo.list_people(db.reader, limit, offset)
    return [person_view(p) for p in rows], await repo.count_people(db.reader)


async def update_person(db: Store, person_id: str, email: str | None, name: str | None) -> dict[str, Any]:
    new_email = normal_email(email) if email is not None else None
    if name is not None:
        printable("name", name)

    async def unit(tx: Tx) -> PersonRecord:
        person = await get_person(tx, person_id)
        if (new_email is not None and new_email.lower() != person.email.lower()
                and await repo.person_by_email(tx, new_email) is not None):
            raise Conflict("Email in use", f"a person with the email {new_email} exists")
        await repo.update_profile(tx, person_id, new_email or person.email, name or person.name, iso(utcnow()))
        return await get_person(tx, person_id)

    return person_view(await in_one_unit(db, unit))


async def change_password(db: Store, person_id: str, current: str, new: str) -> None:
    """A new password, given the current one; every session of the person ends (sign in again)."""
    check_password(new, "new_password")
    person = await get_person(db.reader, person_id)
    if not await matches(person.password_hash, current):
        raise Unauthorized("Wrong password", {"field": "current_password", "message": "is not the password"})
    await set_password(db, person_id, await hashed(new))


async def set_password(db: Store, person_id: str, password_hash: str) -> None:
    async def unit(tx: Tx) -> None:
        if not await repo.set_password(tx, person_id, password_hash, iso(utcnow())):
            raise NotFound("Person not found", f"no person with id {person_id}")
        await sessions.end_person_sessions(tx, person_id)

    await in_one_unit(db, unit)


async def _dummy() -> str:
    global _dummy_hash
    if _dummy_hash is None:
        _dummy_hash = await hashed(secrets.token_urlsafe(16))
    return _dummy_hash


def matching_step(secret: str, code: str, now: float) -> int | None:
    """The time step whose code ``code`` is (this step, the one before or after), or None."""
    totp = pyotp.TOTP(secret)
    code = code.strip()
    for offset in (0, -1, 1):
        at = now + offset * totp.interval
        if hmac.compare_digest(totp.at(at).encode(), code.encode()):
            return int(at // totp.interval)
    return None


async def sign_in(db: Store, email: str, password: str, code: str | None, replacing: str | None,
                  now: datetime | None = None) -> sessions.NewSession:
    """A dashboard session for the person whose email and password these are (and current code, when they
    enrolled a second factor). Unauthorized otherwise: the caller counts it against the client's address."""
    moment = now or utcnow()
    person = await repo.person_by_email(db.reader, email.strip())
    ok = await matches(person.password_hash if person is not None else await _dummy(), password)
    if person is None or not ok:
        raise Unauthorized("Invalid email or password", {"field": "password",
                                                         "message": "no person has this email and password"})
    step: int | None = None
    if person.totp_secret is not None:
        if not code:
            raise Unauthorized("Code required", {"field": "code", "message": "send the code of your authenticator"})
        step = matching_step(person.totp_secret, code, moment.timestamp())
        if step is None:
            raise Unauthorized("Invalid code", {"field": "code", "message": "is not the current code"})
    person_id = person.id

    async def unit(tx: Tx) -> sessions.NewSession:
        if step is not None and not await repo.use_totp_step(tx, person_id, step):
            raise Unauthorized("Invalid code", {"field": "code", "message": "this code was used already"})
        return await sessions.open_person_session(tx, person_id, replacing, moment)

    return await in_one_unit(db, unit)


async def sign_in_any(db: Store, admin_token: str, token: str | None, email: str | None, password: str | None,
                      code: str | None, replacing: str | None) -> sessions.NewSession:
    """The dashboard's sign-in: with the admin token, or as a person (:func:`sign_in`)."""
    if token is not None:
        return await sessions.sign_in(db, admin_token, token, replacing=replacing)
    if email is None or password is None:
        raise InvalidField("token", "send the admin token, or an email and a password", "Invalid body",
                           rule="required")
    return await sign_in(db, email, password, code, replacing)


async def enrol_totp(db: Store, person_id: str) -> dict[str, Any]:
    """A new secret to enter in an authenticator app; it counts once confirmed by a code (:func:`confirm_totp`).
    A person who has a second factor already keeps it until then."""
    secret = pyotp.random_base32()

    async def unit(tx: Tx) -> PersonRecord:
        person = await get_person(tx, person_id)
        await repo.set_totp(tx, person_id, person.totp_secret, secret, iso(utcnow()))
        return person

    person = await in_one_unit(db, unit)
    uri = pyotp.TOTP(secret).provisioning_uri(name=person.email, issuer_name=ISSUER)
    return {"secret": secret, "otpauth_uri": uri}


async def _spend_code(tx: Tx, person_id: str, secret: str, code: str, moment: float, of: str = "") -> None:
    """``code`` is a current code of ``secret`` not used before (each step's code counts once); else a 400."""
    step = matching_step(secret, code, moment)
    if step is None or not await repo.use_totp_step(tx, person_id, step):
        raise InvalidField("code", f"is not the current code{' ' + of if of else ''}", "Invalid code")


async def confirm_totp(db: Store, person_id: str, code: str, now: float | None = None) -> dict[str, Any]:
    moment = utcnow().timestamp() if now is None else now

    async def unit(tx: Tx) -> PersonRecord:
        person = await get_person(tx, person_id)
        if person.totp_pending is None:
            raise Conflict("Nothing to confirm", "enrol first: POST /people/me/totp")
        await _spend_code(tx, person_id, person.totp_pending, code, moment, "of the enrolled secret")
        await repo.set_totp(tx, person_id, person.totp_pending, None, iso(utcnow()))
        return await get_person(tx, person_id)

    return person_view(await in_one_unit(db, unit))


async def disable_totp(db: Store, person_id: str, code: str, now: float | None = None) -> dict[str, Any]:
    """Turns the second factor off, given a current code of it."""
    moment = utcnow().timestamp() if now is None else now

    async def unit(tx: Tx) -> PersonRecord:
        person = await get_person(tx, person_id)
        if person.totp_secret is None:
            raise Conflict("No second factor", "this person has no second factor enrolled")
        await _spend_code(tx, person_id, person.totp_secret, code, moment)
        await repo.set_totp(tx, person_id, None, None, iso(utcnow()))
        return await get_person(tx, person_id)

    return person_view(await in_one_unit(db, unit))


async def wait_hash(password: str) -> str:
    """The argon2id hash of ``password`` (for the callers that store one in their own unit)."""
    return await hashed(password)

