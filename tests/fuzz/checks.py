"""The fuzz run's own check, loaded by schemathesis through ``SCHEMATHESIS_HOOKS=tests.fuzz.checks``."""

from __future__ import annotations

import schemathesis


@schemathesis.check
def error_body_shape(ctx: schemathesis.CheckContext, response: schemathesis.Response,
                     case: schemathesis.Case) -> bool | None:
    """Every 4xx/5xx JSON body is exactly ``{"error": ..., "details": ...}``."""
    if response.status_code < 400 or "json" not in response.headers.get("content-type", [""])[0]:
        return None
    body = response.json()
    if not isinstance(body, dict) or set(body) != {"error", "details"}:
        raise AssertionError(f"{response.status_code} body is not {{error, details}}: {response.text[:300]}")
    return True
