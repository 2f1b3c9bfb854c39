"""A customer's wallet: the unexpired lines it holds and one total per reward (section 5)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from decimal import Decimal
from functools import lru_cache
from typing import Any

import orjson

from linksvc.clock import iso, utcnow
from linksvc.jsoncodec import loads
from storage import wallet as repo
from storage.db import Conn

_WALLET_NAMESPACE = uuid.UUID("5f4a0c55-31a3-4f0e-8d8e-0f3bd0d4c2a1")


@lru_cache(maxsize=65536)
def wallet_id(customer_id: str) -> str:
    return str(uuid.uuid5(_WALLET_NAMESPACE, customer_id))


def build_wallet(customer_id: str, view: Sequence[Any], rewards: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """Pure: the rows of ``storage.wallet.wallet_view`` and reward views -> the spec's wallet object. The
    lines arrive as JSON text and go out as they are; each total is the exact decimal sum of its lines."""
    docs: list[str] = []
    totals = []
    for row in view:
        if row["part"] == 0:
            docs.append(row["doc"])
        else:
            totals.append({
                "total": sum(map(Decimal, row["amounts"].split()), Decimal(0)),
                "reward_id": row["doc"],
                "expiration_date": row["k2"],
                "reward": rewards.get(row["doc"]),
            })
    return {
        "id": wallet_id(customer_id),
        "owner_id": customer_id,
        "lines": orjson.Fragment("[" + ",".join(docs) + "]"),
        "totals": totals,
    }


async def load_wallet(conn: Conn, account_id: str, customer_id: str, now: str | None = None) -> dict[str, Any]:
    """The wallet as the customer lookup answers it (at ``now``, default the present). A wallet may hold
    thousands of lines: pass a connection that reads off the event loop."""
    view = await repo.wallet_view(conn, account_id, customer_id, now or iso(utcnow()))
    held = [row["doc"] for row in view if row["part"] == 1]
    bodies = await repo.reward_bodies(conn, account_id, held)
    rewards = {reward_id: {**loads(body), "account_id": account_id} for reward_id, body in bodies.items()}
    return build_wallet(customer_id, view, rewards)
