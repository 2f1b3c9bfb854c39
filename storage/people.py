"""People, their memberships in accounts, their personal access tokens and the one-time links (invitations,
password resets): the SQL and nothing else. The rules live in :mod:`linksvc.people`.

Secrets are kept as digests only: a password as its argon2id hash, a personal token and a one-time link's token
as the SHA-256 of a high-entropy random string.
"""

from __future__ import annotations

from dataclasses import dataclass

from storage.db import Conn, Row, Tx, execute, fetch_all, fetch_one

OWNS = ("people", "memberships", "personal_tokens", "one_time_links")


@dataclass(frozen=True, slots=True)
class PersonRecord:
    id: str
    email: str
    name: str
    password_hash: str
    totp_secret: str | None  # set once a second factor is confirmed
    totp_pending: str | None  # a secret enrolled, not yet confirmed by a code
    totp_last_step: int  # the last time step a code was accepted in: a code is accepted once
    created_at: str
    updated_at: str


@dataclass(frozen=True, slots=True)
class MembershipRecord:
    person_id: str
    account_id: str
    role: str
    created_at: str
    email: str = ""
    name: str = ""


@dataclass(frozen=True, slots=True)
class TokenRecord:
    """A personal access token: its digest and first characters, never the token."""

    id: str
    person_id: str
    account_id: str
    role: str
    name: str
    token_hash: str
    token_prefix: str
    created_at: str
    expires_at: str
    revoked_at: str | None
    last_used_at: str | None


@dataclass(frozen=True, slots=True)
class OneTimeLinkRecord:
    id: str
    purpose: str  # "invitation" or "password_reset"
    token_hash: str
    account_id: str | None
    person_id: str | None
    email: str
    role: str
    created_by: str
    created_at: str
    expires_at: str
    used_at: str | None


_PERSON = "id, email, name, password_hash, totp_secret, totp_pending, totp_last_step, created_at, updated_at"
_TOKEN = ("id, person_id, account_id, role, name, token_hash, token_prefix, created_at, expires_at, revoked_at, "
          "last_used_at")
_LINK = "id, purpose, token_hash, account_id, person_id, email, role, created_by, created_at, expires_at, used_at"


def _person(row: Row | None) -> PersonRecord | None:
    if row is None:
        return None
    return PersonRecord(str(row[0]), str(row[1]), str(row[2]), str(row[3]), row[4], row[5], int(row[6]),
                        str(row[7]), str(row[8]))


def _token(row: Row) -> TokenRecord:
    return TokenRecord(str(row[0]), str(row[1]), str(row[2]), str(row[3]), str(row[4]), str(row[5]), str(row[6]),
                       str(row[7]), str(row[8]), row[9], row[10])


def _link(row: Row) -> OneTimeLinkRecord:
    return OneTimeLinkRecord(str(row[0]), str(row[1]), str(row[2]), row[3], row[4], str(row[5]), str(row[6]),
                             str(row[7]), str(row[8]), str(row[9]), row[10])


# People.

def email_key(email: str) -> str:
    """What makes an email unique: its lower case (``Ana@Example.com`` is ``ana@example.com``)."""
    return email.lower()


async def insert_person(tx: Tx, person: PersonRecord) -> None:
    await execute(tx, f"INSERT INTO people ({_PERSON}, email_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                  (person.id, person.email, person.name, person.password_hash, person.totp_secret,
                   person.totp_pending, person.totp_last_step, person.created_at, person.updated_at,
                   email_key(person.email)))


async def get_person(conn: Conn, person_id: str) -> PersonRecord | None:
    return _person(await fetch_one(conn, f"SELECT {_PERSON} FROM people WHERE id = ?", (person_id,)))


async def person_by_email(conn: Conn, email: str) -> PersonRecord | None:
    return _person(await fetch_one(conn, f"SELECT {_PERSON} FROM people WHERE email_key = ?", (email_key(email),)))


async def list_people(conn: Conn, limit: int, offset: int) -> list[PersonRecord]:
    rows = await fetch_all(conn, f"SELECT {_PERSON} FROM people ORDER BY created_at, id LIMIT ? OFFSET ?",
                           (limit, offset))
    return [p for p in (_person(r) for r in rows) if p is not None]


async def count_people(conn: Conn) -> int:
    row = await fetch_one(conn, "SELECT count(*) FROM people")
    return int(row[0]) if row else 0


async def update_profile(tx: Tx, person_id: str, email: str, name: str, now: str) -> bool:
    return await execute(tx, "UPDATE people SET email = ?, email_key = ?, name = ?, updated_at = ? WHERE id = ?",
                         (email, email_key(email), name, now, person_id)) > 0


async def set_password(tx: Tx, person_id: str, password_hash: str, now: str) -> bool:
    return await execute(tx, "UPDATE people SET password_hash = ?, updated_at = ? WHERE id = ?",
                         (password_hash, now, person_id)) > 0


async def set_totp(tx: Tx, person_id: str, secret: str | None, pending: str | None, now: str) -> bool:
    return await execute(tx, "UPDATE people SET totp_secret = ?, totp_pending = ?, updated_at = ? WHERE id = ?",
                         (secret, pending, now, person_id)) > 0


async def use_totp_step(tx: Tx, person_id: str, step: int) -> bool:
    """Notes that a code of ``step`` was accepted; False when that step (or a later one) was used already."""
    return await execute(tx, "UPDATE people SET totp_last_step = ? WHERE id = ? AND totp_last_step < ?",
                         (step, person_id, step)) > 0


# Memberships.

async def put_membership(tx: Tx, person_id: str, account_id: str, role: str, now: str) -> None:
    """Adds the person to the account with ``role``, or changes their role there."""
    await execute(tx, "INSERT INTO memberships (person_id, account_id, role, created_at) VALUES (?, ?, ?, ?) "
                      "ON CONFLICT (person_id, account_id) DO UPDATE SET role = excluded.role",
                  (person_id, account_id, role, now))


async def delete_membership(tx: Tx, person_id: str, account_id: str) -> bool:
    return await execute(tx, "DELETE FROM memberships WHERE person_id = ? AND account_id = ?",
                         (person_id, account_id)) > 0


async def role_in(conn: Conn, person_id: str, account_id: str) -> str | None:
    row = await fetch_one(conn, "SELECT role FROM memberships WHERE person_id = ? AND account_id = ?",
                          (person_id, account_id))
    return None if row is None else str(row[0])


_MEMBER = ("SELECT m.person_id, m.account_id, m.role, m.created_at, p.email, p.name "
           "FROM memberships m JOIN people p ON p.id = m.person_id")


def _member(row: Row) -> MembershipRecord:
    return MembershipRecord(str(row[0]), str(row[1]), str(row[2]), str(row[3]), str(row[4]), str(row[5]))


async def members_of(conn: Conn, account_id: str) -> list[MembershipRecord]:
    rows = await fetch_all(conn, f"{_MEMBER} WHERE m.account_id = ? ORDER BY m.created_at, m.person_id",
                           (account_id,))
    return [_member(r) for r in rows]


async def memberships_of(conn: Conn, person_id: str) -> list[MembershipRecord]:
    rows = await fetch_all(conn, f"{_MEMBER} WHERE m.person_id = ? ORDER BY m.account_id", (person_id,))
    return [_member(r) for r in rows]


async def count_owners(conn: Conn, account_id: str) -> int:
    row = await fetch_one(conn, "SELECT count(*) FROM memberships WHERE account_id = ? AND role = 'owner'",
                          (account_id,))
    return int(row[0]) if row else 0


# Personal access tokens.

async def insert_token(tx: Tx, token: TokenRecord) -> None:
    await execute(tx, f"INSERT INTO personal_tokens ({_TOKEN}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                  (token.id, token.person_id, token.account_id, token.role, token.name, token.token_hash,
                   token.token_prefix, token.created_at, token.expires_at, token.revoked_at, token.last_used_at))


async def token_by_hash(conn: Conn, token_hash: str) -> TokenRecord | None:
    row = await fetch_one(conn, f"SELECT {_TOKEN} FROM personal_tokens WHERE token_hash = ?", (token_hash,))
    return None if row is None else _token(row)


async def get_token(conn: Conn, person_id: str, token_id: str) -> TokenRecord | None:
    row = await fetch_one(conn, f"SELECT {_TOKEN} FROM personal_tokens WHERE person_id = ? AND id = ?",
                          (person_id, token_id))
    return None if row is None else _token(row)


async def tokens_of(conn: Conn, person_id: str) -> list[TokenRecord]:
    rows = await fetch_all(conn, f"SELECT {_TOKEN} FROM personal_tokens WHERE person_id = ? ORDER BY created_at, id",
                           (person_id,))
    return [_token(r) for r in rows]


async def revoke_token(tx: Tx, person_id: str, token_id: str, now: str) -> bool:
    return await execute(tx, "UPDATE personal_tokens SET revoked_at = coalesce(revoked_at, ?) "
                             "WHERE person_id = ? AND id = ?", (now, person_id, token_id)) > 0


async def touch_token(tx: Tx, token_id: str, now: str) -> None:
    await execute(tx, "UPDATE personal_tokens SET last_used_at = ? WHERE id = ?", (now, token_id))


# One-time links.

async def insert_link(tx: Tx, link: OneTimeLinkRecord) -> None:
    await execute(tx, f"INSERT INTO one_time_links ({_LINK}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                  (link.id, link.purpose, link.token_hash, link.account_id, link.person_id, link.email, link.role,
                   link.created_by, link.created_at, link.expires_at, link.used_at))


async def link_by_hash(conn: Conn, purpose: str, token_hash: str) -> OneTimeLinkRecord | None:
    row = await fetch_one(conn, f"SELECT {_LINK} FROM one_time_links WHERE purpose = ? AND token_hash = ?",
                          (purpose, token_hash))
    return None if row is None else _link(row)


async def use_link(tx: Tx, link_id: str, now: str) -> bool:
    """Marks the link used; False when it was used already (two tabs at once: one wins)."""
    return await execute(tx, "UPDATE one_time_links SET used_at = ? WHERE id = ? AND used_at IS NULL",
                         (now, link_id)) > 0


async def invitations_of(conn: Conn, account_id: str) -> list[OneTimeLinkRecord]:
    rows = await fetch_all(conn, f"SELECT {_LINK} FROM one_time_links WHERE account_id = ? AND purpose = "
                                 "'invitation' ORDER BY created_at, id", (account_id,))
    return [_link(r) for r in rows]


async def delete_invitation(tx: Tx, account_id: str, link_id: str) -> bool:
    return await execute(tx, "DELETE FROM one_time_links WHERE account_id = ? AND id = ? AND purpose = 'invitation'",
                         (account_id, link_id)) > 0
