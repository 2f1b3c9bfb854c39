"""Schemathesis against the admin API, the run "forwarding and catalog" (tests/fuzz/admin.py)."""

from __future__ import annotations

from pathlib import Path

from tests.fuzz.admin import fuzz


def test_admin(service: str, tmp_path: Path) -> None:
    fuzz(service, tmp_path, "forwarding and catalog")
