"""Which targets a long Dynamic Link may name (docs/decisions.md, "Long links (issue 32)").

A long link describes a whole link in its URL, so anyone could write one on an account's domain. It is followed
only when every URL it names (``link``, ``ofl``, ``afl``, ``ifl``, and the preview image ``si``) is one the
account allows, and every app it names (``apn``, ``ibi``, ``isi``) is one of the account's apps:

- **A URL is allowed** when one of the domain's URL patterns (:mod:`linksvc.domains.url_patterns`) matches it
  whole, or when it is on one of the account's *own hosts*: the hosts of the URLs of the account's stored links
  (destination, fallbacks, http(s) deeplinks) and of the account's domains. A URL of another scheme (an app's
  ``shop://`` deep link, behind ``ofl``) is allowed when one of the account's stored deeplinks has that scheme.
  An http(s) URL with user information (``https://shop.example@evil.example/``) is never on an own host.
- **An app is the account's** when one of its stored links names it (``android.package``, ``ios.bundle_id``,
  ``ios.app_store_id``): an intent to any other package is never written.

What the account's links name is held per account by each worker until a link changes (the ``links``
generation), so a click on a long link reads the store only after a change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit
from weakref import WeakKeyDictionary

from linksvc.domains import url_patterns
from linksvc.domains.hosts import held_domains
from linksvc.errors import Issue
from linksvc.readmodel import ReadModel
from linksvc.store import Store
from storage.domains import DomainRecord
from storage.links import LinkTargets, account_link_targets

MAX_ACCOUNTS_HELD = 10_000
WEB = ("http", "https")


@dataclass(frozen=True)
class OwnTargets:
    """What the account's stored links name: hosts of their web URLs, schemes of their other URLs, their apps."""

    hosts: frozenset[str]
    schemes: frozenset[str]
    android_packages: frozenset[str]
    ios_bundle_ids: frozenset[str]
    ios_app_store_ids: frozenset[str]

    @classmethod
    def of(cls, links: Iterable[LinkTargets]) -> OwnTargets:
        hosts: set[str] = set()
        schemes: set[str] = set()
        packages: set[str] = set()
        bundles: set[str] = set()
        store_ids: set[str] = set()
        for link in links:
            for url in link.urls:
                scheme, host = _scheme_host(url)
                if scheme in WEB and host:
                    hosts.add(host)
                elif scheme and scheme not in WEB:
                    schemes.add(scheme)
            for found, value in ((packages, link.android_package), (bundles, link.ios_bundle_id),
                                 (store_ids, link.ios_app_store_id)):
                if value:
                    found.add(value)
        return cls(frozenset(hosts), frozenset(schemes), frozenset(packages), frozenset(bundles),
                   frozenset(store_ids))


def _scheme_host(url: str) -> tuple[str, str | None]:
    """The URL's scheme and host, lower-cased; no host when it has user information (``user@``) or none."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
    except ValueError:
        return "", None
    if "@" in parts.netloc:
        return parts.scheme.lower(), None
    return parts.scheme.lower(), (host or "").rstrip(".") or None


_HELD: WeakKeyDictionary[Any, ReadModel[str, OwnTargets]] = WeakKeyDictionary()


async def own_targets(db: Store, account_id: str) -> OwnTargets:
    """What the account's links name, held until a link changes; the hosts of its domains added."""
    model = _HELD.get(db)
    if model is None:
        model = _HELD[db] = ReadModel(db, "links", MAX_ACCOUNTS_HELD)

    async def load() -> OwnTargets:
        return OwnTargets.of(await account_link_targets(db.background, account_id))

    found = await model.get(account_id, load) or OwnTargets.of(())
    domains = frozenset(host for host, row in (await held_domains(db).current()).items()
                        if row.account_id == account_id)
    return OwnTargets(found.hosts | domains, found.schemes, found.android_packages, found.ios_bundle_ids,
                      found.ios_app_store_ids)


def url_allowed(url: str, own: OwnTargets, patterns: Iterable[str]) -> bool:
    """Whether a long link may lead to ``url``: a pattern of the domain matches it, or it is on an own host."""
    if url_patterns.matches(patterns, url):
        return True
    scheme, host = _scheme_host(url)
    if scheme in WEB:
        return host is not None and host in own.hosts
    return bool(scheme) and scheme in own.schemes


# The body's URL fields and the FDL parameter each comes from; destination_url is ofl's when given, else link's.
URL_FIELDS = (("deeplink", "link"), ("destination_url", "ofl"), ("android.fallback_url", "afl"),
              ("ios.fallback_url", "ifl"), ("preview.image_url", "si"))
APP_FIELDS = (("android", "package", "apn", "android_packages", "an Android app"),
              ("ios", "bundle_id", "ibi", "ios_bundle_ids", "an iOS app"),
              ("ios", "app_store_id", "isi", "ios_app_store_ids", "an App Store app"))


def _member(body: Mapping[str, Any], path: str) -> Any:
    value: Any = body
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def refusals(body: Mapping[str, Any], query: Mapping[str, str], own: OwnTargets,
             domain: DomainRecord) -> list[Issue]:
    """What the long link (``body``, checked by the Link model, from ``query``) names that the account does not
    allow, each issue named by its FDL parameter; the URLs themselves are not repeated in the messages (the
    answer is a page on the account's own domain)."""
    issues: list[Issue] = []
    for path, parameter in URL_FIELDS:
        url = _member(body, path)
        if path == "destination_url" and not query.get("ofl"):
            parameter = "link"
        if isinstance(url, str) and not url_allowed(url, own, domain.url_patterns) \
                and not any(issue.path == parameter for issue in issues):
            issues.append(Issue(parameter, f"leads to an address that {domain.host} does not allow (neither a host "
                                           "of the links of this account nor a URL pattern of the domain)",
                                "not_allowed"))
    for obj, member, parameter, known, what in APP_FIELDS:
        value = _member(body, f"{obj}.{member}")
        if isinstance(value, str) and value not in getattr(own, known):
            issues.append(Issue(parameter, f"is not {what} of this account (one of its links must name it)",
                                "not_allowed"))
    return issues
