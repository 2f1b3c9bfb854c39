"""Rules for URLs that the service will redirect to or send data to (which addresses count as public is
:mod:`linksvc.netguard`'s)."""

from __future__ import annotations

import re

from yarl import URL

from linksvc.errors import InvalidField
from linksvc.netguard import address_literal, is_public_address

# A DNS name (IDNs arrive punycode-encoded from yarl's raw_host) or an address literal.
_HOSTNAME = re.compile(r"^(?=.{1,253}\.?$)([A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.)*"
                       r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.?$")


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


def _is_private(host: str) -> bool:
    address = address_literal(host)
    if address is None:
        lowered = host.lower().rstrip(".")
        return lowered == "localhost" or lowered.endswith(".localhost") or lowered.endswith(".local")
    return not is_public_address(address)


def check_destination_url(value: str, path: str, allow_private: bool) -> None:
    """Endpoint URLs of connections: http(s), and not loopback or private unless allowed.

    Literal addresses and local names are checked here without any DNS lookup; the sender checks the
    addresses it resolves again at delivery time (:mod:`linksvc.netguard`), since a name can be
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

