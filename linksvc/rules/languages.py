"""``Accept-Language`` as browsers send it (RFC 9110 12.5.4), and which languages a rule's condition takes.

The client's language is its most preferred one: the tags of the highest quality (``q``, 1 when absent; ties
all count), each with its fallbacks, the tag cut at each ``-`` from the right (``pt-BR`` falls back to ``pt``;
``zh-Hant-TW`` to ``zh-Hant`` and ``zh``). A rule's ``languages`` holds when one of its tags is one of those,
case aside: a rule ``pt`` takes ``pt-BR`` and ``pt-PT``, a rule ``pt-BR`` does not take ``pt-PT``. Languages
the client accepts less (``en;q=0.8`` after ``de-DE``) do not count: a German reader who tolerates English
gets the German rule, or none. ``*``, ``q=0`` and malformed entries are ignored; no header, no language.
"""

from __future__ import annotations

import re
from functools import lru_cache

MAX_EXAMINED = 512  # characters of the header looked at (browsers send well under 100)
_TAG = re.compile(r"[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*")
_Q = re.compile(r"\s*q\s*=\s*([01](\.[0-9]{0,3})?)\s*", re.IGNORECASE)


def preferences(header: str) -> list[tuple[str, float]]:
    """The header's tags (lower case) with their quality, most preferred first (stable for ties), q=0 and
    ``*`` left out."""
    found: list[tuple[str, float]] = []
    for part in header[:MAX_EXAMINED].split(","):
        tag, _, params = part.strip().partition(";")
        tag = tag.strip()
        if not _TAG.fullmatch(tag):
            continue
        quality = 1.0
        if params:
            matched = _Q.fullmatch(params)
            if matched is None:
                continue
            quality = min(float(matched.group(1)), 1.0)
        if quality > 0:
            found.append((tag.lower(), quality))
    found.sort(key=lambda item: -item[1])
    return found


@lru_cache(maxsize=4096)
def client_languages(header: str) -> frozenset[str]:
    """The client's most preferred tags and their fallbacks, lower case (empty: no usable header)."""
    ranked = preferences(header)
    if not ranked:
        return frozenset()
    best = ranked[0][1]
    tags: set[str] = set()
    for tag, quality in ranked:
        if quality < best:
            break
        parts = tag.split("-")
        tags.update("-".join(parts[:end]) for end in range(len(parts), 0, -1))
    return frozenset(tags)
