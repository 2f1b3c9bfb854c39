"""Customer lookup and contact search (specification; product decisions, section 5)."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from typing import Any

from linksvc.clock import iso_from_timestamp
from linksvc.customers.held import Looked, lookup_held
from linksvc.customers.wallet import build_wallet, load_wallet
from linksvc.errors import BadRequest, Conflict, InvalidField, Issue, NotFound, ServiceError
from linksvc.resources.types import phone_digits
from linksvc.store import Store
from storage import customers as repo
from storage.db import Conn
from storage.wallet import HeldReward

# The customer fields of the specification's response (stored fields such as external_id stay inside).
CUSTOMER_FIELDS = (
    "id", "name", "email", "registration_date", "status", "is_anonymous", "phone_verified", "gender", "dob",
    "document_type", "document_number", "country", "phone", "tier_id", "tags", "metrics", "metadata", "consent",
)
CONTACT_CRITERIA = (
    "id", "external_id", "email", "document_number", "document_type", "first_name", "last_name",
    "second_last_name", "dob", "persona_id", "phone", "gender", "country", "city", "source", "channel",
)
IDENTIFYING = ("id", "email", "document_number")
MAX_CONTACTS = 100


def contact_matches(contact: dict[str, Any], criteria: dict[str, str]) -> bool:
    """Every given criterion holds: e-mail without regard to case, phone by digits, the rest exactly."""
    for name, wanted in criteria.items():
        stored = contact.get(name)
        if stored is None:
            return False
        if name == "email":
            if str(stored).lower() != wanted.lower():
                return False
        elif name == "phone":
            if phone_digits(str(stored)) != phone_digits(wanted):
                return False
        elif str(stored) != wanted:
            return False
    return True


def _path_parts(path: str) -> list[str]:
    """``a.b[0]`` -> ``["a", "b", "0"]``: the specification's issue path is an array of strings."""
    return [part for part in re.split(r"[.\[\]]+", path) if part]


def missing_identifier(others: Sequence[Issue] = ()) -> BadRequest:
    """The specification's answer to a contact search without id, email or document_number: the error text
    and issue it fixes, then every other problem of the query as an issue of the same shape (``code`` the
    service's rule code)."""
    issues = [{
        "code": "custom",
        "message": "At least one of id, email or document_number is required",
        "path": ["searchParams"],
    }]
    issues += [{"code": issue.type, "message": issue.message, "path": _path_parts(issue.path)} for issue in others]
    return BadRequest("Internal validation failed", {"issues": issues})


def search_refused(invalid: InvalidField) -> ServiceError:
    """How ``GET /contacts`` answers an invalid query: the specification's body when no identifying criterion
    was given, else the issues (rendered as one string by the endpoint)."""
    if not any(issue.type == "one_of_required" for issue in invalid.issues):
        return invalid
    return missing_identifier([issue for issue in invalid.issues if issue.type != "one_of_required"])


async def search_contacts(store: Store, account_id: str, criteria: dict[str, str]) -> list[dict[str, Any]]:
    if not any(criteria.get(name) for name in IDENTIFYING):
        raise missing_identifier()
    email = criteria.get("email")
    rows = await repo.find_contacts(
        store.reader, account_id, criteria.get("id"), email.lower() if email else None, criteria.get("document_number"),
        limit=MAX_CONTACTS,
    )
    found = []
    for row in rows:
        if contact_matches(row.body, criteria):
            found.append({**row.body, "created_at": row.created_at, "updated_at": row.updated_at})
    if not found:
        raise NotFound("No contacts found", "No contacts found")
    return found


async def find_customer(conn: Conn, account_id: str, document_number: str | None, phone: str | None
                        ) -> dict[str, Any]:
    """The stored document of the one customer with this document number and/or phone."""
    rows = await repo.find_customers(conn, account_id, document_number, phone_digits(phone) if phone else None)
    if not rows:
        raise NotFound("Customer not found", "no customer matches the given document_number and phone")
    if len(rows) > 1:
        raise Conflict("More than one customer matches", "more than one customer has this phone; add document_number")
    return rows[0].body


# A wallet of at most this many stored lines is read with its customer, on the event loop (one indexed
# statement, well under a millisecond); a larger one is read apart on the background connection, off the loop.
MAX_LINES_WITH_CUSTOMER = 50


async def lookup_customer(store: Store, account_id: str, document_number: str | None, phone: str | None
                          ) -> dict[str, Any]:
    """The customer and its wallet, read on the event loop's reader (two indexed statements), unless the
    wallet holds many lines: those are read on the store's background connection, off the event loop."""
    now = iso_from_timestamp(time.time())
    found = _the_one(await repo.lookup(store.reader, account_id, document_number,
                                       phone_digits(phone) if phone else None, now, MAX_LINES_WITH_CUSTOMER))
    if found.lines is None:
        return _answer(found, await load_wallet(store.background, account_id, found.id, now))
    return _answer(found, build_wallet(found.id, found.lines, found.rewards))


def lookup_customer_now(store: Store, account_id: str, document_number: str | None, phone: str | None
                        ) -> Looked | None:
    """:func:`lookup_customer`'s answer, encoded, without awaiting, for a path that answers at once (the
    lookup's fast lane): held by this worker while exact (:mod:`linksvc.customers.held`), or read and kept; the
    same refusal raised; None when it cannot be read without waiting (the store's reader answers only by
    awaiting, or the wallet holds more than ``MAX_LINES_WITH_CUSTOMER`` lines): then ask
    :func:`lookup_customer`."""
    digits = phone_digits(phone) if phone else None

    def read() -> tuple[str, dict[str, Any], list[HeldReward]] | None:
        try:
            view = repo.lookup_now(store.reader, account_id, document_number, digits,
                                   iso_from_timestamp(time.time()), MAX_LINES_WITH_CUSTOMER)
        except repo.WouldWait:
            return None
        found = _the_one(view)
        if found.lines is None:
            return None
        return found.id, _answer(found, build_wallet(found.id, found.lines, found.rewards)), found.rewards

    return lookup_held(store, (account_id, document_number, digits), read)


def _the_one(found: repo.CustomerView | None) -> repo.CustomerView:
    """The customer found, unless there is none or more than one."""
    if found is None:
        raise NotFound("Customer not found", "no customer matches the given document_number and phone")
    if found.matches > 1:
        raise Conflict("More than one customer matches", "more than one customer has this phone; add document_number")
    return found


def _answer(found: repo.CustomerView, wallet: dict[str, Any]) -> dict[str, Any]:
    body = found.body
    return {"customer_id": found.id, "customer": {key: body.get(key) for key in CUSTOMER_FIELDS}, "wallet": wallet}


async def resolve_customer_id(
    conn: Conn, account_id: str, customer_id: str | None, document_number: str | None, phone: str | None
) -> str:
    """The id of the one customer named by id, document number or phone."""
    if customer_id is not None:
        found = await repo.customer_by(conn, account_id, "id", customer_id)
        if found is None:
            raise NotFound("Customer not found", f"no customer with id {customer_id}")
        return found.id
    body = await find_customer(conn, account_id, document_number, phone)
    return str(body["id"])


# What a back-office search shows of each customer found: enough to tell two apart and open the right one.
FOUND_FIELDS = ("id", "name", "email", "phone", "document_type", "document_number", "external_id", "tier_id")
MAX_FOUND = 50
_SHORTEST_PHONE_PART = 4  # fewer digits than this would match most phones


async def search_customers(store: Store, account_id: str, text: str, limit: int = 20) -> list[dict[str, Any]]:
    """The account's customers that ``text`` names, by name: part of their name or e-mail (any case), their
    document number or external id, or (four digits or more) part of their phone's digits."""
    text = text.strip()
    if not text:
        raise InvalidField("q", "type a name, an e-mail, a phone or a document number", rule="missing")
    digits = phone_digits(text) or ""
    rows = await repo.search(store.reader, account_id, text, digits if len(digits) >= _SHORTEST_PHONE_PART else None,
                             min(limit, MAX_FOUND))
    return [{**{key: row.body.get(key) for key in FOUND_FIELDS}, "id": row.id} for row in rows]
