"""Editing a URL's query without disturbing it: other parameters keep their text and order, and the
fragment stays. Used for UTM at click time and for editing a stored link's UTM."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from urllib.parse import quote, unquote_plus, urlsplit, urlunsplit


def encode_component(value: str) -> str:
    """Percent-encode everything but unreserved characters (RFC 3986): ``+``, ``&``, ``=``, ``%``, spaces
    and non-ASCII all become escapes, so any decoder (``+`` as space or not) reads the same value."""
    return quote(value, safe="-._~")


def _key(segment: str) -> str:
    return unquote_plus(segment.split("=", 1)[0])


def query_values(url: str) -> dict[str, str]:
    """The first value of each query parameter, decoded."""
    found: dict[str, str] = {}
    for segment in urlsplit(url).query.split("&"):
        if segment:
            key, _, value = segment.partition("=")
            found.setdefault(unquote_plus(key), unquote_plus(value))
    return found


def with_query(url: str, updates: Mapping[str, str], remove: Iterable[str] = ()) -> str:
    """``url`` with each key of ``updates`` set (in place where present, else appended in the order
    given) and each key of ``remove`` dropped. Every other segment keeps its exact text and place."""
    parts = urlsplit(url)
    dropped = set(remove) - set(updates)
    pending = dict(updates)
    segments: list[str] = []
    for segment in parts.query.split("&") if parts.query else []:
        key = _key(segment)
        if key in dropped:
            continue
        if key in updates:
            if key in pending:  # first occurrence takes the new value; later duplicates go
                segments.append(f"{encode_component(key)}={encode_component(pending.pop(key))}")
            continue
        segments.append(segment)
    segments += [f"{encode_component(k)}={encode_component(v)}" for k, v in pending.items()]
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "&".join(segments), parts.fragment))
