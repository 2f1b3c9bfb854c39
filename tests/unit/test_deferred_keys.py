"""What a deferred-link claim names: the tracking_id in an install referrer or a pasteboard token."""

from __future__ import annotations

from urllib.parse import unquote

import pytest

from linksvc.errors import InvalidField
from linksvc.links.appstores import play_store_url, read_install_referrer
from linksvc.links.deferred import key_of_referrer, key_of_token, pasteboard_token


@pytest.mark.parametrize(("referrer", "tracking_id", "utm"), [
    ("utm_source=ig&tracking_id=abc&link=https%3A%2F%2Fs.example%2Fx", "abc", {"utm_source": "ig"}),
    ("tracking_id=abc", "abc", {}),
    ("gclid=1&utm_content=summer%20sale&tracking_id=abc&utm_id=9", "abc", {"utm_content": "summer sale"}),
    ("?tracking_id=abc&utm_medium=", "abc", {}),
])
def test_referrers(referrer: str, tracking_id: str, utm: dict[str, str]) -> None:
    key = key_of_referrer(referrer)
    assert (key.tracking_id, key.utm) == (tracking_id, utm)


@pytest.mark.parametrize("referrer", ["", "utm_source=ig", "tracking_id=", "tracking_id=%20&x=1"])
def test_referrers_without_a_tracking_id(referrer: str) -> None:
    with pytest.raises(InvalidField) as refused:
        key_of_referrer(referrer)
    assert refused.value.path == "install_referrer"


def test_the_referrer_the_resolver_writes_is_read_back() -> None:
    """What the app gets from Play (the parameter decoded once) names the click."""
    url = play_store_url("com.example.app", {"utm_source": "a&b=c", "tracking_id": "t1", "link": "https://s.example/x"})
    fields = read_install_referrer(url)
    raw = "&".join(part for part in url.split("?", 1)[1].split("&") if part.startswith("referrer="))
    key = key_of_referrer(unquote(raw.removeprefix("referrer=")))
    assert (key.tracking_id, key.utm) == (fields["tracking_id"], {"utm_source": "a&b=c"})


def test_tokens() -> None:
    assert key_of_token(pasteboard_token("abc")).tracking_id == "abc"
    assert key_of_token(" linksvc:deferred:abc\n").tracking_id == "abc"


@pytest.mark.parametrize("token", ["abc", "linksvc:deferred:", "linksvc:deferred: ", "LINKSVC:DEFERRED:abc",
                                   "linksvc:deferred:" + "a" * 201, "linksvc:deferred:a\x00b"])
def test_refused_tokens(token: str) -> None:
    with pytest.raises(InvalidField) as refused:
        key_of_token(token)
    assert refused.value.path == "token"
