"""Which UTM values a click carries (the specification's campaign link rules, product decisions 11).

Per field, the first non-empty value wins: the click's own query, then the stored destination, then the
selected fallback URL (including the campaign fields inside a Play ``referrer``), then the defaults of
internal ``email``, ``push`` and ``whatsapp`` links. ``in_app``, ``news_feed`` and ``external`` links
get no defaults. Nothing here rewrites a stored link. :func:`resolve_utm` can also say which source each
value came from (the names in :data:`UTM_SOURCES`), for the explanation of a route.
"""

from __future__ import annotations

from collections.abc import Mapping

from linksvc.links.urls import query_values, with_query

UTM_FIELDS = ("utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content")
DEFAULTED_KINDS = ("email", "push", "whatsapp")
UTM_SOURCES = ("query", "destination", "fallback", "defaults")
"""The sources in order of precedence, as :func:`resolve_utm` names them when asked."""


def utm_of(values: Mapping[str, str]) -> dict[str, str]:
    """The non-empty UTM fields among ``values``."""
    if not values:  # most clicks carry no query, many destinations none: nothing to look up
        return {}
    return {f: values[f] for f in UTM_FIELDS if values.get(f, "").strip()}


def utm_of_url(url: str | None) -> dict[str, str]:
    """UTM fields of a URL: its own parameters first, then those inside a Play ``referrer``."""
    if not url:
        return {}
    values = query_values(url)
    own = utm_of(values)
    referrer = values.get("referrer")
    if referrer:
        inner = utm_of(query_values("?" + referrer))
        return {**inner, **own}
    return own


def default_utm(kind: str, service_label: str, campaign_id: str | None, template_id: str | None) -> dict[str, str]:
    if kind not in DEFAULTED_KINDS:
        return {}
    defaults = {"utm_source": service_label, "utm_medium": kind}
    campaign = campaign_id or template_id
    if campaign:
        defaults["utm_campaign"] = campaign
    return utm_of(defaults)


def resolve_utm(
    incoming: Mapping[str, str], destination_url: str, fallback_url: str | None, defaults: Mapping[str, str],
    origins: dict[str, str] | None = None,
) -> dict[str, str]:
    """The five fields in order of precedence; fields no source has are absent. Given ``origins``, it is
    filled with the name (from :data:`UTM_SOURCES`) of the source each resolved field came from."""
    sources = (("query", utm_of(incoming)), ("destination", utm_of_url(destination_url)),
               ("fallback", utm_of_url(fallback_url)), ("defaults", utm_of(defaults)))  # as UTM_SOURCES
    resolved: dict[str, str] = {}
    for field in UTM_FIELDS:
        for name, source in sources:
            if field in source:
                resolved[field] = source[field]
                if origins is not None:
                    origins[field] = name
                break
    return resolved


def edit_utm(url: str, changes: Mapping[str, str | None]) -> str:
    """A stored destination with its UTM edited: a value sets the field, None or "" removes it, a field
    not named stays. Only ``utm_*`` parameters change; every other parameter keeps its text and place,
    and the fragment stays."""
    unknown = set(changes) - set(UTM_FIELDS)
    if unknown:
        raise KeyError(f"not UTM fields: {sorted(unknown)}")
    sets = {k: v for k, v in changes.items() if v}
    return with_query(url, sets, remove=[k for k, v in changes.items() if not v])
