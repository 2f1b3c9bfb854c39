"""Who the client is, by address: the TCP peer, or what trusted proxies say in ``X-Forwarded-For``.

Pure functions, no I/O. The rule (:func:`client_address`): when the peer is not a trusted proxy (or none is
configured) the peer is the client, whatever the request's headers say. When it is, ``X-Forwarded-For`` is
walked from the right (the hop the nearest proxy added) to the left, and the first address that is not
itself a trusted proxy is the client: everything to its left was written by that client and may be made up.
An entry reached on the walk that is not an IP address falls back to the peer; garbage beyond the client is
never reached, so a client cannot move its own address by sending some.

:func:`throttle_key` groups IPv6 clients by their /64, the block one host usually holds, so that walking
through the addresses of one block does not make a new client of each.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

UNKNOWN = "unknown"
IPV6_CLIENT_PREFIX = 64


def parse_networks(text: str) -> tuple[IPNetwork, ...]:
    """A comma-separated list of addresses and CIDR networks (``10.0.0.0/8, 2001:db8::1``).

    Raises ValueError naming the entry that is neither."""
    networks = []
    for item in text.split(","):
        entry = item.strip()
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise ValueError(f"{entry!r} is not an IP address or network") from None
    return tuple(networks)


def _address(text: str) -> IPAddress | None:
    try:
        found = ipaddress.ip_address(text.strip())
    except ValueError:
        return None
    # A dual-stack socket reports IPv4 peers as ::ffff:a.b.c.d: the same client as a.b.c.d.
    if isinstance(found, ipaddress.IPv6Address) and found.ipv4_mapped is not None:
        return found.ipv4_mapped
    return found


def _trusted(address: IPAddress, trusted: Sequence[IPNetwork]) -> bool:
    return any(address in network for network in trusted)


def client_address(peer: str | None, forwarded_for: str, trusted: Sequence[IPNetwork]) -> str:
    """The client's address: ``peer`` is the TCP peer, ``forwarded_for`` every ``X-Forwarded-For`` value
    joined by commas ("" when none), ``trusted`` the proxies whose word is taken."""
    peer_address = _address(peer or "")
    if peer_address is None:
        return peer or UNKNOWN  # not an IP peer (a Unix socket): nothing better to go by
    if not forwarded_for.strip() or not _trusted(peer_address, trusted):
        return str(peer_address)
    leftmost = peer_address
    for hop in reversed(forwarded_for.split(",")):
        address = _address(hop)
        if address is None:
            return str(peer_address)
        if not _trusted(address, trusted):
            return str(address)
        leftmost = address
    return str(leftmost)  # every hop is a trusted proxy: the first of them made the request


def throttle_key(address: str) -> str:
    """The key failures are counted under: the IPv4 address, or the /64 network of an IPv6 address."""
    parsed = _address(address)
    if isinstance(parsed, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((int(parsed), IPV6_CLIENT_PREFIX), strict=False))
    return address
