"""The vendors' documented answers in ``fixtures/vendors/<vendor>/`` (each with its source page and the
outcome the service must reach), read the same way by every vendor's tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "vendors"


def fixture_cases(vendor: str) -> list[tuple[str, dict[str, Any]]]:
    """(file name, fixture) of every documented answer of ``vendor``, in name order."""
    return [(path.name, json.loads(path.read_text())) for path in sorted((ROOT / vendor).glob("*.json"))]


def answer(vendor: str, name: str) -> tuple[int, Any]:
    """(status, body) of one documented answer, e.g. ``answer("google_ads", "upload_success")``."""
    fixture = json.loads((ROOT / vendor / f"{name}.json").read_text())
    return int(fixture["status"]), fixture["body"]


def body_bytes(body: Any) -> bytes:
    """A fixture's body as the vendor sends it: text as is, anything else as JSON."""
    return body.encode() if isinstance(body, str) else json.dumps(body).encode()
