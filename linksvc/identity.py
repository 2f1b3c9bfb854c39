"""The service's name and version as it introduces itself: ``linksvc --version`` and the ``User-Agent`` of every
outgoing request (deliveries, a domain's verification fetch, OAuth token refreshes, the S3 export). The version is
the installed distribution's (``importlib.metadata``), read here and nowhere else."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, metadata

DISTRIBUTION = "linksvc"


def _read() -> tuple[str, str]:
    try:
        meta = metadata(DISTRIBUTION)
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "0+unknown", ""
    urls = dict(entry.split(", ", 1) for entry in meta.get_all("Project-URL") or [] if ", " in entry)
    return meta["Version"], urls.get("Homepage", "")


VERSION, PROJECT_URL = _read()
# RFC 9110 product token and comment: the service and its version, then where to read about it (when known).
USER_AGENT = f"{DISTRIBUTION}/{VERSION}" + (f" (+{PROJECT_URL})" if PROJECT_URL else "")
HEADERS = {"User-Agent": USER_AGENT}
