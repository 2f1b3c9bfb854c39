"""The demo's destinations, on the service itself: no demo delivery leaves the machine.

The demo's connections (``fixtures/demo.json``) name the placeholder host ``this-service.invalid`` and a path
under ``/demo/``. ``.invalid`` is reserved (RFC 6761): no resolver answers it, so such a URL can never reach
another machine, and a connection saved with it passes the address rules of every connection. When the
dispatcher sends a delivery of a demo account (one a ``"demo": true`` seed file loaded) to such a URL, it
sends it to the service's own address instead (:meth:`DemoEndpoints.local_url`), whatever its host and port
(``LINKSVC_HOST``, ``LINKSVC_PORT``, ``--port``, a port 0 the system chose, several workers): the address is
read, at dispatch time, from the sockets the server listens on. Only that rewrite may reach a loopback
address without ``LINKSVC_ALLOW_PRIVATE_DESTINATIONS``; any other path, or an account that is not demo
data, keeps the placeholder and fails like any name that does not resolve.

What answers there (mounted while the database holds demo accounts, 404 otherwise; :mod:`api.demo`):

    /demo/webhook-sink         a webhook receiver: checks the Standard Webhooks signature with the secrets
                               of the demo's webhook connections (the current one and, during a rotation,
                               the previous one), and the timestamp within 5 minutes; 204, or 401 and why
    /demo/vendor/meta/...      Meta's Conversions API as the demo's Meta connection meets it: its access
                               token has expired, and the answer is Meta's documented error for that
                               (fixtures/vendors/meta/auth_expired_token_190_463.json); a connection given
                               any other token gets the documented success
    /demo/vendor/ga4/...       GA4's Measurement Protocol: its documented 204 (it answers 2xx to anything),
                               and its validation server's "nothing wrong" to the connection test
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from ipaddress import ip_address
from typing import Any

from yarl import URL

from linksvc.forwarding.webhook import signature
from linksvc.forwarding.webhook_secrets import secret_key, signing_secrets
from linksvc.jsoncodec import dumpb, loads
from linksvc.settings import REPO_ROOT
from linksvc.store import Store
from storage import demo as repo
from storage.db import AnyDatabase

SELF_HOST = "this-service.invalid"
DEMO_PATH = "/demo/"
TOLERANCE = timedelta(minutes=5)  # Standard Webhooks' default
VENDOR_ANSWERS = REPO_ROOT / "fixtures" / "vendors"
EXPIRED_META_TOKEN = "demo-expired-access-token"
WILDCARDS = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}


class NotListening:
    """The server does not listen yet (the dispatcher starts before the socket opens): try again soon."""


NOT_LISTENING = NotListening()


def base_url(host: str, port: int) -> str:
    """``http://host:port`` that reaches a server listening on ``host`` (a wildcard is reached on loopback)."""
    host = WILDCARDS.get(host, host)
    try:
        literal = ip_address(host.strip("[]"))
    except ValueError:
        literal = None
    shown = f"[{literal}]" if literal is not None and literal.version == 6 else host
    return f"http://{shown}:{port}"


class DemoEndpoints:
    """Where the demo's deliveries go: the service's own address, for the demo accounts only.

    ``listening`` gives the addresses the server's sockets are bound to (``web.BaseRunner.addresses``:
    tuples of host and port); ``host`` and ``port`` are the settings, used while nothing is known of them.
    ``demo_accounts`` reads the demo accounts, when a delivery names the placeholder host for an account not
    known to be one (a seed file may be loaded while the service runs)."""

    def __init__(self, demo_accounts: Callable[[], Awaitable[Sequence[str]]], listening: Callable[[], Sequence[Any]],
                 host: str, port: int) -> None:
        self.demo_accounts = demo_accounts
        self.listening = listening
        self.host = host
        self.port = port
        self.accounts: frozenset[str] = frozenset()

    def base(self) -> str | None:
        for address in self.listening():
            if isinstance(address, tuple) and len(address) >= 2 and isinstance(address[1], int) and address[1]:
                return base_url(str(address[0]), address[1])
        return base_url(self.host, self.port) if self.port else None

    async def local_url(self, account_id: str, url: str) -> str | NotListening | None:
        """The URL on the service itself for a demo delivery to the placeholder host; None for any other."""
        try:
            parsed = URL(url)
        except (TypeError, ValueError):
            return None
        if parsed.raw_host != SELF_HOST or not parsed.raw_path.startswith(DEMO_PATH) or ".." in parsed.raw_path:
            return None
        if account_id not in self.accounts:
            self.accounts = frozenset(await self.demo_accounts())
            if account_id not in self.accounts:
                return None
        base = self.base()
        if base is None:
            return NOT_LISTENING
        return base + str(parsed.relative())


# -- the webhook sink -------------------------------------------------------------------------------------


def signature_problem(secrets: Sequence[str], headers: Mapping[str, str], body: bytes, now: datetime) -> str | None:
    """Why a Standard Webhooks delivery is not signed by one of ``secrets``; None when it is."""
    msg_id, stamp, signed = (headers.get(name, "") for name in ("webhook-id", "webhook-timestamp", "webhook-signature"))
    if not msg_id or not stamp or not signed:
        return "webhook-id, webhook-timestamp and webhook-signature are required"
    try:
        sent_at = int(stamp)
    except ValueError:
        return "webhook-timestamp is not a Unix time in seconds"
    if abs(now.timestamp() - sent_at) > TOLERANCE.total_seconds():
        return "webhook-timestamp is more than 5 minutes away from now"
    given = [part for part in signed.split(" ") if part.startswith("v1,")]
    for secret in secrets:
        try:
            expected = signature(secret_key(secret), msg_id, sent_at, body)
        except ValueError:
            continue
        if any(hmac.compare_digest(expected, candidate) for candidate in given):
            return None
    return "no signature matches a secret of the demo's webhook connections"


@dataclass(frozen=True)
class SinkAnswer:
    status: int
    problem: str | None = None


async def webhook_sink(db: Store, headers: Mapping[str, str], body: bytes, now: datetime) -> SinkAnswer | None:
    """The sink's answer to one delivery; None when the database holds no demo data (the sink is not there)."""
    conn = db.reader
    if not await repo.any_account(conn):
        return None
    secrets: list[str] = []
    for connection in await repo.webhook_connections(conn):
        secrets += signing_secrets(connection.body.get("config") or {}, now)
    problem = signature_problem(secrets, headers, body, now)
    return SinkAnswer(401, problem) if problem else SinkAnswer(204)


# -- the vendors' stand-ins -------------------------------------------------------------------------------


@cache
def _fixture(vendor: str, name: str) -> dict[str, Any]:
    answer: dict[str, Any] = loads((VENDOR_ANSWERS / vendor / f"{name}.json").read_bytes())
    return answer


@dataclass(frozen=True)
class VendorAnswer:
    status: int
    headers: dict[str, str]
    body: bytes


def _answer(vendor: str, name: str, body: Any = None) -> VendorAnswer:
    fixture = _fixture(vendor, name)
    payload = fixture["body"] if body is None else body
    raw = payload.encode() if isinstance(payload, str) else dumpb(payload)
    return VendorAnswer(int(fixture["status"]), dict(fixture.get("headers") or {}), raw)


def vendor_answer(vendor: str, path: str, query: Mapping[str, str], body: bytes) -> VendorAnswer | None:
    """What the vendor documents it answers a request of the demo's connection; None for another vendor."""
    if vendor == "ga4":  # the validation server (the connection test) says what it found: nothing
        return _answer("ga4", "debug_success" if "/debug/" in path else "collect_success")
    if vendor == "meta":
        if query.get("access_token") == EXPIRED_META_TOKEN:
            return _answer("meta", "auth_expired_token_190_463")
        try:
            payload = loads(body) if body else None
        except ValueError:
            payload = None
        sent = payload.get("data") if isinstance(payload, dict) else None
        received = len(sent) if isinstance(sent, list) else 0
        return _answer("meta", "success", {**_fixture("meta", "success")["body"], "events_received": received})
    return None


async def demo_mounted(db: Store) -> bool:
    return await repo.any_account(db.reader)


def endpoints_of(db: AnyDatabase, listening: Callable[[], Sequence[Any]], host: str, port: int) -> DemoEndpoints:
    """The dispatcher's demo endpoints for the service on ``db``."""
    return DemoEndpoints(lambda: repo.accounts(db.reader), listening, host, port)
