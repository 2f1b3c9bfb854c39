"""A customer's wallet: the unexpired lines it holds and one total per reward (section 5)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from decimal import Decimal
from functools import lru_cache
from typing import Any

from linksvc.clock import iso, utcnow
from linksvc.jsoncodec import loads
from storage import wallet as repo
from storage.db import Conn

_WALLET_NAMESPACE = uuid.UUID("5f4a0c55-31a3-4f0e-8d8e-0f3bd0d4c2a1")


@lru_cache(maxsize=65536)
def wallet_id(customer_id: str) -> str:
    return str(uuid.uuid5(_WALLET_NAMESPACE, customer_id))


def build_wallet(customer_id: str, lines: Sequence[Any], rewards: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """Pure: lines (rows or dicts of wallet_lines columns, already filtered to unexpired) and reward
    views -> the spec's wallet object."""
    out_lines = []
    totals: dict[str, dict[str, Any]] = {}
    for line in lines:
        amount = Decimal(line["amount"])
        out_lines.append(
            {
                "amount": amount,
                "reward_id": line["reward_id"],
                "campaign_id": line["campaign_id"],
                "brand_id": line["brand_id"],
                "issued_at": line["issued_at"],
                "expiration_date": line["expiration_date"],
                "reservation_expires_at": line["reservation_expires_at"],
            }
        )
        total = totals.setdefault(
            line["reward_id"],
            {
                "total": Decimal(0),
                "reward_id": line["reward_id"],
                "expiration_date": None,
                "reward": rewards.get(line["reward_id"]),
            },
        )
        total["total"] += amount
        expires = line["expiration_date"]
        if expires is not None and (total["expiration_date"] is None or expires < total["expiration_date"]):
            total["expiration_date"] = expires
    return {
        "id": wallet_id(customer_id),
        "owner_id": customer_id,
        "lines": out_lines,
        "totals": list(totals.values()),
    }


async def load_wallet(conn: Conn, account_id: str, customer_id: str) -> dict[str, Any]:
    lines = await repo.unexpired_lines(conn, account_id, customer_id, iso(utcnow()))
    rewards: dict[str, dict[str, Any]] = {}
    for line in lines:
        if line["reward_body"] is not None and line["reward_id"] not in rewards:
            rewards[line["reward_id"]] = {**loads(line["reward_body"]), "account_id": account_id}
    return build_wallet(customer_id, lines, rewards)
