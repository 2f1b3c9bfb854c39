"""URL rules: link destinations are https; connection endpoints are not loopback or private unless allowed."""

from __future__ import annotations

import pytest

from linksvc.errors import InvalidField
from linksvc.resources.urls import check_destination_url, check_web_url

PRIVATE = [
    "http://127.0.0.1/hook",
    "http://127.0.0.1:9000/x",
    "http://127.255.255.254/",
    "https://localhost/x",
    "http://LOCALHOST:8080/x",
    "http://localhost./x",
    "http://api.localhost/x",
    "http://printer.local/x",
    "http://10.0.0.5/x",
    "http://172.16.3.4/x",
    "http://172.31.255.255/x",
    "http://192.168.1.10/x",
    "http://169.254.169.254/latest/meta-data",
    "http://100.64.0.1/",  # carrier-grade NAT
    "http://0.0.0.0/x",
    "http://[::1]:8080/x",
    "http://[fd00::1]/x",
    "http://[fe80::1]/x",
    "http://[::ffff:127.0.0.1]/x",
    "http://[::ffff:10.0.0.1]/x",
]
PUBLIC = [
    "https://hooks.example.com/in",
    "http://hooks.example.com:8443/in?x=1",
    "https://8.8.8.8/dns",
    "https://[2001:4860:4860::8888]/x",
    "https://172.32.0.1/",  # just outside 172.16.0.0/12
    "https://localhost.example.com/",  # a public name that merely starts with localhost
    "https://local.example/",
]
# Other spellings of a literal IPv4 address: getaddrinfo (and so any HTTP client) reads each as 127.0.0.1 or
# 10.0.0.1, but ipaddress.ip_address does not parse them, so _is_private takes them for host names.
ALTERNATE_LOOPBACK = ["http://127.1/x", "http://2130706433/x", "http://0x7f000001/x", "http://017700000001/x",
                      "http://10.1/x"]


@pytest.mark.parametrize("url", PRIVATE)
def test_private_endpoints_are_refused(url: str) -> None:
    with pytest.raises(InvalidField) as refused:
        check_destination_url(url, "config.endpoint_url", allow_private=False)
    assert refused.value.path == "config.endpoint_url"
    assert "LINKSVC_ALLOW_PRIVATE_DESTINATIONS" in refused.value.message


@pytest.mark.parametrize("url", PRIVATE)
def test_private_endpoints_are_accepted_when_allowed(url: str) -> None:
    check_destination_url(url, "config.endpoint_url", allow_private=True)


@pytest.mark.parametrize("url", PUBLIC)
def test_public_endpoints_are_accepted(url: str) -> None:
    check_destination_url(url, "config.endpoint_url", allow_private=False)


@pytest.mark.parametrize("url", ALTERNATE_LOOPBACK)
def test_other_spellings_of_private_addresses_are_refused(url: str) -> None:
    with pytest.raises(InvalidField):
        check_destination_url(url, "config.endpoint_url", allow_private=False)


@pytest.mark.parametrize(
    "url",
    ["ftp://hooks.example.com/", "hooks.example.com/in", "/relative/path", "https:///no-host", "javascript:alert(1)",
     "mailto:ops@example.com", "", "http://"],
)
def test_endpoints_must_be_http_urls_with_a_host(url: str) -> None:
    for allowed in (False, True):
        with pytest.raises(InvalidField) as refused:
            check_destination_url(url, "config.endpoint_url", allow_private=allowed)
        assert refused.value.path == "config.endpoint_url"


@pytest.mark.parametrize(
    ("url", "https_only", "ok"),
    [
        ("https://shop.example/p?utm_source=x#top", True, True),
        ("http://shop.example/p", True, False),
        ("http://shop.example/p", False, True),
        ("HTTPS://SHOP.EXAMPLE/", True, True),
        ("app://open/product", False, False),
        ("https://", True, False),
    ],
)
def test_web_urls(url: str, https_only: bool, ok: bool) -> None:
    if ok:
        check_web_url(url, "destination_url", https_only=https_only)
    else:
        with pytest.raises(InvalidField) as refused:
            check_web_url(url, "destination_url", https_only=https_only)
        assert refused.value.path == "destination_url"
