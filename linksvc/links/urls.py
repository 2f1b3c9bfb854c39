"""Editing a URL's query without disturbing it: other parameters keep their text and order, and the
fragment stays. Used for UTM at click time and for editing a stored link's UTM."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from urllib.parse import quote, unquote_plus

_UNRESERVED_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_UNRESERVED = re.compile(r"[A-Za-z0-9._~-]*")
_RESERVED = re.compile(r"[^A-Za-z0-9._~-]")
_ESCAPES = {chr(code): f"%{code:02X}" for code in range(128) if chr(code) not in _UNRESERVED_CHARS}


def _escape(match: re.Match[str]) -> str:
    return _ESCAPES[match.group()]


def encode_component(value: str) -> str:
    """Percent-encode everything but unreserved characters (RFC 3986): ``+``, ``&``, ``=``, ``%``, spaces
    and non-ASCII all become escapes, so any decoder (``+`` as space or not) reads the same value.

    On the redirect path: a value that needs no escape (a key, a tracking id, most UTM values) is returned
    as it is, and an ASCII value has only its reserved characters replaced, by one ``re.sub`` (a URL inside a
    parameter, as an intent's fallback or Play's referrer, costs half the instructions of a ``str.translate``
    with an expanding table, which looks every character up, and a third of ``quote``'s). Non-ASCII text goes
    through ``quote`` (UTF-8 bytes escaped)."""
    if _UNRESERVED.fullmatch(value):
        return value
    if value.isascii():
        return _RESERVED.sub(_escape, value)
    return quote(value, safe="-._~")


def _decode(text: str) -> str:
    return unquote_plus(text) if "%" in text or "+" in text else text


def split_url(url: str) -> tuple[str, str, str]:
    """(everything before the query, the query, the fragment), as ``urlsplit`` would cut a stored URL,
    without its scheme and netloc checks: the redirect path splits several URLs per click."""
    rest, _, fragment = url.partition("#")
    base, _, query = rest.partition("?")
    return base, query, fragment


def join_url(base: str, query: str, fragment: str) -> str:
    """The reverse of :func:`split_url`; an empty query or fragment leaves no ``?`` or ``#`` (as ``urlunsplit``)."""
    if query:
        base = f"{base}?{query}"
    return f"{base}#{fragment}" if fragment else base


def query_values(url: str) -> dict[str, str]:
    """The first value of each query parameter, decoded."""
    found: dict[str, str] = {}
    query = split_url(url)[1]
    if not query:
        return found
    for segment in query.split("&"):
        if segment:
            key, _, value = segment.partition("=")
            key = _decode(key)
            if key not in found:
                found[key] = _decode(value)
    return found


def with_query(url: str, updates: Mapping[str, str], remove: Iterable[str] = ()) -> str:
    """``url`` with each key of ``updates`` set (in place where present, else appended in the order
    given) and each key of ``remove`` dropped. Every other segment keeps its exact text and place."""
    base, query, fragment = split_url(url)
    dropped = set(remove).difference(updates) if remove else ()
    pending = dict(updates)
    segments: list[str] = []
    if query:
        for segment in query.split("&"):
            key = _decode(segment.partition("=")[0])
            if key in dropped:
                continue
            if key in updates:
                if key in pending:  # first occurrence takes the new value; later duplicates go
                    segments.append(f"{encode_component(key)}={encode_component(pending.pop(key))}")
                continue
            segments.append(segment)
    for key, value in pending.items():
        segments.append(f"{encode_component(key)}={encode_component(value)}")
    return join_url(base, "&".join(segments), fragment)
