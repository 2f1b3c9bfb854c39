"""Which addresses are public, which hosts are address literals, and the guard that keeps the service's outgoing
requests (forwarding deliveries, a custom domain's verification fetch) off addresses that are not public (SSRF,
DNS rebinding). Shared by :mod:`linksvc.forwarding` and :mod:`linksvc.domains`; it imports neither.

A check on a name before the request sees only the name, and a name can be pointed at 127.0.0.1, 10.x or
169.254.169.254 at any time, even between two lookups. So the check is made on the addresses the client
actually connects to:

- names: the connector's resolver is a :class:`PublicOnlyResolver`, which fails a lookup whose answers include
  an address that is not public. The connector connects only to addresses its resolver returned (and caches
  for a few seconds), so there is no second lookup between the check and the connect.
- address literals: aiohttp connects to them without asking the resolver, so :func:`check_literal_host` is
  called on the URL before the request.

:class:`RefusedDestination` is deliberately not an ``OSError``: aiohttp passes it through unwrapped, and the
dispatcher tells it from a network failure (a refusal lasts until the connection or the setting changes).

Sound only without a proxy (the sessions keep ``trust_env`` off): through a proxy the resolver would check the
proxy's address, and the proxy would resolve the destination itself.
"""

from __future__ import annotations

import ipaddress
import re
import socket

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver
from yarl import URL

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# IPv6 prefixes whose last 32 bits are an IPv4 address the packets are delivered to (NAT64, IPv4-compatible).
_IPV4_IN_LOW_BITS = (ipaddress.IPv6Network("64:ff9b::/96"), ipaddress.IPv6Network("::/96"))
_NAT64_LOCAL_USE = ipaddress.IPv6Network("64:ff9b:1::/48")  # translated to networks of the operator's choosing


def address_literal(host: str) -> IPAddress | None:
    """The address a host literal stands for, in every spelling a resolver accepts (127.1, 2130706433,
    0x7f000001, 017700000001 are all 127.0.0.1); None for a name."""
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        pass
    try:
        return ipaddress.ip_address(socket.inet_ntoa(socket.inet_aton(host)))
    except (OSError, ValueError):
        return None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries, where the packets end up there: mapped (::ffff:a.b.c.d, which a
    dual-stack socket sends as IPv4), 6to4, NAT64's well-known prefix and the old IPv4-compatible form."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if any(address in prefix for prefix in _IPV4_IN_LOW_BITS):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def is_public_address(address: IPAddress) -> bool:
    """Whether data sent to ``address`` goes to the public internet: not loopback, private, link-local (cloud
    metadata at 169.254.169.254), shared, reserved or multicast, also when written as IPv6."""
    if isinstance(address, ipaddress.IPv6Address):
        if address in _NAT64_LOCAL_USE:
            return False
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            address = embedded
    return address.is_global and not address.is_multicast


# The WHATWG URL standard's "ends in a number": a last label of digits or 0x-hex makes a browser parse the whole
# host as IPv4 (127.0.0.0x1 is 127.0.0.1; example.0x1 is no valid host at all).
_NUMERIC_LABEL = re.compile(r"^(?:[0-9]+|0x[0-9a-f]*)$", re.IGNORECASE)


def is_ip_literal(host: str) -> bool:
    """Whether something would take ``host`` for an IP address rather than a DNS name: Python's
    :mod:`ipaddress` (IPv4, IPv6 bare or in brackets, IPv4-mapped, with a zone), the C library's ``inet_aton``
    (octal, hex, mixed, shortened 127.1, the integer 2130706433), or a browser's URL parser (any host whose last
    label, trailing dots aside, is a decimal or 0x-hex number)."""
    if address_literal(host) is not None:
        return True
    last = host.rstrip(".").rsplit(".", 1)[-1]
    return bool(_NUMERIC_LABEL.match(last))


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
