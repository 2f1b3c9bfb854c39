"""One-time codes of customers (product decisions, section 6): RFC 6238, 6 digits, SHA-1, a 300 s step.

A code is accepted once, in its own step or the one after. After five failed tries in a step, the
customer's verifications are refused until the next step. The algorithm is written out here (a dozen
lines of RFC 4226) because common libraries cap the step at 120 seconds.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
import secrets
import struct
from datetime import UTC, datetime
from typing import Any

from linksvc.customers import service as customers
from linksvc.errors import RateLimited
from linksvc.store import Store, in_one_unit
from storage import totp as repo
from storage.db import Tx

STEP_SECONDS = 300
MAX_FAILURES = 5


DIGITS = 6


def hotp(key: bytes, counter: int, digits: int = DIGITS) -> str:
    """RFC 4226: HMAC-SHA-1 of the counter, dynamically truncated to ``digits`` decimal digits."""
    mac = hmac.new(key, struct.pack(">Q", counter), hashlib.sha1).digest()
    offset = mac[-1] & 0x0F
    value = struct.unpack(">I", mac[offset:offset + 4])[0] & 0x7FFFFFFF
    return str(value % 10**digits).zfill(digits)


def new_secret() -> str:
    return base64.b32encode(secrets.token_bytes(20)).decode()


def code_at(secret: str, step: int) -> str:
    """RFC 6238: the HOTP of the time step."""
    return hotp(base64.b32decode(secret), step)


def step_of(now: float) -> int:
    return int(now // STEP_SECONDS)


async def issue_code(db: Store, account_id: str, customer_id: str, now: float) -> dict[str, Any]:
    secret = new_secret()

    async def unit(tx: Tx) -> repo.TotpState | None:
        await repo.create_state(tx, account_id, customer_id, secret)
        return await repo.get_state(tx, customer_id)

    state = await in_one_unit(db, unit)
    assert state is not None
    step = step_of(now)
    ends = (step + 1) * STEP_SECONDS
    return {
        "code": code_at(state.secret, step),
        "expired_at": datetime.fromtimestamp(ends, UTC).strftime("%Y-%m-%dT%H:%M:%S.000000Z"),
        "seconds_left": int(ends - now),
    }


async def request_code(store: Store, account_id: str, customer_id: str | None, document_number: str | None,
                       phone: str | None, now: float) -> dict[str, Any]:
    """A new code for the one customer named by id, document number or phone."""
    found = await customers.resolve_customer_id(store.reader, account_id, customer_id, document_number, phone)
    return await issue_code(store, account_id, found, now)


async def check_code(store: Store, account_id: str, customer_id: str, code: str, now: float) -> bool:
    """Whether ``code`` is the account's customer's current code (404 for a customer of another account)."""
    found = await customers.resolve_customer_id(store.reader, account_id, customer_id, None, None)
    return await verify_code(store, found, code, now)


async def verify_code(db: Store, customer_id: str, code: str, now: float) -> bool:
    step = step_of(now)

    async def unit(tx: Tx) -> bool:
        state = await repo.get_state(tx, customer_id)
        if state is None:
            return False
        if state.failed_step == step and state.failures >= MAX_FAILURES:
            wait = math.ceil((step + 1) * STEP_SECONDS - now)
            raise RateLimited(wait, "too many wrong codes; ask for a new code after the current one expires")
        for candidate in (step, step - 1):
            if candidate > state.last_used_step and hmac.compare_digest(code_at(state.secret, candidate), code):
                await repo.record_use(tx, customer_id, candidate)
                return True
        await repo.record_failure(tx, customer_id, step)
        return False

    return await in_one_unit(db, unit)
