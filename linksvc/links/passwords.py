"""Password-protected links: the argon2id hash a link stores instead of its password, and the cookie that
spares a browser the question for a while (docs/decisions.md, "Link lifecycle and passwords (issue 34)").

A link's stored ``password`` member is always an argon2id hash (argon2-cffi's defaults, RFC 9106's second
recommended profile: 64 MiB, 3 passes, 4 lanes). Hashing and checking take a tenth of a second of CPU on
purpose: they run in a thread, never on the event loop.

The cookie names the link and when it lapses, signed with HMAC-SHA256 keyed by the link's stored hash: no
key to configure, and a new password (or none) voids every cookie given for the old one.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
from collections.abc import Mapping
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from linksvc.accounts.throttle import AuthThrottle, now_ms

_HASHER = PasswordHasher()
PREFIX = "$argon2id$"
COOKIE_PREFIX = "linksvc_pw_"  # + the link's code


def protected(link: Mapping[str, Any]) -> bool:
    """Whether the stored link asks for a password."""
    return isinstance(link.get("password"), str) and bool(link["password"])


async def hashed(password: str) -> str:
    """The argon2id hash of ``password`` (in a thread)."""
    return await asyncio.to_thread(_HASHER.hash, password)


async def matches(stored_hash: str, password: str) -> bool:
    """Whether ``password`` is the one ``stored_hash`` was made from (in a thread)."""
    def check() -> bool:
        try:
            return _HASHER.verify(stored_hash, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False

    return await asyncio.to_thread(check)


def cookie_name(code: str) -> str:
    return COOKIE_PREFIX + code


def _signature(stored_hash: str, link_id: str, until: int) -> str:
    return hmac.new(stored_hash.encode(), f"{link_id}|{until}".encode(), hashlib.sha256).hexdigest()


def cookie_value(stored_hash: str, link_id: str, until: int) -> str:
    """The cookie's value: when it lapses (a Unix time) and its signature."""
    return f"{until}.{_signature(stored_hash, link_id, until)}"


def cookie_admits(value: str | None, stored_hash: str, link_id: str, now: float) -> bool:
    """Whether a cookie's value was given for this link and its current password, and has not lapsed."""
    if not value or "." not in value:
        return False
    until_text, signature = value.split(".", 1)
    if not until_text.isdigit() or int(until_text) <= now:
        return False
    return hmac.compare_digest(signature, _signature(stored_hash, link_id, int(until_text)))


def throttle_client(link_id: str, address_key: str) -> str:
    """The key a link's password guesses are counted under: the link and the client's address."""
    return f"{link_id} {address_key}"


async def attempt(throttle: AuthThrottle, link_id: str, stored_hash: str, address_key: str, password: str) -> bool:
    """A password posted to a protected link: raises RateLimited when the client has too many failed guesses at
    this link (the sign-in throttle's rule, kind ``link_password``); records a failure when it is wrong."""
    client = throttle_client(link_id, address_key)
    await throttle.check("link_password", client, now_ms())
    if await matches(stored_hash, password):
        return True
    await throttle.failed("link_password", client, now_ms())
    return False
