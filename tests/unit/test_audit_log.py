"""The audit log is append-only: no statement anywhere in the service updates or deletes its rows, and no admin
route changes them."""

from __future__ import annotations

import re
from pathlib import Path

from api.admin import ENDPOINTS

ROOT = Path(__file__).resolve().parents[2]
CHANGE = re.compile(r"\b(UPDATE\s+audit_log|DELETE\s+FROM\s+audit_log|TRUNCATE\s+audit_log)\b", re.IGNORECASE)


def test_no_statement_changes_the_audit_log() -> None:
    found = [f"{path.relative_to(ROOT)}: {match.group(0)}"
             for folder in ("storage", "linksvc", "api") for path in sorted((ROOT / folder).rglob("*"))
             if path.suffix in (".py", ".sql") for match in CHANGE.finditer(path.read_text(encoding="utf-8"))]
    assert not found


def test_the_audit_log_is_only_read_through_the_api() -> None:
    routes = {(e.method, e.path) for e in ENDPOINTS if "audit-log" in e.path}
    assert routes == {("GET", "/accounts/{account_id}/audit-log"), ("GET", "/audit-log"),
                      ("GET", "/people/me/audit-log")}
