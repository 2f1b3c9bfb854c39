"""Which addresses deliveries may go to when private destinations are not allowed: only public ones, also when
an IPv4 address is written inside an IPv6 one; and which URL hosts are literals the sender checks itself."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from linksvc.netguard import RefusedDestination, check_literal_host, is_public_address

NOT_PUBLIC = [
    "127.0.0.1", "127.8.9.10", "10.0.0.1", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1",
    "0.0.0.0", "255.255.255.255", "192.0.2.1", "198.18.0.1", "240.0.0.1", "224.0.0.1",
    "::", "::1", "fe80::1", "fe80::1%eth0", "fd00::1", "fc00::1", "2001:db8::1", "ff02::1", "ff0e::1",
    "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254",  # IPv4-mapped: sent as IPv4
    "::127.0.0.1",  # IPv4-compatible (deprecated)
    "2002:7f00:1::", "2002:a00:1::1",  # 6to4 of 127.0.0.1 and 10.0.0.1
    "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe",  # NAT64 of 127.0.0.1 and 169.254.169.254
    "64:ff9b:1::808:808",  # NAT64 for local use: translated to wherever the operator chose
]
PUBLIC = [
    "8.8.8.8", "93.184.215.14", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "2001:4860:4860::8888",
    "::ffff:8.8.8.8", "2002:808:808::", "64:ff9b::808:808",
]


@pytest.mark.parametrize("address", NOT_PUBLIC)
def test_not_public(address: str) -> None:
    assert not is_public_address(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", PUBLIC)
def test_public(address: str) -> None:
    assert is_public_address(ipaddress.ip_address(address))


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_an_ipv4_address_counts_the_same_when_mapped_into_ipv6(value: int) -> None:
    v4 = ipaddress.IPv4Address(value)
    mapped = ipaddress.IPv6Address(f"::ffff:{v4}")
    nat64 = ipaddress.IPv6Address(f"64:ff9b::{v4}")
    assert is_public_address(mapped) == is_public_address(nat64) == is_public_address(v4)


@pytest.mark.parametrize(("url", "said"), [
    ("http://127.0.0.1:8080/in", "127.0.0.1"),
    ("http://[::1]/in", "::1"),
    ("http://[::ffff:7f00:1]/in", "::ffff:7f00:1"),
    ("http://169.254.169.254/latest/meta-data", "169.254.169.254"),
    # Spellings a resolver reads as an address.
    ("http://127.1/in", "127.1 resolves to 127.0.0.1, which"),
    ("http://2130706433/in", "2130706433 resolves to 127.0.0.1, which"),
    ("http://0x7f000001/in", "0x7f000001 resolves to 127.0.0.1, which"),
])
def test_a_private_address_literal_is_refused(url: str, said: str) -> None:
    with pytest.raises(RefusedDestination) as refused:
        check_literal_host(url)
    assert str(refused.value).startswith(f"refused: {said} is not a public address")
    assert "LINKSVC_ALLOW_PRIVATE_DESTINATIONS" in str(refused.value)


@pytest.mark.parametrize("url", ["https://8.8.8.8/in", "https://[2606:4700:4700::1111]/in",
                                 "https://hooks.example.com/in", "http://localhost/in"])
def test_public_literals_and_names_are_left_alone(url: str) -> None:
    check_literal_host(url)  # names are the resolver's to check, once resolved


def test_a_refused_name_says_what_it_resolved_to() -> None:
    assert str(RefusedDestination("shop.example", "10.0.0.7")).startswith(
        "refused: shop.example resolves to 10.0.0.7, which is not a public address")
