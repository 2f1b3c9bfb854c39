"""The vendors' API versions: the default of each destination, and when the versions we know are retired.

A connection may name its own version (``config.api_version``); without one it gets the default here, which
is current at release. ``docs/operations.md`` has the same table with the vendors' pages. At start-up the
service warns about every connection whose version is retired or will be within :data:`WARN_DAYS`, and
``/metrics`` shows ``linksvc_connection_api_version_days_left`` for every connection whose version has a
published end date. Pure: the caller passes today's date.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

WARN_DAYS = 60


@dataclass(frozen=True)
class ApiVersion:
    version: str
    released: date | None
    sunset: date | None  # the last day it answers, as the vendor published it; None: none published


# Newest first per destination; the first is the default. Dates from the vendors' own pages (see
# docs/operations.md and fixtures/vendors/README.md).
KNOWN: dict[str, tuple[ApiVersion, ...]] = {
    # Graph API versions (the Conversions API follows the Graph API's schedule), "available until".
    "meta": (
        ApiVersion("v26.0", date(2026, 7, 29), None),
        ApiVersion("v25.0", date(2026, 2, 18), date(2028, 7, 29)),
        ApiVersion("v24.0", date(2025, 10, 8), date(2028, 2, 18)),
        ApiVersion("v23.0", date(2025, 5, 29), date(2027, 10, 8)),
        ApiVersion("v22.0", date(2025, 1, 21), date(2027, 5, 20)),
        ApiVersion("v21.0", date(2024, 10, 2), date(2027, 1, 21)),
        ApiVersion("v20.0", date(2024, 5, 21), date(2026, 9, 24)),
        ApiVersion("v19.0", date(2024, 1, 23), date(2026, 5, 21)),
        ApiVersion("v18.0", date(2023, 9, 12), date(2026, 1, 26)),
        ApiVersion("v17.0", date(2023, 5, 23), date(2025, 9, 12)),
    ),
    # Google Ads API sunsets as Google's sunset reminders give them; v23 to v26 have only projected months
    # (February, May, August and November 2027), not dates: none is set until Google publishes one.
    "google_ads": (
        ApiVersion("v26", date(2026, 10, 14), None),
        ApiVersion("v25", date(2026, 7, 22), None),
        ApiVersion("v24", None, None),
        ApiVersion("v23", None, None),
        ApiVersion("v22", None, date(2026, 10, 7)),
        ApiVersion("v21", None, date(2026, 8, 5)),
        ApiVersion("v20", date(2025, 6, 4), date(2026, 6, 10)),
        ApiVersion("v19", date(2025, 2, 26), date(2026, 2, 11)),
        ApiVersion("v18", date(2024, 10, 16), date(2025, 8, 20)),
        ApiVersion("v17", None, date(2025, 6, 4)),
    ),
    "tiktok": (ApiVersion("v1.3", None, None),),  # no end published
}


def default_version(destination: str) -> str | None:
    versions = KNOWN.get(destination)
    return versions[0].version if versions else None


def version_of(connection: dict[str, Any]) -> str | None:
    """The connection's ``config.api_version``, else its destination's default."""
    given = (connection.get("config") or {}).get("api_version")
    if isinstance(given, str) and given.strip():
        return given.strip()
    return default_version(str(connection.get("destination")))


def days_left(destination: str, version: str, today: date) -> int | None:
    """Days until the version's published end (negative once it has passed); None without one."""
    for known in KNOWN.get(destination, ()):
        if known.version == version and known.sunset is not None:
            return (known.sunset - today).days
    return None


def near_sunset(connections: list[dict[str, Any]], today: date, within: int = WARN_DAYS) -> list[dict[str, Any]]:
    """The connections whose version ends within ``within`` days (or has ended), with how many days are left."""
    found = []
    for connection in connections:
        destination = str(connection.get("destination"))
        version = version_of(connection)
        left = days_left(destination, version, today) if version else None
        if left is not None and left <= within:
            found.append({"id": connection.get("id"), "account_id": connection.get("account_id"),
                          "destination": destination, "api_version": version, "days_left": left})
    return found
