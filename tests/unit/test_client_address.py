"""Who the client is: the peer, or the rightmost untrusted hop of X-Forwarded-For behind trusted proxies."""

from __future__ import annotations

import pytest

from linksvc.client_address import client_address, parse_networks, throttle_key

PROXIES = parse_networks("10.0.0.0/8, 192.168.1.1, 2001:db8:ffff::/48")
MANY_HOPS = ", ".join(f"10.0.{i // 250}.{i % 250 + 1}" for i in range(200))

# (peer, X-Forwarded-For, trusted proxies, client)
TABLE: list[tuple[str | None, str, str, str]] = [
    # No trusted proxy: the header is nobody's word, whoever sends it.
    ("203.0.113.7", "", "", "203.0.113.7"),
    ("203.0.113.7", "198.51.100.1", "", "203.0.113.7"),
    ("10.0.0.2", "198.51.100.1", "", "10.0.0.2"),
    # A peer that is not a trusted proxy: its header is ignored (a client cannot pick its own address).
    ("203.0.113.7", "198.51.100.1", "10.0.0.0/8", "203.0.113.7"),
    ("203.0.113.7", "10.0.0.5", "10.0.0.0/8", "203.0.113.7"),
    # A trusted proxy: the hop it added.
    ("10.0.0.2", "198.51.100.1", "10.0.0.0/8", "198.51.100.1"),
    ("10.0.0.2", " 198.51.100.1 ", "10.0.0.0/8", "198.51.100.1"),
    # A trusted proxy without a header (a health check): the proxy itself.
    ("10.0.0.2", "", "10.0.0.0/8", "10.0.0.2"),
    ("10.0.0.2", "  ", "10.0.0.0/8", "10.0.0.2"),
    # Spoofed leftmost values are never reached: the rightmost untrusted hop is the client.
    ("10.0.0.2", "1.1.1.1, 198.51.100.1", "10.0.0.0/8", "198.51.100.1"),
    ("10.0.0.2", "10.9.9.9, 198.51.100.1", "10.0.0.0/8", "198.51.100.1"),
    ("10.0.0.2", "not-an-ip, <script>, 198.51.100.1", "10.0.0.0/8", "198.51.100.1"),
    # Chains of trusted proxies are walked through.
    ("10.0.0.2", "198.51.100.1, 10.0.0.9, 192.168.1.1", "10.0.0.0/8, 192.168.1.1", "198.51.100.1"),
    ("10.0.0.2", "198.51.100.1, 192.168.1.2", "10.0.0.0/8, 192.168.1.1", "192.168.1.2"),
    ("10.0.0.2", f"198.51.100.9, {MANY_HOPS}", "10.0.0.0/8", "198.51.100.9"),
    # Every hop trusted: the first proxy made the request.
    ("10.0.0.2", "10.0.0.7, 10.0.0.8", "10.0.0.0/8", "10.0.0.7"),
    ("10.0.0.2", MANY_HOPS, "10.0.0.0/8", "10.0.0.1"),
    # Garbage reached on the walk: the peer, never a made-up value.
    ("10.0.0.2", "garbage", "10.0.0.0/8", "10.0.0.2"),
    ("10.0.0.2", "198.51.100.1, garbage", "10.0.0.0/8", "10.0.0.2"),
    ("10.0.0.2", "198.51.100.1,,10.0.0.3", "10.0.0.0/8", "10.0.0.2"),
    ("10.0.0.2", "198.51.100.1:4711", "10.0.0.0/8", "10.0.0.2"),
    ("10.0.0.2", "unknown", "10.0.0.0/8", "10.0.0.2"),
    ("10.0.0.2", "198.51.100.1, 10.0.0.300", "10.0.0.0/8", "10.0.0.2"),
    # IPv6, written any way, comes out in one form; IPv4 peers of a dual-stack socket are IPv4.
    ("2001:db8:ffff::1", "2001:DB8:0:0::0:5", "2001:db8:ffff::/48", "2001:db8::5"),
    ("2001:db8:ffff::1", "2001:db8::5, 2001:db8:ffff::2", "2001:db8:ffff::/48", "2001:db8::5"),
    ("2001:db8:ffff::1", "198.51.100.1", "2001:db8:ffff::/48", "198.51.100.1"),
    ("::ffff:10.0.0.2", "198.51.100.1", "10.0.0.0/8", "198.51.100.1"),
    ("::ffff:203.0.113.7", "", "", "203.0.113.7"),
    ("10.0.0.2", "::ffff:198.51.100.1", "10.0.0.0/8", "198.51.100.1"),
    ("2001:db8::1", "198.51.100.1", "10.0.0.0/8", "2001:db8::1"),
    # A peer that is not an IP address (a Unix socket) stands as it is.
    (None, "198.51.100.1", "10.0.0.0/8", "unknown"),
    ("", "198.51.100.1", "", "unknown"),
]


@pytest.mark.parametrize(("peer", "forwarded", "trusted", "client"), TABLE)
def test_client_address(peer: str | None, forwarded: str, trusted: str, client: str) -> None:
    assert client_address(peer, forwarded, parse_networks(trusted)) == client


@pytest.mark.parametrize(("address", "key"), [
    ("203.0.113.7", "203.0.113.7"),
    ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
    ("2001:db8:1:2:bbbb::9", "2001:db8:1:2::/64"),  # the same block: the same client
    ("2001:db8:1:3::1", "2001:db8:1:3::/64"),
    ("::1", "::/64"),
    ("unknown", "unknown"),
])
def test_ipv6_clients_are_counted_by_their_64(address: str, key: str) -> None:
    assert throttle_key(address) == key


def test_parse_networks() -> None:
    assert [str(n) for n in parse_networks(" 10.0.0.0/8 ,192.168.1.7,, 2001:db8::/32 ")] == [
        "10.0.0.0/8", "192.168.1.7/32", "2001:db8::/32"]
    assert parse_networks("") == ()
    assert [str(n) for n in parse_networks("10.1.2.3/8")] == ["10.0.0.0/8"]  # host bits are tolerated


@pytest.mark.parametrize("text", ["proxy.internal", "10.0.0.0/33", "10.0.0.1-10.0.0.9", "*"])
def test_parse_networks_names_the_bad_entry(text: str) -> None:
    with pytest.raises(ValueError, match=repr(text)):
        parse_networks(f"10.0.0.1, {text}")
