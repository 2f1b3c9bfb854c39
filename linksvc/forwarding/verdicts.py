"""What a destination's answer means: delivered, retry later, or failed for good.

An HTTP status alone does not say: TikTok answers 200 with ``code`` not 0 for a refused event, Google Ads 200
with a ``partialFailureError``, Meta 200 with fewer ``events_received`` than sent. Each destination module
may define ``judge(status, body, sent) -> Verdict`` that reads the vendor's body; :func:`by_status` is the rule
for the others (and the fallback of every vendor judge):

    2xx                          delivered
    408, 429, 5xx                retry (``Retry-After`` honoured by the dispatcher)
    401 with ``token_expired``   retry at once with a fresh token (OAuth destinations)
    any other status             failed

``message`` is the vendor's own code and message, kept as the delivery's ``last_error`` and shown by the admin
API; it is made safe text and cut, whatever the vendor sent. Everything here is pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from linksvc.jsoncodec import JSONDecodeError, loads
from linksvc.untrusted import safe_text

DELIVERED = "delivered"
RETRY = "retry"
FAILED = "failed"
RETRYABLE_STATUSES = frozenset({408, 429})
MESSAGE_CHARS = 500


@dataclass(frozen=True)
class Verdict:
    outcome: str  # DELIVERED, RETRY or FAILED
    message: str | None = None
    token_expired: bool = False  # the credential expired: refresh it, then retry at once

    def __post_init__(self) -> None:
        if self.outcome not in (DELIVERED, RETRY, FAILED):
            raise ValueError(f"unknown outcome {self.outcome!r}")
        if self.message is not None:
            object.__setattr__(self, "message", safe_text(self.message, MESSAGE_CHARS))


def by_status(status: int, message: str | None = None) -> Verdict:
    """The outcome an HTTP status gives when the body says nothing more."""
    text = f"HTTP {status}" + (f": {message}" if message else "")
    if 200 <= status < 300:
        return Verdict(DELIVERED, message)
    if status in RETRYABLE_STATUSES or status >= 500:
        return Verdict(RETRY, text)
    return Verdict(FAILED, text)


def json_body(body: bytes) -> Any:
    """The answer as JSON, or None when it is not JSON (an HTML error page from a proxy, nothing at all)."""
    if not body:
        return None
    try:
        return loads(body)
    except (JSONDecodeError, ValueError):
        return None


def excerpt(body: bytes, chars: int = 200) -> str:
    """The start of a body that is not JSON, as safe text (for the message of a refusal)."""
    return safe_text(body[:chars * 4].decode("utf-8", "replace"), chars)
