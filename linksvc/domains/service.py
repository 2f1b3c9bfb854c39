"""Custom domains of an account: add, list, read, delete and verify (the admin API's rules).

A host is a lower-case DNS name with at least one dot, never an IP address in any notation, nor a name for local
networks (``.internal``, ``.localhost``, ...), nor a shared host, and unique across the service. A new domain is
``pending`` with a random token; it goes ``live`` once the service fetched the token back from
``/.well-known/linksvc-verify/{token}`` on the domain (:mod:`linksvc.domains.verify`), through the same guard
against private addresses as deliveries. The links that name a domain keep it from being deleted (409 naming how
many). Each domain holds the allow-list of its long Dynamic Links' targets (``url_patterns``:
:mod:`linksvc.domains.url_patterns`), set when it is added or replaced later.
"""

from __future__ import annotations

import ipaddress
import re
import secrets
import uuid
from typing import Any

from yarl import URL

from linksvc.accounts.service import get_account
from linksvc.clock import iso, utcnow
from linksvc.domains import url_patterns
from linksvc.domains.hosts import LIVE, PENDING, SharedHosts
from linksvc.domains.verify import VERIFY_PATH, fetch_problem, verification_url
from linksvc.errors import Conflict, InvalidField, NotFound, ServiceError
from linksvc.links.fdl_service import drop_long_links_link, ensure_long_links_link, import_export, long_links_code
from linksvc.netguard import is_ip_literal
from linksvc.resources.service import Resources
from linksvc.settings import Settings
from linksvc.store import Store, in_one_unit
from storage import domains as repo
from storage.db import Tx
from storage.domains import DomainRecord
from storage.links import links_naming_domain

_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
# Names that resolve only on a local network or machine, by standard: localhost (RFC 6761), mDNS's local
# (RFC 6762), home.arpa (RFC 8375), ICANN's private-use internal (metadata.google.internal), and two that never
# resolve publicly (invalid, onion). No such name can be proven to be an account's public domain.
LOCAL_SUFFIXES = ("localhost", "local", "internal", "home.arpa", "invalid", "onion")


class NotVerified(ServiceError):
    """The domain did not serve its token: ``details`` lists what happened."""

    status = 422
    default_error = "Domain not verified"


def check_host(raw: str, shared: SharedHosts) -> str:
    """The host as stored (lower-case, no trailing dot), or InvalidField naming ``host``: a DNS name, never an IP
    address in any notation (:func:`linksvc.netguard.is_ip_literal`), nor a name kept for local networks."""
    host = raw.strip().lower().rstrip(".")

    def refuse(message: str, rule: str = "format") -> InvalidField:
        return InvalidField("host", message, "Invalid body", rule=rule)

    if not host.isascii():
        raise refuse("must be an ASCII DNS name (write an internationalised name in its xn-- form)")
    if is_ip_literal(host):
        raise refuse("must be a DNS name, not an IP address (nor a name whose last label is a number)")
    labels = host.split(".")
    if len(host) > 253 or len(labels) < 2 or not all(_LABEL.match(label) for label in labels):
        raise refuse("must be a DNS name with at least one dot (letters, digits and hyphens: links.example.com)")
    local = next((suffix for suffix in LOCAL_SUFFIXES if host == suffix or host.endswith(f".{suffix}")), None)
    if local is not None:
        raise refuse(f"is a name for local networks (.{local}), never a public domain", "reserved")
    if host in shared.hosts:
        raise refuse("is one of the service's shared hosts", "reserved")
    return host


def dns_record(host: str, public_url: str) -> dict[str, str]:
    """The DNS record that points ``host`` at the service, as its verification needs it: the fetch of the token
    reaches the service only when the domain resolves where the service's public URL does. A CNAME to the public
    URL's host; an A (or AAAA) record when that host is an address. ``name`` is the domain itself."""
    target = URL(public_url).raw_host or ""
    try:
        address = ipaddress.ip_address(target.strip("[]"))
    except ValueError:
        return {"type": "CNAME", "name": host, "value": target}
    return {"type": "A" if address.version == 4 else "AAAA", "name": host, "value": address.compressed}


def domain_view(record: DomainRecord, settings: Settings) -> dict[str, Any]:
    scheme = settings.domain_verify_scheme
    return {
        "id": record.id,
        "host": record.host,
        "status": record.status,
        "verification": {"token": record.token, "path": VERIFY_PATH.format(token=record.token),
                         "url": verification_url(scheme, record.host, record.token),
                         "dns": dns_record(record.host, settings.public_url)},
        "created_at": record.created_at,
        "verified_at": record.verified_at,
        "url_patterns": list(record.url_patterns),
    }


async def add_domain(db: Store, settings: Settings, shared: SharedHosts, account_id: str, raw_host: str,
                     patterns: list[str] | None = None) -> dict[str, Any]:
    host = check_host(raw_host, shared)
    allowed = url_patterns.checked(patterns or [])
    record = DomainRecord(str(uuid.uuid4()), account_id, host, PENDING, secrets.token_urlsafe(32),
                          iso(utcnow()), None, allowed)

    async def unit(tx: Tx) -> DomainRecord:  # the record: the audit log names the new domain's id
        await get_account(tx, account_id)
        if await repo.by_host(tx, host) is not None:
            raise Conflict("Domain taken", {"field": "host", "message": f"{host} is already a domain"})
        await repo.insert(tx, record)
        return record

    await in_one_unit(db, unit)
    return domain_view(record, settings)


async def list_domains(db: Store, settings: Settings, account_id: str) -> list[dict[str, Any]]:
    await get_account(db.reader, account_id)
    return [domain_view(row, settings) for row in await repo.of_account(db.reader, account_id)]


async def _domain(db: Store, account_id: str, domain_id: str) -> DomainRecord:
    await get_account(db.reader, account_id)
    found = await repo.by_id(db.reader, account_id, domain_id)
    if found is None:
        raise NotFound("Domain not found", f"no domain with id {domain_id} in this account")
    return found


async def get_domain(db: Store, settings: Settings, account_id: str, domain_id: str) -> dict[str, Any]:
    return domain_view(await _domain(db, account_id, domain_id), settings)


async def set_url_patterns(db: Store, settings: Settings, account_id: str, domain_id: str, patterns: list[str]
                           ) -> dict[str, Any]:
    """Replaces the allow-list of the domain's long links (every worker holds it at its next request)."""
    allowed = url_patterns.checked(patterns)
    await _domain(db, account_id, domain_id)

    async def unit(tx: Tx) -> None:
        if not await repo.set_url_patterns(tx, account_id, domain_id, allowed):
            raise NotFound("Domain not found", f"no domain with id {domain_id} in this account")

    await in_one_unit(db, unit)
    return await get_domain(db, settings, account_id, domain_id)


async def delete_domain(db: Store, resources: Resources, account_id: str, domain_id: str) -> None:
    """Deletes a domain no link names (its long-links link aside, deleted with it)."""
    hosts: list[str] = []

    async def unit(tx: Tx) -> None:
        found = await repo.by_id(tx, account_id, domain_id)
        if found is None:
            raise NotFound("Domain not found", f"no domain with id {domain_id} in this account")
        hosts.append(found.host)
        naming = await links_naming_domain(tx, account_id, found.host, long_links_code(found.host))
        if naming:
            raise Conflict("Domain in use", {"field": "domain", "message": f"{naming} link(s) name {found.host}: "
                                             "change or delete them first"})
        await repo.delete(tx, account_id, domain_id)

    await get_account(db.reader, account_id)
    await in_one_unit(db, unit)
    await drop_long_links_link(resources, account_id, hosts[-1])


async def verify_domain(db: Store, settings: Settings, resources: Resources, account_id: str, domain_id: str
                        ) -> dict[str, Any]:
    """Fetches the token from the domain; live when it is there, else NotVerified (:mod:`linksvc.domains.verify`
    says what it tells). A live
    domain gets its long-links link (the clicks on its long Dynamic Links: linksvc.links.fdl_service)."""
    found = await _domain(db, account_id, domain_id)
    if found.status != LIVE:
        problem = await fetch_problem(settings.domain_verify_scheme, found.host, found.token,
                                      connect=settings.domain_verify_connect,
                                      timeout=settings.domain_verify_timeout_seconds,
                                      allow_private=settings.allow_private_destinations)
        if problem is not None:
            raise NotVerified(details=[problem])

        async def unit(tx: Tx) -> None:
            if not await repo.mark_live(tx, found.id, iso(utcnow())):
                raise NotFound("Domain not found", f"no domain with id {domain_id} in this account")

        await in_one_unit(db, unit)
    await ensure_long_links_link(resources, account_id, found.host)
    return await get_domain(db, settings, account_id, domain_id)



async def import_fdl_export(db: Store, settings: Settings, account_id: str, text: str) -> dict[str, Any]:
    """An FDL export's rows as links on the account's domains (pending ones too: their links are ready when they
    go live); 404 for an unknown account. :func:`linksvc.links.fdl_service.import_export` says the rest."""
    hosts = [domain["host"] for domain in await list_domains(db, settings, account_id)]
    return await import_export(db, account_id, text, hosts)
