"""Rules for URLs that the service will redirect to or send data to."""

from __future__ import annotations

import ipaddress
import re
import socket

from yarl import URL

from linksvc.errors import InvalidField

# A DNS name (IDNs arrive punycode-encoded from yarl's raw_host) or an address literal.
_HOSTNAME = re.compile(r"^(?=.{1,253}\.?$)([A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.)*"
                       r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.?$")


def check_web_url(value: str, path: str, https_only: bool = False) -> None:
    try:
        url = URL(value)
        host = url.raw_host
    except (ValueError, TypeError, UnicodeError):
        raise InvalidField(path, "must be an absolute URL") from None
    allowed = {"https"} if https_only else {"http", "https"}
    if url.scheme not in allowed or not host:
        need = "an https URL" if https_only else "an http or https URL"
        raise InvalidField(path, f"must be {need} with a host")
    if _address(host) is None and not _HOSTNAME.match(host):
        raise InvalidField(path, f"has an invalid host {host!r}")


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
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


def _is_private(host: str) -> bool:
    address = _address(host)
    if address is None:
        lowered = host.lower().rstrip(".")
        return lowered == "localhost" or lowered.endswith(".localhost") or lowered.endswith(".local")
    return not address.is_global


def check_destination_url(value: str, path: str, allow_private: bool) -> None:
    """Endpoint URLs of connections: http(s), and not loopback or private unless allowed.

    Literal addresses and local names are checked here without any DNS lookup; the sender checks the
    resolved address again at delivery time.
    """
    check_web_url(value, path)
    host = URL(value).host or ""
    if not allow_private and _is_private(host):
        raise InvalidField(
            path,
            "points at a loopback or private address; set LINKSVC_ALLOW_PRIVATE_DESTINATIONS=1 to allow it",
        )

