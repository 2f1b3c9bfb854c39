"""Schemathesis against the admin API's OpenAPI document of the real server (tests/fuzz/conftest.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fuzz.conftest import ACCOUNT, ADMIN_TOKEN, config, run_schemathesis
from tests.processes import call


def test_admin(service: str, tmp_path: Path) -> None:
    # Every operation works on the demo account, so that the generated requests reach past the account
    # lookup; DELETE /accounts/{account_id} gets an account of its own, as deleting the demo account would
    # turn every later request into a 404.
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}", "Content-Type": "application/json"}
    status, body, _ = call(service + "/api/admin/v1/accounts", headers, "POST",
                            json.dumps({"name": "Fuzz: to be deleted", "environment": "sandbox"}).encode())
    assert status == 201, body
    toml = config(
        auth={"admin": {"bearer": ADMIN_TOKEN}},
        parameters={"path.account_id": ACCOUNT},
        operations=({"include-name": "DELETE /accounts/{account_id}",
                     "parameters": {"path.account_id": body["data"]["id"]}},
                    # the live feed answers a stream that lasts as long as its client: tests/http/test_feed.py
                    {"include-name": "GET /accounts/{account_id}/feed", "enabled": False},
                    # a connection's body holds its config to its destination's model (`if`/`then` per destination
                    # beside `additionalProperties: false`), which schemathesis cannot generate from ("Schema
                    # Error"); tests/http/test_connection_configs.py covers those two operations
                    {"include-name": "POST /accounts/{account_id}/connections", "enabled": False},
                    {"include-name": "PUT /accounts/{account_id}/connections/{id}", "enabled": False}),
    )
    run_schemathesis(service, "/api/admin/v1/openapi.json", toml, tmp_path)
