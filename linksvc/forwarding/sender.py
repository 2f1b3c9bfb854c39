"""One HTTP request to a destination, and what came back (at most 1 MiB of it).

The session's resolver refuses names that resolve to non-public addresses (:mod:`linksvc.netguard`);
address literals are checked here before the request. Redirects are never followed. A destination's answer
is read up to :data:`MAX_RESPONSE_BYTES`: an endless or huge body (a misbehaving or hostile endpoint) must
not fill the memory; beyond it the connection is dropped instead of drained.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import aiohttp

from linksvc.forwarding.outgoing import Outgoing
from linksvc.netguard import check_literal_host

MAX_RESPONSE_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    retry_after: float | None  # seconds, from Retry-After


def retry_after_seconds(value: str | None, now: datetime) -> float | None:
    """``Retry-After`` as seconds (a number, or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


async def read_bounded(response: aiohttp.ClientResponse, limit: int = MAX_RESPONSE_BYTES) -> bytes:
    body = bytearray()
    while len(body) <= limit:
        chunk = await response.content.read(64 * 1024)
        if not chunk:
            return bytes(body)
        body += chunk
    response.close()
    return bytes(body[:limit])


async def send(session: aiohttp.ClientSession, request: Outgoing, allow_private: bool, now: datetime) -> Answer:
    """Raises RefusedDestination for a non-public address, aiohttp.ClientError, TimeoutError or OSError."""
    if not allow_private:
        check_literal_host(request.url)  # names are checked by the session's resolver
    async with session.request(request.method, request.url, headers=request.headers, data=request.body,
                               allow_redirects=False) as response:
        body = await read_bounded(response)
        return Answer(response.status, body, retry_after_seconds(response.headers.get("Retry-After"), now))
