"""A custom domain's host is a DNS name: every spelling of an IP address is refused, as Python, the C library's
``inet_aton`` (which ``getaddrinfo`` uses) or a browser's URL parser would read it; so are names kept for local
networks. Names that only look numeric stay accepted."""

from __future__ import annotations

import socket

import pytest

from linksvc.domains.hosts import SharedHosts
from linksvc.domains.service import check_host
from linksvc.errors import InvalidField
from linksvc.netguard import is_ip_literal

NO_SHARED = SharedHosts(frozenset())

# (host, what it is): each one an address to getaddrinfo, a browser, or both.
IP_LITERALS = [
    ("127.0.0.1", "dotted decimal"),
    ("127.1", "shortened: 127.0.0.1"),
    ("127.0.1", "shortened: 127.0.0.1"),
    ("2130706433", "one integer: 127.0.0.1"),
    ("0x7f000001", "one hex integer: 127.0.0.1"),
    ("017700000001", "one octal integer: 127.0.0.1"),
    ("0177.0.0.1", "octal first part: 127.0.0.1"),
    ("0x7f.0x1", "hex, shortened: 127.0.0.1"),
    ("0X7F.0X1", "hex in capitals: 127.0.0.1"),
    ("127.0.0.0x1", "mixed, hex last part: 127.0.0.1"),
    ("0x7f.0.0.01", "mixed hex and octal: 127.0.0.1"),
    ("169.254.169.254", "cloud metadata, dotted decimal"),
    ("0xa9.0xfea9fe", "cloud metadata, hex, shortened"),
    ("0xa9fea9fe", "cloud metadata, one hex integer"),
    ("0251.0376.0251.0376", "cloud metadata, octal"),
    ("2852039166", "cloud metadata, one integer"),
    ("0300.0250.0.1", "192.168.0.1 in octal"),
    ("10.0.0.1.", "trailing dot"),
    ("127.0.0.1..", "trailing dots"),
    ("[::1]", "IPv6 loopback in brackets"),
    ("::1", "IPv6 loopback"),
    ("[::ffff:127.0.0.1]", "IPv4-mapped IPv6"),
    ("::ffff:a9fe:a9fe", "IPv4-mapped, in hex: 169.254.169.254"),
    ("[64:ff9b::7f00:1]", "NAT64 of 127.0.0.1"),
    ("[fe80::1%25eth0]", "link-local with a zone"),
    ("0x", "a browser's zero"),
    ("links.example.0x1", "last label a hex number: a browser's IPv4 (an invalid one)"),
    ("links.example.123", "last label a number: a browser's IPv4 (an invalid one)"),
    ("1.2.3.4.5", "five parts: a browser's IPv4 (an invalid one)"),
    ("%31%32%37.0.0.1", "percent-encoded 127.0.0.1 (a browser decodes it)"),
]
LOCAL_NAMES = ["metadata.google.internal", "printer.local", "app.localhost", "nas.home.arpa", "x.invalid",
               "abc.onion"]
DNS_NAMES = ["links.example.com", "1.example.com", "0x7f.example.com", "127-0-0-1.example.com", "a.0xg",
             "go.123abc", "xn--mnchen-3ya.example"]


@pytest.mark.parametrize(("host", "what"), IP_LITERALS)
def test_every_notation_of_an_ip_address_is_refused(host: str, what: str) -> None:
    assert is_ip_literal(host), what
    with pytest.raises(InvalidField) as refused:
        check_host(host, NO_SHARED)
    assert refused.value.path == "host"
    assert "not an IP address" in refused.value.details["message"], what


def test_the_table_holds_what_the_c_library_takes_for_an_address() -> None:
    """Not a list of guesses: getaddrinfo, without any DNS, turns these into addresses."""
    for host in ("127.1", "2130706433", "0x7f.0x1", "127.0.0.0x1", "0xa9.0xfea9fe", "0251.0376.0251.0376"):
        [*_, (_, _, _, _, sockaddr)] = socket.getaddrinfo(host, 80, socket.AF_INET, socket.SOCK_STREAM,
                                                           flags=socket.AI_NUMERICHOST)
        assert sockaddr[0] in ("127.0.0.1", "169.254.169.254"), host


@pytest.mark.parametrize("host", LOCAL_NAMES)
def test_a_name_for_local_networks_is_refused(host: str) -> None:
    with pytest.raises(InvalidField) as refused:
        check_host(host, NO_SHARED)
    assert refused.value.path == "host"
    assert refused.value.details["issues"][0]["type"] == "reserved"


@pytest.mark.parametrize("host", DNS_NAMES)
def test_names_that_only_look_numeric_are_accepted(host: str) -> None:
    assert not is_ip_literal(host)
    assert check_host(host.upper() + ".", NO_SHARED) == host
