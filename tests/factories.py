"""Seed documents for tests: two accounts (A, production; B, sandbox), each with SERVER and CLIENT keys."""

from __future__ import annotations

import copy
from typing import Any

ADMIN_TOKEN = "test-admin-token-0123456789"

A = "aaaaaaaa-0000-4000-8000-000000000001"
B = "bbbbbbbb-0000-4000-8000-000000000002"
KEYS = {
    (A, "SERVER"): "lk_test_a_server_000000000000000001",
    (A, "CLIENT"): "lk_test_a_client_000000000000000001",
    (B, "SERVER"): "lk_test_b_server_000000000000000002",
    (B, "CLIENT"): "lk_test_b_client_000000000000000002",
}


def _uuid(account: str, n: int) -> str:
    return f"{account[:8]}-{n:04d}-4000-8000-{n:012d}"


def account_doc(account_id: str, environment: str) -> dict[str, Any]:
    brand = _uuid(account_id, 1)
    tier = _uuid(account_id, 2)
    reward = _uuid(account_id, 3)
    return {
        "id": account_id,
        "name": f"Account {account_id[:4]}",
        "environment": environment,
        "api_keys": [
            {"kind": "SERVER", "key": KEYS[(account_id, "SERVER")]},
            {"kind": "CLIENT", "key": KEYS[(account_id, "CLIENT")]},
        ],
        "brands": [{"id": brand, "name": f"Brand of {account_id[:4]}"}],
        "tiers": [{"id": tier, "name": "Gold", "level": 2}],
        "rewards": [{"id": reward, "name": "Points", "attributes": {"conversion_factor": 0.01}}],
        "campaigns": [
            {"id": _uuid(account_id, 4), "name": "Welcome", "type": "BEHAVIOR", "brand_id": brand,
             "attributes": {"event_type": "PURCHASE", "reward_id": reward, "amount": 10}},
        ],
        "contacts": [{"id": _uuid(account_id, 5), "email": f"ana@{account_id[:4]}.example",
                      "document_number": "CC100"}],
        "customers": [{"id": f"cust-{account_id[:4]}", "name": "Ana", "document_number": "CC100",
                       "phone": "+57 300 123 4567",
                       "wallet": {"lines": [{"amount": 100, "reward_id": reward}]}}],
        "custom_event_types": [{"id": _uuid(account_id, 6), "name": "page_view"}],
        "connections": [{"id": _uuid(account_id, 7), "destination": "webhook", "enabled": False,
                         "event_types": ["PURCHASE"],
                         "config": {"endpoint_url": "https://hooks.example.com/in",
                                    "secret": "whsec_dGVzdHNlY3JldHRlc3RzZWNyZXR0ZXN0c2VjcmV0MTI="}}],
        "links": [{"id": _uuid(account_id, 8), "code": f"lnk{account_id[:4]}", "kind": "email",
                   "destination_url": "https://shop.example/p?x=1#top"}],
    }


def two_accounts() -> dict[str, Any]:
    return copy.deepcopy({"accounts": [account_doc(A, "production"), account_doc(B, "sandbox")]})


def ids(account_id: str) -> dict[str, str]:
    """The ids of each resource in :func:`account_doc`, by table name."""
    return {
        "brands": _uuid(account_id, 1), "tiers": _uuid(account_id, 2), "rewards": _uuid(account_id, 3),
        "campaigns": _uuid(account_id, 4), "contacts": _uuid(account_id, 5),
        "customers": f"cust-{account_id[:4]}", "custom_event_types": _uuid(account_id, 6),
        "connections": _uuid(account_id, 7), "links": _uuid(account_id, 8),
    }
