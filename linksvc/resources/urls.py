"""Rules for URLs that the service will redirect to or send data to."""

from __future__ import annotations

import ipaddress

from yarl import URL

from linksvc.errors import InvalidField


def check_web_url(value: str, path: str, https_only: bool = False) -> None:
    try:
        url = URL(value)
    except (ValueError, TypeError):
        raise InvalidField(path, "must be an absolute URL") from None
    allowed = {"https"} if https_only else {"http", "https"}
    if url.scheme not in allowed or not url.host:
        need = "an https URL" if https_only else "an http or https URL"
        raise InvalidField(path, f"must be {need} with a host")


def _is_private(host: str) -> bool:
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
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

