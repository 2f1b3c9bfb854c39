"""Which attribution an event carries (the specification's Behavior events, rules 1 to 3).

Per field (``tracking_id`` and the five ``utm_*``), the first non-empty value wins: the event's top level,
then its ``attribution`` object, then legacy ``properties``. Empty strings, blanks and nulls never erase a
value found further down. The other members of ``attribution`` (revenue, cost, currency, anything else) are
kept as sent. Nothing is looked up: no earlier campaign of the customer, nothing from a tracking id alone.
The nested object itself is stored untouched beside the result. Given ``sources``, :func:`resolve` fills it
with where each resolved field came from (the names in :data:`SOURCES`), for the event's lineage.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

FIELDS = ("tracking_id", "utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content")
SOURCES = ("event.top_level", "event.attribution", "event.properties")  # in order of precedence


def resolve(top: Mapping[str, Any], attribution: Mapping[str, Any] | None,
            properties: Mapping[str, Any] | None, sources: dict[str, str] | None = None) -> dict[str, Any]:
    nested = attribution or {}
    legacy = properties or {}
    resolved: dict[str, Any] = {}
    places = ((SOURCES[0], top), (SOURCES[1], nested), (SOURCES[2], legacy))
    for field in FIELDS:
        for name, source in places:  # every event goes through here: no call per field and source
            value = source.get(field)
            if isinstance(value, str) and value and not value.isspace():
                resolved[field] = value
                if sources is not None:
                    sources[field] = name
                break
    for key, value in nested.items():
        if key not in FIELDS and value is not None:
            resolved[key] = value
    return resolved
