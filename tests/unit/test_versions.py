"""Vendor API versions: defaults, the connection's own, and the warning window before a version ends."""

from __future__ import annotations

from datetime import date

from linksvc.forwarding.versions import KNOWN, days_left, default_version, near_sunset, version_of


def test_defaults_are_the_newest_known_and_not_retired() -> None:
    for destination, known in KNOWN.items():
        assert default_version(destination) == known[0].version
        assert known[0].sunset is None or known[0].sunset > date(2026, 11, 23)


def test_a_connection_may_name_its_version() -> None:
    assert version_of({"destination": "meta", "config": {"api_version": " v21.0 "}}) == "v21.0"
    assert version_of({"destination": "meta", "config": {}}) == default_version("meta")
    assert version_of({"destination": "webhook"}) is None


def test_the_warning_window() -> None:
    connections = [
        {"id": "old", "destination": "meta", "config": {"api_version": "v19.0"}},
        {"id": "soon", "destination": "meta", "config": {"api_version": "v20.0"}},
        {"id": "current", "destination": "meta", "config": {}},
        {"id": "unknown", "destination": "meta", "config": {"api_version": "v99.0"}},
        {"id": "ads", "destination": "google_ads", "config": {"api_version": "v17"}},
    ]
    today = date(2026, 8, 1)
    found = {c["id"]: c["days_left"] for c in near_sunset(connections, today)}
    assert found == {"old": (date(2026, 5, 21) - today).days, "soon": (date(2026, 9, 24) - today).days,
                     "ads": (date(2025, 6, 4) - today).days}
    assert default_version("meta") == "v26.0" and default_version("google_ads") == "v26"
    assert days_left("meta", "v20.0", date(2026, 7, 1)) == 85
    assert "soon" not in {c["id"] for c in near_sunset(connections, date(2026, 7, 1))}
