"""Members of an account: the list, invitations by a one-time link, roles, removal, transfer of ownership, and
password resets by a one-time link.

The rules:

- an account keeps at least one owner once it has one: an owner's role is changed only by a transfer of
  ownership (:func:`transfer_ownership`: the new owner becomes the owner, every other owner an admin), and an
  owner is not removed (transfer first); the operator may make anyone an owner (:func:`put_member`), which is
  how an account gets its first one;
- an invitation names an email and a role other than owner; its link carries a random token (only its SHA-256
  is kept) and lapses after :data:`INVITATION_DAYS` days or at its first use. Accepting it as a new person sets
  their name and password; a person who exists already joins with their own password;
- a password reset link lapses after :data:`RESET_HOURS` hours or at its first use; using it sets a new password
  and ends every session of the person.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from datetime import timedelta
from typing import Any

from linksvc.accounts import service as accounts
from linksvc.accounts import sessions
from linksvc.clock import iso, utcnow
from linksvc.errors import Conflict, InvalidField, NotFound, Unauthorized
from linksvc.links.passwords import hashed, matches
from linksvc.people import audit, mail, roles
from linksvc.people.access import Actor
from linksvc.people.service import add_person, check_password, get_person, normal_email, printable, put_member
from linksvc.store import Store, in_one_unit
from storage import audit_log as audit_repo
from storage import people as repo
from storage.db import Tx
from storage.people import MembershipRecord, OneTimeLinkRecord

INVITATION_DAYS = 7
RESET_HOURS = 24


def member_view(m: MembershipRecord) -> dict[str, Any]:
    return {"person_id": m.person_id, "account_id": m.account_id, "email": m.email, "name": m.name,
            "role": m.role, "since": m.created_at}


def invitation_view(link: OneTimeLinkRecord) -> dict[str, Any]:
    now = iso(utcnow())
    status = "accepted" if link.used_at else "expired" if link.expires_at <= now else "pending"
    return {"id": link.id, "account_id": link.account_id, "email": link.email, "role": link.role,
            "invited_by": link.created_by, "created_at": link.created_at, "expires_at": link.expires_at,
            "accepted_at": link.used_at, "status": status}


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


async def list_members(db: Store, account_id: str) -> list[dict[str, Any]]:
    await accounts.get_account(db.reader, account_id)
    return [member_view(m) for m in await repo.members_of(db.reader, account_id)]


async def _member(tx: Tx, account_id: str, person_id: str) -> str:
    role = await repo.role_in(tx, person_id, account_id)
    if role is None:
        raise NotFound("Member not found", f"no member with person id {person_id} in this account")
    return role


async def set_member(db: Store, account_id: str, person_id: str, role: str) -> dict[str, Any]:
    """The operator's: makes an existing person a member with ``role`` (owner too), or changes their role."""
    async def unit(tx: Tx) -> list[MembershipRecord]:
        await get_person(tx, person_id)
        current = await repo.role_in(tx, person_id, account_id)
        if current == "owner" and role != "owner" and await repo.count_owners(tx, account_id) == 1:
            raise Conflict("Last owner", "the account's only owner keeps the role: transfer ownership first")
        await put_member(tx, account_id, person_id, role)
        return await repo.members_of(tx, account_id)

    return _one(await in_one_unit(db, unit), person_id)


def _one(members: list[MembershipRecord], person_id: str) -> dict[str, Any]:
    return next(member_view(m) for m in members if m.person_id == person_id)


async def change_role(db: Store, account_id: str, person_id: str, role: str) -> dict[str, Any]:
    """An owner's: changes a member's role to any role but owner; an owner's role changes by a transfer."""
    if role == "owner":
        raise InvalidField("role", "owner is given by a transfer of ownership", "Invalid body", rule="enum")

    async def unit(tx: Tx) -> list[MembershipRecord]:
        if await _member(tx, account_id, person_id) == "owner":
            raise Conflict("Owner's role", "an owner's role changes by a transfer of ownership")
        await put_member(tx, account_id, person_id, role)
        return await repo.members_of(tx, account_id)

    return _one(await in_one_unit(db, unit), person_id)


async def remove_member(db: Store, account_id: str, person_id: str) -> None:
    async def unit(tx: Tx) -> None:
        if await _member(tx, account_id, person_id) == "owner":
            raise Conflict("Owner", "an owner is not removed: transfer ownership to another member first")
        await repo.delete_membership(tx, person_id, account_id)

    await in_one_unit(db, unit)


async def transfer_ownership(db: Store, account_id: str, person_id: str) -> list[dict[str, Any]]:
    """Makes the member ``person_id`` the account's owner; every other owner becomes an admin."""
    async def unit(tx: Tx) -> list[MembershipRecord]:
        await _member(tx, account_id, person_id)
        for m in await repo.members_of(tx, account_id):
            if m.role == "owner" and m.person_id != person_id:
                await repo.put_membership(tx, m.person_id, account_id, "admin", iso(utcnow()))
        await repo.put_membership(tx, person_id, account_id, "owner", iso(utcnow()))
        return await repo.members_of(tx, account_id)

    return [member_view(m) for m in await in_one_unit(db, unit)]


async def invite(db: Store, actor: Actor, account_id: str, email: str, role: str, post: mail.Post
                 ) -> dict[str, Any]:
    """A pending invitation and its one-time link (in this answer only), sent by letter when ``post`` has a
    server (``letter``: whether it left, and what the server said)."""
    email = normal_email(email)
    if role not in roles.ROLES or role == "owner":
        raise InvalidField("role", "is one of admin, marketer, analyst, developer (owner is given by a transfer)",
                           "Invalid body", rule="enum")
    token = "inv_" + secrets.token_urlsafe(32)
    now = utcnow()
    record = OneTimeLinkRecord(str(uuid.uuid4()), "invitation", _digest(token), account_id, None, email, role,
                               actor.id, iso(now), iso(now + timedelta(days=INVITATION_DAYS)), None)

    async def unit(tx: Tx) -> tuple[str, str]:
        account = await accounts.get_account(tx, account_id)
        person = await repo.person_by_email(tx, email)
        if person is not None and await repo.role_in(tx, person.id, account_id) is not None:
            raise Conflict("Already a member", f"{email} is a member of this account")
        await repo.insert_link(tx, record)
        return account.name, await _inviter(tx, actor)

    account_name, inviter = await in_one_unit(db, unit)
    link = mail.OneTimeLink("invitation", email, mail.link_url(post.public_url, "invitation", token),
                            record.expires_at)
    sent = await mail.deliver(post, link, mail.invitation_letter(link, account_name, role, inviter, post.public_url))
    return {**invitation_view(record), "token": token, "link": link.url, "letter": sent.view()}


async def _inviter(tx: Tx, actor: Actor) -> str:
    """Who the letter says invited: the person (themselves or through their token), else the operator."""
    if actor.person_id is not None:
        try:
            return (await get_person(tx, actor.person_id)).name
        except NotFound:
            pass
    return "The operator of the service"


async def list_invitations(db: Store, account_id: str) -> list[dict[str, Any]]:
    await accounts.get_account(db.reader, account_id)
    return [invitation_view(i) for i in await repo.invitations_of(db.reader, account_id)]


async def cancel_invitation(db: Store, account_id: str, invitation_id: str) -> None:
    async def unit(tx: Tx) -> None:
        if not await repo.delete_invitation(tx, account_id, invitation_id):
            raise NotFound("Invitation not found", f"no invitation with id {invitation_id} in this account")

    await in_one_unit(db, unit)


def _lapsed(purpose: str) -> NotFound:
    what = "invitation" if purpose == "invitation" else "password reset link"
    return NotFound("Link not valid", f"this {what} is unknown, used already or expired")


async def _live(db: Store, purpose: str, token: str) -> OneTimeLinkRecord:
    """The live link of ``token`` as the reader sees it (its use is checked again in the unit that uses it)."""
    link = await repo.link_by_hash(db.reader, purpose, _digest(token))
    if link is None or link.used_at is not None or link.expires_at <= iso(utcnow()):
        raise _lapsed(purpose)
    return link


async def _take(tx: Tx, purpose: str, token: str) -> OneTimeLinkRecord:
    """The live link of ``token``, marked used in the caller's transaction."""
    link = await repo.link_by_hash(tx, purpose, _digest(token))
    now = iso(utcnow())
    if link is None or link.used_at is not None or link.expires_at <= now:
        raise _lapsed(purpose)
    if not await repo.use_link(tx, link.id, now):
        raise _lapsed(purpose)
    return link


async def accept_invitation(db: Store, token: str, name: str | None, password: str | None, client: str = ""
                            ) -> dict[str, Any]:
    """Joins the invited person to the account: a new person with ``name`` and ``password``, or the person who
    has the invited email already, who proves it with their password (their name and password stay). The
    account's audit log has the person accept the invitation, from ``client``, in the same transaction."""
    password_hash = None
    link = await _live(db, "invitation", token)  # before any hash: a wrong token costs one read
    existing = await repo.person_by_email(db.reader, link.email)
    if existing is not None:
        if password is None or not await matches(existing.password_hash, password):
            raise Unauthorized("Wrong password", {"field": "password", "message": f"{existing.email} has an "
                                                  "account here: send its password to join"})
    elif password is not None:
        check_password(password)
        password_hash = await hashed(password)

    async def unit(tx: Tx) -> dict[str, Any]:
        link = await _take(tx, "invitation", token)
        assert link.account_id is not None
        person = await repo.person_by_email(tx, link.email)
        if person is None:
            if not name or password_hash is None:
                raise InvalidField("password", "a new person sets a name and a password", "Invalid body",
                                   rule="required")
            printable("name", name)
            person = await add_person(tx, link.email, name, password_hash)
        await put_member(tx, link.account_id, person.id, link.role)
        await audit_repo.insert(tx, audit.entry_of(Actor("person", person_id=person.id), link.account_id,
                                                   "invitations", link.id, "accept",
                                                   {"email": person.email, "role": link.role}, client))
        return {"person_id": person.id, "email": person.email, "account_id": link.account_id, "role": link.role}

    return await in_one_unit(db, unit)


async def start_password_reset(db: Store, actor: Actor, account_id: str | None, person_id: str, post: mail.Post
                               ) -> dict[str, Any]:
    """A one-time link with which the person sets a new password (in this answer only): a member of
    ``account_id`` (an owner's), or anyone (the operator's, ``account_id`` None)."""
    token = "rst_" + secrets.token_urlsafe(32)
    now = utcnow()

    async def unit(tx: Tx) -> OneTimeLinkRecord:
        if account_id is not None:
            await _member(tx, account_id, person_id)
        person = await get_person(tx, person_id)
        record = OneTimeLinkRecord(str(uuid.uuid4()), "password_reset", _digest(token), account_id, person_id,
                                   person.email, "", actor.id, iso(now), iso(now + timedelta(hours=RESET_HOURS)),
                                   None)
        await repo.insert_link(tx, record)
        return record

    record = await in_one_unit(db, unit)
    link = mail.OneTimeLink("password_reset", record.email, mail.link_url(post.public_url, "password_reset", token),
                            record.expires_at)
    sent = await mail.deliver(post, link, mail.reset_letter(link, post.public_url))
    return {"id": record.id, "person_id": person_id, "email": record.email, "expires_at": record.expires_at,
            "token": token, "link": link.url, "letter": sent.view()}


async def finish_password_reset(db: Store, token: str, password: str, client: str = "") -> None:
    """Sets the new password of the link's person; every session of theirs ends. The audit log has the person
    set it (in the account of the owner who made the link; of none, the operator's), from ``client``."""
    check_password(password)
    await _live(db, "password_reset", token)  # before the hash: a wrong token costs one read
    password_hash = await hashed(password)

    async def unit(tx: Tx) -> None:
        link = await _take(tx, "password_reset", token)
        assert link.person_id is not None
        await repo.set_password(tx, link.person_id, password_hash, iso(utcnow()))
        await sessions.end_person_sessions(tx, link.person_id)
        await audit_repo.insert(tx, audit.entry_of(Actor("person", person_id=link.person_id), link.account_id or "",
                                                   "password-resets", link.id, "accept", {"password": password},
                                                   client))

    await in_one_unit(db, unit)
