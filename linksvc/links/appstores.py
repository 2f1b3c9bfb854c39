"""URLs into the apps and stores: Android intent URLs and the Play install referrer.

Intent URLs follow Chrome's grammar (``intent://HOST/PATH?QUERY#Intent;scheme=...;package=...;
S.browser_fallback_url=...;end``), which Android reads with ``Intent.parseUri``: every extra value is
fully percent-encoded, so no ``;``, ``#`` or ``=`` of a URL can end it early.

The Play install referrer is two-level encoded: the fields form a query string whose values are
percent-encoded (level one), and that whole string is percent-encoded again as the ``referrer``
parameter of the store URL (level two). The Play Install Referrer API hands the app the parameter
decoded once, which the app parses as a query string.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from linksvc.links.urls import encode_component, query_values, with_query

PLAY_DETAILS = "https://play.google.com/store/apps/details"
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):(?://)?")
_FRAGMENT_ESCAPES = str.maketrans({"#": "%23", ";": "%3B"})


def intent_url(target: str, package: str, fallback_url: str) -> str:
    """An intent URL opening ``target`` (a deeplink or https URL) in ``package``, else ``fallback_url``.

    Nothing taken from ``target`` can add or end the ``#Intent;...;end`` section: the target's scheme is
    RFC 3986 letters, digits, ``+``, ``-`` and ``.`` (ValueError otherwise), its host, path and query hold no
    ``#`` (the first one starts its fragment), and in its fragment ``#`` and ``;`` are percent-encoded, so
    the only ``#Intent;`` is ours and every ``;`` after it separates our extras."""
    match = _SCHEME.match(target)
    if match is None:
        raise ValueError("an intent URL needs a target with a scheme")
    rest = target[match.end():]
    data, hashmark, fragment = rest.partition("#")
    if hashmark:
        data = f"{data}#{fragment.translate(_FRAGMENT_ESCAPES)}"
    extras = [
        f"scheme={match.group(1).lower()}",
        f"package={encode_component(package)}",
        f"S.browser_fallback_url={encode_component(fallback_url)}",
    ]
    return f"intent://{data}#Intent;{';'.join(extras)};end"


def referrer_string(fields: Mapping[str, str], existing: str | None = None) -> str:
    """Level one: the referrer as a query string. Fields of an existing referrer keep their place and,
    unless ``fields`` sets them, their values."""
    return with_query("?" + (existing or ""), fields).lstrip("?")


def play_store_url(package: str, fields: Mapping[str, str], stored_url: str | None = None) -> str:
    """The Play page of ``package`` (or the stored Play URL, its other parameters kept) whose referrer
    carries ``fields`` beside what a stored referrer already had."""
    base = stored_url or f"{PLAY_DETAILS}?id={encode_component(package)}"
    existing = query_values(base).get("referrer")
    return with_query(base, {"referrer": referrer_string(fields, existing)})


def read_install_referrer(store_url: str) -> dict[str, str]:
    """What the app reads: the ``referrer`` parameter decoded once (as the Play API hands it over),
    then parsed as a query string."""
    referrer = query_values(store_url).get("referrer", "")
    return query_values("?" + referrer)
