"""The lifecycle's decision (:func:`linksvc.links.decide.unavailable`) and the password cookie, table-driven."""

from __future__ import annotations

from typing import Any

import pytest

from linksvc.clock import parse_iso
from linksvc.links.decide import unavailable
from linksvc.links.passwords import cookie_admits, cookie_value

NOW = parse_iso("2030-06-01T12:00:00Z").timestamp()
BEFORE, AFTER = "2030-06-01T11:59:59Z", "2030-06-01T12:00:01Z"
OVER, SOON = "https://shop.example/over", "https://shop.example/soon"


@pytest.mark.parametrize(("link", "clicks", "expected"), [
    ({}, None, None),
    ({}, 10**6, None),
    ({"disabled": True, "expired_url": OVER, "expires_at": BEFORE}, None, ("disabled", 410, None)),
    ({"valid_since": AFTER}, None, ("not yet valid", 404, None)),
    ({"valid_since": AFTER, "pending_url": SOON}, None, ("not yet valid", 302, SOON)),
    ({"valid_since": "2030-06-01T12:00:00Z"}, None, None),  # open from that instant
    ({"valid_since": BEFORE, "pending_url": SOON}, None, None),
    ({"expires_at": "2030-06-01T12:00:00Z"}, None, ("expired", 410, None)),  # closed from that instant
    ({"expires_at": AFTER, "expired_url": OVER}, None, None),
    ({"expires_at": BEFORE, "expired_url": OVER}, None, ("expired", 302, OVER)),
    ({"valid_since": AFTER, "expires_at": BEFORE, "pending_url": SOON}, None, ("not yet valid", 302, SOON)),
    ({"max_clicks": 3}, None, None),  # not known: not checked
    ({"max_clicks": 3}, 2, None),
    ({"max_clicks": 3}, 3, ("click limit reached", 410, None)),
    ({"max_clicks": 3, "expired_url": OVER}, 4, ("click limit reached", 302, OVER)),
    ({"max_clicks": 3, "expires_at": BEFORE}, 5, ("expired", 410, None)),
    ({"max_clicks": 3, "valid_since": AFTER, "pending_url": SOON}, 5, ("not yet valid", 302, SOON)),
])
def test_unavailable(link: dict[str, Any], clicks: int | None, expected: tuple[str, int, str | None] | None) -> None:
    state = unavailable(link, NOW, clicks)
    assert (None if state is None else (state.reason, state.status, state.location)) == expected


HASH = "$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g"
GOOD = cookie_value(HASH, "link-1", int(NOW) + 60)


@pytest.mark.parametrize(("value", "stored_hash", "link_id", "admitted"), [
    (GOOD, HASH, "link-1", True),
    (GOOD, HASH, "link-2", False),  # another link's cookie
    (GOOD, HASH.replace("aGFz", "bGFz"), "link-1", False),  # given for another password
    (cookie_value(HASH, "link-1", int(NOW) - 1), HASH, "link-1", False),  # lapsed
    (f"{int(NOW) + 999}.{GOOD.split('.')[1]}", HASH, "link-1", False),  # its time moved
    ("", HASH, "link-1", False),
    (None, HASH, "link-1", False),
    ("not-a-cookie", HASH, "link-1", False),
    ("x.y", HASH, "link-1", False),
])
def test_cookie_admits(value: str | None, stored_hash: str, link_id: str, admitted: bool) -> None:
    assert cookie_admits(value, stored_hash, link_id, NOW) is admitted
