"""``Accept-Language`` as browsers send it (RFC 9110 12.5.4), and which languages a rule's condition takes.

Each of the client's tags comes with its fallbacks, the tag cut at each ``-`` from the right (``pt-BR`` falls
back to ``pt``; ``zh-Hant-TW`` to ``zh-Hant`` and ``zh``); a rule's tag takes a client's tag when it is one of
those, case aside: a rule ``pt`` takes ``pt-BR`` and ``pt-PT``, a rule ``pt-BR`` does not take ``pt-PT``.

The client's language is negotiated against the languages the link's rules name (:func:`negotiated`), as a
server negotiates content: the client's tags are tried from the most preferred (highest ``q``, 1 when absent;
among equal ones, the header's order), and the first one some rule's tag takes is the client's language, with
its fallbacks. So a German reader who tolerates English (``de-DE,de;q=0.9,en;q=0.8``) gets the link's German
rule when it has one, and its English rule when it has none; a language the client does not accept at all
never counts. ``*``, ``q=0`` and malformed entries are ignored; no header, no language.
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
        tags.update(_fallbacks(tag))
    return frozenset(tags)


def _fallbacks(tag: str) -> frozenset[str]:
    parts = tag.split("-")
    return frozenset("-".join(parts[:end]) for end in range(len(parts), 0, -1))


@lru_cache(maxsize=4096)
def negotiated(header: str, offered: frozenset[str]) -> frozenset[str]:
    """The client's language among ``offered`` (lower-case tags: the languages a link's rules name): the first
    of its tags, most preferred first, that an offered tag takes, with that tag's fallbacks; when none is
    taken, its most preferred tags (:func:`client_languages`, which then match no rule)."""
    for tag, _ in preferences(header):
        fallbacks = _fallbacks(tag)
        if not fallbacks.isdisjoint(offered):
            return fallbacks
    return client_languages(header)
