"""The ownership proof of a custom domain: fetch ``{scheme}://{host}/.well-known/linksvc-verify/{token}`` and
compare the body with the token.

The fetch is a request the service makes to a host an admin typed, so it goes through the same guard as
forwarding deliveries (:mod:`linksvc.netguard`): a name must resolve to public addresses only, an address
literal is refused (the host check refuses literals already; this covers rows stored before it), unless
``LINKSVC_ALLOW_PRIVATE_DESTINATIONS`` is on. ``LINKSVC_DOMAIN_VERIFY_CONNECT`` (operator configuration, not the
admin's input) sends the fetch to that address instead, past the guard: the domain is then only the ``Host``
header and the TLS server name.

What the admin is told reveals nothing about the network behind the service: every failure to get a 200 (no
such name, a private address, a refused connection, a timeout, a TLS failure, another status) is the same
``not_served`` sentence; only a 200 whose body is not the token is told apart (``wrong_body``), which only a
host the guard let through can answer. The precise reason goes to the service's log, for the operator.
"""

from __future__ import annotations

import logging

import aiohttp
from aiohttp.abc import AbstractResolver

from linksvc.identity import HEADERS
from linksvc.netguard import PublicOnlyResolver, RefusedDestination, check_literal_host

log = logging.getLogger("linksvc.domains")

VERIFY_PATH = "/.well-known/linksvc-verify/{token}"
MAX_BODY = 4096  # a token is under 100 bytes: more is the wrong body, whatever it says
NOT_SERVED = "not_served"
WRONG_BODY = "wrong_body"


def verification_url(scheme: str, host: str, token: str) -> str:
    return f"{scheme}://{host}{VERIFY_PATH.format(token=token)}"


async def fetch_problem(scheme: str, host: str, token: str, *, connect: str, timeout: float, allow_private: bool,
                        resolver: AbstractResolver | None = None) -> dict[str, str] | None:
    """None when the domain serves the token; else ``{problem, message, url}`` (``not_served`` or
    ``wrong_body``). ``resolver`` looks names up (the system's when None); unless private destinations are
    allowed or ``connect`` is set, it is wrapped in :class:`PublicOnlyResolver`."""
    url = verification_url(scheme, host, token)
    target = f"{scheme}://{connect}{VERIFY_PATH.format(token=token)}" if connect else url
    guarded = not connect and not allow_private
    try:
        if guarded:
            check_literal_host(url)
        connector = aiohttp.TCPConnector(resolver=PublicOnlyResolver(resolver) if guarded else resolver)
        async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=timeout),
                                         headers=HEADERS) as session, \
                session.get(target, headers={"Host": host}, allow_redirects=False,
                            server_hostname=host if connect and scheme == "https" else None) as response:
            body = await response.content.read(MAX_BODY + 1)
            status = response.status
    except TimeoutError:
        return _not_served(url, host, f"no answer within {timeout:g} s")
    except RefusedDestination as exc:
        return _not_served(url, host, str(exc))
    except (aiohttp.ClientError, OSError, ValueError) as exc:
        return _not_served(url, host, f"{type(exc).__name__}: {exc}")
    if status != 200:
        return _not_served(url, host, f"status {status}")
    if body.strip() != token.encode():
        log.info("domain verification: %s answered 200 but not the token", url)
        return {"problem": WRONG_BODY, "message": f"{url} answered 200 but its body is not the token", "url": url}
    return None


def _not_served(url: str, host: str, reason: str) -> dict[str, str]:
    """The one answer for every failure to fetch; ``reason`` is logged, never answered."""
    log.info("domain verification: could not fetch %s: %s", url, reason)
    return {"problem": NOT_SERVED, "url": url,
            "message": f"could not fetch {url}: {host} must point at this service, which answers the token there"}
