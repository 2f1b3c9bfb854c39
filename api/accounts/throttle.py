"""The throttle of credential guesses around the handlers that check a credential (see
:mod:`linksvc.accounts.throttle` for the rule and :mod:`linksvc.client_address` for who the client is).

Only a request that carries a credential of the kind pays anything: one indexed read before the credential
is looked at (answered 429 with ``Retry-After`` when its address has too many failures of that kind), and
one write when the credential turns out wrong. A request without one, or with the right one, writes nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp import web

from api.appkeys import AUTH_THROTTLE
from linksvc.accounts.throttle import now_ms
from linksvc.errors import Unauthorized

FORWARDED_FOR = "X-Forwarded-For"


def client_of(request: web.Request) -> str:
    """The key the request's attempts are counted under: its client address (its /64 for IPv6)."""
    throttle = request.app[AUTH_THROTTLE]
    # Without trusted proxies the header is never read: nobody's word is taken for the address.
    forwarded = ",".join(request.headers.getall(FORWARDED_FOR, ())) if throttle.trusted_proxies else ""
    return throttle.client_of(request.remote, forwarded)


async def admit(request: web.Request, kind: str) -> str:
    """Raises RateLimited when the request's client has too many failures of ``kind``; else its key."""
    client = client_of(request)
    await request.app[AUTH_THROTTLE].check(kind, client, now_ms())
    return client


async def failed(request: web.Request, kind: str, client: str) -> None:
    await request.app[AUTH_THROTTLE].failed(kind, client, now_ms())


@asynccontextmanager
async def attempt(request: web.Request, kind: str, carried: bool = True) -> AsyncIterator[None]:
    """Around the check of a credential of ``kind``: refused first when throttled, and an Unauthorized
    raised inside is counted as a failure. ``carried=False`` (the request has no such credential) skips both."""
    if not carried:
        yield
        return
    client = await admit(request, kind)
    try:
        yield
    except Unauthorized:
        await failed(request, kind, client)
        raise
