"""Schemathesis against the storefront's OpenAPI document of the real server (tests/fuzz/conftest.py)."""

from __future__ import annotations

from pathlib import Path

from tests.fuzz.conftest import ACCOUNT, SERVER_KEY, config, run_schemathesis
from tests.processes import call


def test_storefront(service: str, tmp_path: Path) -> None:
    status, body, _ = call(service + "/api/storefront/v1/auth/authorize", {"x-api-key": SERVER_KEY})
    assert status == 200, body
    toml = config(
        auth={"bearer": {"bearer": body["data"]}, "api_key": {"api_key": SERVER_KEY}},
        parameters={"header.x-account-id": ACCOUNT},  # GET /contacts requires it; the token's account
    )
    run_schemathesis(service, "/api/storefront/v1/openapi.json", toml, tmp_path)
