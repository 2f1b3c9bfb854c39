"""Per-customer one-time-code state: the secret, the last step used, failures in the current step."""

from __future__ import annotations

from dataclasses import dataclass

from storage.db import Conn, Tx, execute, fetch_one

OWNS = ("totp_state",)


@dataclass(frozen=True, slots=True)
class TotpState:
    """A customer's one-time-code secret, the last step a code was used in, and the failures of ``failed_step``
    (-1: none)."""

    customer_id: str
    account_id: str
    secret: str
    last_used_step: int
    failed_step: int
    failures: int


async def get_state(conn: Conn, customer_id: str) -> TotpState | None:
    row = await fetch_one(
        conn,
        "SELECT customer_id, account_id, secret, last_used_step, failed_step, failures FROM totp_state "
        "WHERE customer_id = ?",
        (customer_id,),
    )
    return None if row is None else TotpState(*row)


async def create_state(conn: Tx, account_id: str, customer_id: str, secret: str) -> None:
    await execute(
        conn,
        "INSERT OR IGNORE INTO totp_state (customer_id, account_id, secret) VALUES (?, ?, ?)",
        (customer_id, account_id, secret),
    )


async def record_use(conn: Tx, customer_id: str, step: int) -> None:
    await execute(conn, "UPDATE totp_state SET last_used_step = ? WHERE customer_id = ?", (step, customer_id))


async def record_failure(conn: Tx, customer_id: str, step: int) -> None:
    """Count a failed try in ``step``; failures of earlier steps are forgotten."""
    await execute(
        conn,
        "UPDATE totp_state SET failures = CASE WHEN failed_step = ? THEN failures + 1 ELSE 1 END, "
        "failed_step = ? WHERE customer_id = ?",
        (step, step, customer_id),
    )
