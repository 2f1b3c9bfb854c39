"""A customer's wallet: the unexpired lines it holds and one total per reward (section 5)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from decimal import Decimal
from functools import lru_cache
from typing import Any

import orjson

from linksvc.clock import iso, utcnow
from storage import wallet as repo
from storage.db import Conn
from storage.wallet import HeldReward

_WALLET_NAMESPACE = uuid.UUID("5f4a0c55-31a3-4f0e-8d8e-0f3bd0d4c2a1")


@lru_cache(maxsize=65536)
def wallet_id(customer_id: str) -> str:
    return str(uuid.uuid5(_WALLET_NAMESPACE, customer_id))


def build_wallet(customer_id: str, lines: str, held: Sequence[HeldReward]) -> dict[str, Any]:
    """Pure: the held lines as JSON text and the rewards held ``(reward_id, amounts, earliest expiration,
    reward)`` (``storage.wallet.wallet_view``) -> the spec's wallet object. The lines go out as they are; each
    total is the exact decimal sum of its lines."""
    return {
        "id": wallet_id(customer_id),
        "owner_id": customer_id,
        "lines": orjson.Fragment(lines),
        "totals": [
            {"total": sum(map(Decimal, amounts.split()), Decimal(0)), "reward_id": reward_id,
             "expiration_date": earliest, "reward": reward}
            for reward_id, amounts, earliest, reward in held
        ],
    }


async def load_wallet(conn: Conn, account_id: str, customer_id: str, now: str | None = None) -> dict[str, Any]:
    """The wallet as the customer lookup answers it (at ``now``, default the present), in one statement. A
    wallet may hold thousands of lines: pass a connection that reads off the event loop."""
    lines, held = await repo.wallet_view(conn, account_id, customer_id, now or iso(utcnow()))
    return build_wallet(customer_id, lines, held)
