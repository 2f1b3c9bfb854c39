"""Rules for URLs that the service will redirect to or send data to, and which addresses count as public."""

from __future__ import annotations

import ipaddress
import re
import socket

from yarl import URL

from linksvc.errors import InvalidField

# A DNS name (IDNs arrive punycode-encoded from yarl's raw_host) or an address literal.
_HOSTNAME = re.compile(r"^(?=.{1,253}\.?$)([A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.)*"
                       r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.?$")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# IPv6 prefixes whose last 32 bits are an IPv4 address the packets are delivered to (NAT64, IPv4-compatible).
_IPV4_IN_LOW_BITS = (ipaddress.IPv6Network("64:ff9b::/96"), ipaddress.IPv6Network("::/96"))
_NAT64_LOCAL_USE = ipaddress.IPv6Network("64:ff9b:1::/48")  # translated to networks of the operator's choosing


def check_web_url(value: str, path: str, https_only: bool = False) -> None:
    try:
        url = URL(value)
        host = url.raw_host
    except (ValueError, TypeError, UnicodeError):
        raise InvalidField(path, "must be an absolute URL", rule="url") from None
    allowed = {"https"} if https_only else {"http", "https"}
    if url.scheme not in allowed or not host:
        need = "an https URL" if https_only else "an http or https URL"
        raise InvalidField(path, f"must be {need} with a host", rule="url")
    # The name's pattern first: it is the common case, and address_literal's failures raise (costly in bulk).
    if not _HOSTNAME.match(host) and address_literal(host) is None:
        raise InvalidField(path, f"has an invalid host {host!r}", rule="url")


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


def _is_private(host: str) -> bool:
    address = address_literal(host)
    if address is None:
        lowered = host.lower().rstrip(".")
        return lowered == "localhost" or lowered.endswith(".localhost") or lowered.endswith(".local")
    return not is_public_address(address)


def check_destination_url(value: str, path: str, allow_private: bool) -> None:
    """Endpoint URLs of connections: http(s), and not loopback or private unless allowed.

    Literal addresses and local names are checked here without any DNS lookup; the sender checks the
    addresses it resolves again at delivery time (:mod:`linksvc.forwarding.guard`), since a name can be
    pointed anywhere after it is saved.
    """
    check_web_url(value, path)
    host = URL(value).host or ""
    if not allow_private and _is_private(host):
        raise InvalidField(
            path,
            "points at a loopback or private address; set LINKSVC_ALLOW_PRIVATE_DESTINATIONS=1 to allow it",
            rule="url",
        )

