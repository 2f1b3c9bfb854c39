"""Schemathesis against the admin API, the run "people and accounts" (tests/fuzz/admin.py)."""

from __future__ import annotations

from pathlib import Path

from tests.fuzz.admin import every_operation_is_in_one_run, fuzz


def test_admin(service: str, tmp_path: Path) -> None:
    fuzz(service, tmp_path, "people and accounts")


def test_every_operation_is_in_one_run(service: str) -> None:
    every_operation_is_in_one_run(service)
