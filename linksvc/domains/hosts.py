"""Which host a request came to, which hosts are shared, which are the service's own, and the domains every
worker holds in memory.

A request's host (:func:`target_host`) is the authority of its request target when the target is in absolute
form (``GET http://host/code``: RFC 9112 section 3.2.2, the ``Host`` header is then ignored), else its ``Host``
header; either lower-cased, without the port and a trailing dot. The *shared hosts* (the host of
``LINKSVC_PUBLIC_URL`` and ``LINKSVC_SHARED_HOSTS``) resolve every account's links that name no domain, as before
custom domains; a request on one of them never reads the domains. Any other host is looked up in
:class:`HeldDomains`: the whole ``domains`` table (a few rows per account), held by each worker and read again
when the store's ``domains`` generation moves (a change on any worker or node), so the resolver's fast lane can
apply the host rule with a dict lookup and no I/O.

The service's *own hosts* (:meth:`SharedHosts.own`), where the back office, the APIs and ``/metrics`` answer,
are the shared hosts and IP addresses (the service reached by its address: a scrape, a probe), never a name a
tenant could hold: a domain is a DNS name that is not shared, so no domain is ever an own host.
"""

from __future__ import annotations

import ipaddress
import threading
from dataclasses import dataclass
from typing import Any

from yarl import URL

from linksvc.settings import Settings
from linksvc.store import PerStore, Store
from storage import domains as repo
from storage.domains import DomainRecord

LIVE = "live"
PENDING = "pending"


def request_host(header: str) -> str:
    """The host of a ``Host`` header: lower-cased, without the port or a trailing dot ("" when absent). An IPv6
    address is in brackets, in its one compressed form (``[::1]``), whether it came in brackets (a ``Host``
    header, ``[::1]:8080``) or bare (a setting's host, ``::1``, as :class:`yarl.URL` gives it), so that the
    public URL ``http://[::1]:8080`` and the requests made to it name the same host."""
    host = header.strip().lower()
    if host.startswith("["):  # an IPv6 literal, [::1]:8080
        end = host.find("]")
        return _bracketed(host[1:end], host[:end + 1]) if end > 0 else host
    if host.count(":") > 1:  # a bare IPv6 address (there is no port without brackets)
        bracketed = _bracketed(host, "")
        if bracketed:
            return bracketed
    name, colon, port = host.rpartition(":")
    if colon and port.isdigit():
        host = name
    return host.rstrip(".")


def _bracketed(address: str, otherwise: str) -> str:
    """``[address]`` in the compressed form of the IPv6 address, or ``otherwise`` when it is none."""
    try:
        return f"[{ipaddress.IPv6Address(address).compressed}]"
    except ValueError:
        return otherwise


def configured_host(text: str) -> str:
    """A host as an operator writes it in a setting (a name, Unicode or punycode, or an address; with or without
    a port) in :func:`request_host` form, a name in punycode: what a browser sends in ``Host`` for it."""
    host = request_host(text)
    if host.isascii():
        return host
    try:
        return request_host(URL(f"http://{host}").raw_host or "") or host
    except (ValueError, UnicodeError):
        return host


def target_host(target: str, host_header: str) -> str:
    """The host a request is for (:func:`request_host` form): the authority of ``target`` when it is in absolute
    form (``http://host/path``), whatever the ``Host`` header says (RFC 9112 section 3.2.2), else the header."""
    if target.startswith("/") or "://" not in target:
        return request_host(host_header)
    try:
        host = URL(target, encoded=True).raw_host or ""
    except ValueError:
        return ""
    return request_host(f"[{host}]" if ":" in host else host)


def is_address(host: str) -> bool:
    """Whether ``host`` (:func:`request_host` form) is an IP address rather than a DNS name: an IPv4 or IPv6
    literal, or a name whose last label is all digits (read as an IPv4 address by resolvers and browsers). A
    domain is never one (``linksvc.domains.service.check_host`` refuses them)."""
    try:
        ipaddress.ip_address(host.removeprefix("[").removesuffix("]"))
    except ValueError:
        return host.rpartition(".")[2].isdigit()
    return True


@dataclass(frozen=True)
class SharedHosts:
    """The hosts every account shares (no custom domain): the public URL's host and ``LINKSVC_SHARED_HOSTS``."""

    hosts: frozenset[str]

    @classmethod
    def of(cls, settings: Settings) -> SharedHosts:
        public = URL(settings.public_url).raw_host or ""  # punycode, as in Host: .host would be Unicode
        listed = (configured_host(part) for part in settings.shared_hosts.split(","))
        return cls(frozenset(host for host in (request_host(public), *listed) if host))

    def __contains__(self, host: str) -> bool:
        # A request without a Host header (HTTP/1.0) came to the service's own address.
        return not host or host in self.hosts

    def own(self, host: str) -> bool:
        """Whether ``host`` is one of the service's own hosts, where the back office, the APIs and the metrics
        answer: a shared host or an IP address; never a tenant's domain or a name nobody configured."""
        return not host or host in self.hosts or is_address(host)


class HeldDomains:
    """Every domain by host, as this worker holds it; read again whole when the ``domains`` generation moves."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._generation = -1
        self._by_host: dict[str, DomainRecord] = {}
        self._lock = threading.Lock()

    def peek(self) -> dict[str, DomainRecord] | None:
        """The domains by host if what is held is current, else None (never reads the store)."""
        if self._store.generation("domains") != self._generation:
            return None
        return self._by_host

    async def current(self) -> dict[str, DomainRecord]:
        """The domains by host, read from the store first if a domain changed since they were read."""
        generation = self._store.generation("domains")
        if generation == self._generation:
            return self._by_host
        rows = await repo.every_domain(self._store.reader)
        by_host = {row.host: row for row in rows}
        with self._lock:  # kept only if no change committed while reading
            if self._store.generation("domains") == generation and generation > self._generation:
                self._by_host = by_host
                self._generation = generation
        return by_host


held_domains = PerStore(HeldDomains)  # the process's held domains of a store


def link_resolves_here(host: str, shared: bool, domain: DomainRecord | None, account_id: str,
                       link_domain: Any) -> bool:
    """The host rule (docs/decisions.md, Custom domains): on a shared host, the links that name no domain; on
    a live domain, its account's links that name no domain or name it; nowhere else."""
    if shared:
        return link_domain is None
    if domain is None or domain.status != LIVE or domain.account_id != account_id:
        return False
    return link_domain is None or link_domain == host


def short_url(public_url: str, scheme: str, link: dict[str, Any]) -> str:
    """The address a link is published under: on its domain when it names one, else under the public URL."""
    domain = link.get("domain")
    if isinstance(domain, str) and domain:
        return f"{scheme}://{domain}/{link.get('code')}"
    return f"{public_url}/{link.get('code')}"
