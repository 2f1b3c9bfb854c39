"""Refusing deliveries to addresses that are not public (SSRF, DNS rebinding), in the dispatcher's HTTP client.

The check at save time (:func:`linksvc.resources.urls.check_destination_url`) sees only the endpoint's name, and
a name can be pointed at 127.0.0.1, 10.x or 169.254.169.254 after it is saved, even between two lookups. So the
check is made on the addresses the client actually connects to:

- names: the connector's resolver is a :class:`PublicOnlyResolver`, which fails a lookup whose answers include
  an address that is not public. The connector connects only to addresses its resolver returned (and caches
  for a few seconds), so there is no second lookup between the check and the connect.
- address literals: aiohttp connects to them without asking the resolver, so :func:`check_literal_host` is
  called on the URL before the request.

:class:`RefusedDestination` is deliberately not an ``OSError``: aiohttp passes it through unwrapped, and the
dispatcher tells it from a network failure (a refusal lasts until the connection or the setting changes).

Sound only without a proxy (the session keeps ``trust_env`` off): through a proxy the resolver would check the
proxy's address, and the proxy would resolve the destination itself.
"""

from __future__ import annotations

import ipaddress
import socket

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver
from yarl import URL

from linksvc.resources.urls import address_literal, is_public_address


class RefusedDestination(Exception):
    """The destination's address is not public and private destinations are not allowed."""

    def __init__(self, host: str, address: str) -> None:
        subject = address if host.strip("[]") == address else f"{host} resolves to {address}, which"
        super().__init__(f"refused: {subject} is not a public address; "
                         "set LINKSVC_ALLOW_PRIVATE_DESTINATIONS=1 to allow deliveries to it")


def _is_public(address: str) -> bool:
    try:
        return is_public_address(ipaddress.ip_address(address))
    except ValueError:  # nothing to judge by: refused
        return False


def check_literal_host(url: str) -> None:
    """Raises :class:`RefusedDestination` when the URL's host is an address literal that is not public; a name
    is left to the resolver."""
    host = URL(url).raw_host or ""
    address = address_literal(host)
    if address is not None and not is_public_address(address):
        raise RefusedDestination(host, str(address))


class PublicOnlyResolver(AbstractResolver):
    """Resolves with ``resolver`` (aiohttp's default when None) and refuses names with a non-public address.

    All answers must be public: one private answer among public ones is how a rebinding name gets a client to
    try the private one when the public ones fail.
    """

    def __init__(self, resolver: AbstractResolver | None = None) -> None:
        self._resolver = resolver if resolver is not None else DefaultResolver()

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        answers = await self._resolver.resolve(host, port, family)
        for answer in answers:
            if not _is_public(answer["host"]):
                raise RefusedDestination(host, answer["host"])
        return answers

    async def close(self) -> None:
        await self._resolver.close()
