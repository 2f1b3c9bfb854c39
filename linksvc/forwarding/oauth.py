"""OAuth 2.0 access tokens from refresh tokens (RFC 6749, section 6), kept per connection until shortly
before they expire and shared by every delivery of the connection.

A connection whose config has ``client_id``, ``client_secret`` and ``refresh_token`` gets its access token
from ``token_url`` (Google's by default) with ``grant_type=refresh_token``; the token is kept until
:data:`MARGIN_SECONDS` before its ``expires_in`` runs out, one refresh at a time per connection. A destination
that answers 401 gets a fresh token once (:meth:`TokenCache.invalidate`, then the delivery is sent again).
A connection with a fixed ``access_token`` and no refresh token uses that one as it is.

The token endpoint's refusal (``invalid_grant``: a revoked or expired refresh token, a wrong client) is
final (:class:`TokenError` with ``retry=False``); a network error or a 5xx there is retried like any
delivery. No token, secret or refresh token is ever logged or kept in an error message.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from dataclasses import dataclass
from typing import Any

import aiohttp

from linksvc.forwarding.outgoing import setting
from linksvc.forwarding.sender import read_bounded
from linksvc.forwarding.verdicts import json_body
from linksvc.netguard import check_literal_host
from linksvc.untrusted import safe_text

GOOGLE_TOKEN_URL = "https://oauth2.googleapis.com/token"
MARGIN_SECONDS = 300.0
CREDENTIALS = ("client_id", "client_secret", "refresh_token")


class TokenError(Exception):
    def __init__(self, message: str, retry: bool) -> None:
        super().__init__(message)
        self.retry = retry


@dataclass(frozen=True)
class _Held:
    token: str
    good_until: float  # time.monotonic()


def uses_refresh_token(connection: dict[str, Any]) -> bool:
    return all(setting(connection, name) for name in CREDENTIALS)


def _key(connection: dict[str, Any]) -> str:
    """Per connection and per credentials: a changed client, refresh token or token URL starts afresh."""
    parts = [str(connection.get("id"))] + [setting(connection, name) or "" for name in (*CREDENTIALS, "token_url")]
    return hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


class TokenCache:
    def __init__(self, allow_private: bool = False) -> None:
        self.allow_private = allow_private
        self._held: dict[str, _Held] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self.refreshes = 0

    def invalidate(self, connection: dict[str, Any]) -> None:
        self._held.pop(_key(connection), None)

    async def with_token(self, session: aiohttp.ClientSession, connection: dict[str, Any]) -> dict[str, Any]:
        """The connection with a current ``config.access_token`` (unchanged when it has no refresh token)."""
        if not uses_refresh_token(connection):
            return connection
        token = await self.token(session, connection)
        return {**connection, "config": {**(connection.get("config") or {}), "access_token": token}}

    async def token(self, session: aiohttp.ClientSession, connection: dict[str, Any]) -> str:
        key = _key(connection)
        held = self._held.get(key)
        if held is not None and time.monotonic() < held.good_until:
            return held.token
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:  # one refresh at a time per connection; the others take its token
            held = self._held.get(key)
            if held is not None and time.monotonic() < held.good_until:
                return held.token
            token, lifetime = await self._refresh(session, connection)
            self._held[key] = _Held(token, time.monotonic() + max(0.0, lifetime - MARGIN_SECONDS))
            self.refreshes += 1
            return token

    async def _refresh(self, session: aiohttp.ClientSession, connection: dict[str, Any]) -> tuple[str, float]:
        url = setting(connection, "token_url") or GOOGLE_TOKEN_URL
        form = {"grant_type": "refresh_token", **{name: setting(connection, name) or "" for name in CREDENTIALS}}
        if not self.allow_private:
            check_literal_host(url)
        async with session.post(url, data=form, allow_redirects=False,
                                headers={"Accept": "application/json"}) as response:
            body = json_body(await read_bounded(response))
            status = response.status
        answer = body if isinstance(body, dict) else {}
        if status == 200 and isinstance(answer.get("access_token"), str) and answer["access_token"]:
            expires = answer.get("expires_in")
            lifetime = float(expires) if isinstance(expires, int | float) and expires > 0 else 3600.0
            return answer["access_token"], lifetime
        error = safe_text(str(answer.get("error") or f"HTTP {status}"), 100)
        description = safe_text(str(answer.get("error_description") or ""), 300)
        message = f"token endpoint refused the refresh token: {error}" + (f" ({description})" if description else "")
        raise TokenError(message, retry=status in (408, 429) or status >= 500)
