"""Webhook signing secrets: the ``whsec_`` format, new secrets, rotation, and which secrets sign at a moment.

A secret is ``whsec_`` followed by the standard base64 (``+`` and ``/``, padding optional) of 24 to 64 random
bytes, the key size of Standard Webhooks' symmetric scheme (https://www.standardwebhooks.com). One is made
of 32 bytes when a webhook connection is created without one.

Rotation keeps the secret it replaces in the connection's config as ``previous_secret`` until
``previous_secret_expires_at`` (24 hours later). Until then every delivery carries two signatures in
``webhook-signature``, the new one first, so each receiver can switch to the new secret when it likes;
from that moment on only the new secret signs.

A secret stored before these rules (shorter than 24 bytes) still signs and may be kept through edits; any
secret that is new or changed must follow them. Rotation is how a short secret is replaced.
"""

from __future__ import annotations

import base64
import binascii
import re
import secrets
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from linksvc.clock import iso, parse_iso
from linksvc.errors import Issues

SECRET_PREFIX = "whsec_"
MIN_KEY_BYTES, MAX_KEY_BYTES, NEW_KEY_BYTES = 24, 64, 32
OVERLAP = timedelta(hours=24)
SECRET, PREVIOUS_SECRET, PREVIOUS_EXPIRES = "secret", "previous_secret", "previous_secret_expires_at"
_STANDARD_BASE64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")


def secret_key(secret: str) -> bytes:
    """The HMAC key of a ``whsec_`` secret: its base64 part decoded (padding may be left off). Lenient on
    length, so that a secret stored before the length rule still signs."""
    encoded = secret.removeprefix(SECRET_PREFIX)
    try:
        key = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("the webhook secret is not a whsec_ followed by base64") from None
    if not key:
        raise ValueError("the webhook secret is empty")
    return key


def secret_problem(secret: Any) -> str | None:
    """Why ``secret`` is not a valid new signing secret, or None when it is."""
    if not isinstance(secret, str) or not secret.startswith(SECRET_PREFIX):
        return f"must be {SECRET_PREFIX} followed by the base64 of {MIN_KEY_BYTES} to {MAX_KEY_BYTES} random bytes"
    encoded = secret.removeprefix(SECRET_PREFIX)
    if not _STANDARD_BASE64.match(encoded) or ("=" in encoded and len(encoded) % 4):
        return f"the part after {SECRET_PREFIX} must be standard base64 (A-Z, a-z, 0-9, + and /)"
    try:
        key = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
    except (binascii.Error, ValueError):
        return f"the part after {SECRET_PREFIX} must be standard base64 (A-Z, a-z, 0-9, + and /)"
    if not MIN_KEY_BYTES <= len(key) <= MAX_KEY_BYTES:
        return f"decodes to {len(key)} bytes; a signing secret is {MIN_KEY_BYTES} to {MAX_KEY_BYTES} random bytes"
    return None


def _usable(secret: str) -> bool:
    try:
        secret_key(secret)
    except ValueError:
        return False
    return True


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(NEW_KEY_BYTES)).decode()


def rotated(config: dict[str, Any], now: datetime) -> dict[str, Any]:
    """``config`` with a new secret; the current one signs beside it until ``now`` + 24 hours. A previous
    secret still in its overlap is dropped: a delivery carries at most two signatures."""
    kept = {k: v for k, v in config.items() if k not in (PREVIOUS_SECRET, PREVIOUS_EXPIRES)}
    current = config.get(SECRET)
    if isinstance(current, str) and _usable(current):
        kept |= {PREVIOUS_SECRET: current, PREVIOUS_EXPIRES: iso(now + OVERLAP)}
    return kept | {SECRET: new_secret()}


def previous_expiry(config: dict[str, Any]) -> datetime | None:
    value = config.get(PREVIOUS_EXPIRES)
    if not isinstance(value, str):
        return None
    try:
        return parse_iso(value)
    except ValueError:
        return None


def signing_secrets(config: dict[str, Any], now: datetime) -> list[str]:
    """The secrets that sign a delivery sent at ``now``: the current one, then the previous one while its
    overlap lasts (strictly before ``previous_secret_expires_at``). An unusable previous secret is left out
    (saves refuse one): it must not stop the current one signing."""
    found = [config[SECRET]] if isinstance(config.get(SECRET), str) else []
    previous, expires = config.get(PREVIOUS_SECRET), previous_expiry(config)
    if isinstance(previous, str) and _usable(previous) and expires is not None and now < expires:
        found.append(previous)
    return found


def check_secrets(config: dict[str, Any], stored: dict[str, Any] | None, path: Callable[[str], str]) -> None:
    """Refuse (400 naming every bad field) a webhook config whose secrets break the rules. ``stored`` is the
    config saved before this edit: a secret already stored there (as ``secret`` or ``previous_secret``) is
    only checked to be usable, so that a short secret saved before the rules can be edited around and rotated."""
    before = stored or {}
    kept = {before.get(SECRET), before.get(PREVIOUS_SECRET)} - {None}
    issues = Issues()
    for name in (SECRET, PREVIOUS_SECRET):
        value = config.get(name)
        if name == PREVIOUS_SECRET and value is None:
            continue
        if isinstance(value, str) and value in kept:
            try:
                secret_key(value)
                continue
            except ValueError as exc:
                issues.add(path(f"config.{name}"), str(exc), "format")
                continue
        problem = secret_problem(value)
        if problem is not None:
            issues.add(path(f"config.{name}"), problem, "missing" if value is None else "format")
    has_previous = config.get(PREVIOUS_SECRET) is not None
    if has_previous and previous_expiry(config) is None:
        rule = "missing" if config.get(PREVIOUS_EXPIRES) is None else "format"
        issues.add(path(f"config.{PREVIOUS_EXPIRES}"),
                   "is required beside previous_secret, as an ISO 8601 time (until when it also signs)", rule)
    if not has_previous and config.get(PREVIOUS_EXPIRES) is not None:
        issues.add(path(f"config.{PREVIOUS_EXPIRES}"), "has no previous_secret to end", "not_allowed")
    issues.raise_if_any()
