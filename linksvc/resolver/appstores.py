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

from collections.abc import Mapping
from urllib.parse import urlsplit

from linksvc.resolver.urls import encode_component, query_values, with_query

PLAY_DETAILS = "https://play.google.com/store/apps/details"


def intent_url(target: str, package: str, fallback_url: str) -> str:
    """An intent URL opening ``target`` (a deeplink or https URL) in ``package``, else ``fallback_url``."""
    parts = urlsplit(target)
    rest = target[len(parts.scheme) + 3:] if target.startswith(f"{parts.scheme}://") else target[len(parts.scheme) + 1:]
    extras = [
        f"scheme={parts.scheme}",
        f"package={package}",
        f"S.browser_fallback_url={encode_component(fallback_url)}",
    ]
    return f"intent://{rest}#Intent;{';'.join(extras)};end"


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
