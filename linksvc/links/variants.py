"""The A/B split of a link (issue 34; docs/decisions.md, "A/B split (issue 34)"): which variant a click goes to.

Pure functions, no I/O, for the resolver's handler and its fast lane alike. A link's ``variants`` are
``[{"name", "weight", "target"?}]``; the first is the control. A visitor is kept on one variant:

- **the cookie** :func:`cookie_name` (``lsv_`` and the link's id), set on the link's own host by every answer
  of a link with variants, for :data:`COOKIE_DAYS` days, ``Path=/CODE`` (sent back for that link only),
  ``HttpOnly``, ``SameSite=Lax`` and ``Secure`` when the request came over HTTPS (:func:`is_https`). Its value
  is the variant's name, percent-encoded. A cookie naming a variant that is gone or weighs 0 is ignored.
- **without it** (the first click, or a client that keeps no cookies): a stable hash, :func:`stable_fraction`,
  sha256 of the link's id, the client's address and user agent, read as a number in [0, 1) and placed on the
  weights' cumulative shares. The same person on the same address and browser gets the same variant on every
  click; the hash is never stored (the click's ``visitor`` is the daily salted one of
  :mod:`linksvc.links.visitors`).

A variant's target replaces the link's own URL fields (``destination_url``, ``deeplink``, ``android``, ``ios``,
``fallback_url``) for :func:`linksvc.links.decide.decide`, so the UTM, ``tracking_id``, install referrer and
intent rules hold on it exactly as on the link's own. A target ``{"link": CODE}`` takes that link's URL
fields (one hop: not its variants).
"""

from __future__ import annotations

import hashlib
import ipaddress
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote, unquote

COOKIE_PREFIX = "lsv_"
COOKIE_DAYS = 90
COOKIE_SECONDS = COOKIE_DAYS * 86400
URL_FIELDS = ("destination_url", "deeplink", "android", "ios", "fallback_url")
_SCALE = float(1 << 64)


def cookie_name(link_id: str) -> str:
    """The link's variant cookie: ``lsv_`` and its id (letters, digits and ``-``: a cookie name token)."""
    return COOKIE_PREFIX + link_id


def cookie_value(header: str, name: str) -> str | None:
    """The value of cookie ``name`` in a ``Cookie`` header (``a=1; b=2``), None when absent."""
    if not header or name not in header:
        return None
    for part in header.split(";"):
        key, sep, value = part.strip().partition("=")
        if sep and key == name:
            return value.strip().strip('"')
    return None


def set_cookie(link_id: str, code: str, variant: str, secure: bool) -> str:
    """The ``Set-Cookie`` value that keeps the visitor on ``variant`` of the link published at ``code``."""
    return (f"{cookie_name(link_id)}={quote(variant, safe='')}; Max-Age={COOKIE_SECONDS}; Path=/{code}; "
            f"HttpOnly; SameSite=Lax{'; Secure' if secure else ''}")


def stable_fraction(link_id: str, address: str, user_agent: str) -> float:
    """A number in [0, 1) that depends only on the link, the client's address and its user agent."""
    digest = hashlib.sha256(f"{link_id}\x00{address}\x00{user_agent}".encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") / _SCALE


def by_weight(variants: Sequence[Mapping[str, Any]], fraction: float) -> int:
    """The index of the variant whose cumulative share of the weights holds ``fraction`` (in [0, 1)); a
    variant of weight 0 is never picked."""
    total = sum(int(v.get("weight") or 0) for v in variants)
    point = fraction * total
    running = 0
    last = 0
    for index, variant in enumerate(variants):
        weight = int(variant.get("weight") or 0)
        if weight <= 0:
            continue
        running += weight
        last = index
        if point < running:
            return index
    return last


def named(variants: Sequence[Mapping[str, Any]], cookie: str | None) -> int | None:
    """The index of the variant the cookie names, when it still exists and weighs more than 0; else None."""
    if cookie:
        name = unquote(cookie)
        for index, variant in enumerate(variants):
            if variant.get("name") == name and int(variant.get("weight") or 0) > 0:
                return index
    return None


def pick(variants: Sequence[Mapping[str, Any]], cookie: str | None, fraction: float) -> int:
    """The variant a click goes to: the one its cookie names (:func:`named`), else the one :func:`by_weight`
    places ``fraction`` on."""
    found = named(variants, cookie)
    return by_weight(variants, fraction) if found is None else found


def with_target(link: Mapping[str, Any], target: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The link as :func:`~linksvc.links.decide.decide` reads it for a variant whose target (already resolved:
    URL fields, not ``{"link"}``) is ``target``; the link itself for a variant without one."""
    if not target:
        return link
    return {**link, **{field: target.get(field) for field in URL_FIELDS}}


def is_https(peer: str | None, forwarded_proto: str, trusted: Sequence[Any], tls: bool = False) -> bool:
    """Whether the click came over HTTPS: the connection itself (``tls``), or a trusted proxy
    (``LINKSVC_TRUSTED_PROXIES``) says so in ``X-Forwarded-Proto`` (the service is usually behind one)."""
    if tls:
        return True
    if not forwarded_proto or not trusted or not peer:
        return False
    try:
        address = ipaddress.ip_address(peer)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if not any(address in network for network in trusted):
        return False
    return forwarded_proto.split(",")[0].strip().lower() == "https"
