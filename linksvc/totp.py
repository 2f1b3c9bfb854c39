"""One-time codes of customers (product decisions, section 6): RFC 6238, 6 digits, SHA-1, a 300 s step.

A code is accepted once, in its own step or the one after. After five failed tries in a step, the
customer's verifications are refused until the next step.
"""

from __future__ import annotations

import hmac
import math
from datetime import UTC, datetime
from typing import Any

import pyotp

from linksvc.errors import RateLimited
from storage import totp as repo
from storage.db import Database

STEP_SECONDS = 300
MAX_FAILURES = 5


def _totp(secret: str) -> pyotp.TOTP:
    return pyotp.TOTP(secret, digits=6, interval=STEP_SECONDS)


def step_of(now: float) -> int:
    return int(now // STEP_SECONDS)


async def issue_code(db: Database, account_id: str, customer_id: str, now: float) -> dict[str, Any]:
    async with db.transaction() as tx:
        await repo.create_state(tx, account_id, customer_id, pyotp.random_base32())
        state = await repo.get_state(tx, customer_id)
    assert state is not None
    step = step_of(now)
    ends = (step + 1) * STEP_SECONDS
    return {
        "code": _totp(state["secret"]).at(step * STEP_SECONDS),
        "expired_at": datetime.fromtimestamp(ends, UTC).strftime("%Y-%m-%dT%H:%M:%S.000000Z"),
        "seconds_left": int(ends - now),
    }


async def verify_code(db: Database, customer_id: str, code: str, now: float) -> bool:
    step = step_of(now)
    async with db.transaction() as tx:
        state = await repo.get_state(tx, customer_id)
        if state is None:
            return False
        if state["failed_step"] == step and state["failures"] >= MAX_FAILURES:
            wait = math.ceil((step + 1) * STEP_SECONDS - now)
            raise RateLimited(wait, "too many wrong codes; ask for a new code after the current one expires")
        totp = _totp(state["secret"])
        for candidate in (step, step - 1):
            if candidate > state["last_used_step"] and hmac.compare_digest(
                totp.at(candidate * STEP_SECONDS), code
            ):
                await repo.record_use(tx, customer_id, candidate)
                return True
        await repo.record_failure(tx, customer_id, step)
        return False
