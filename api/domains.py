"""Custom domains over HTTP: the admin endpoints (``/api/admin/v1/accounts/{account_id}/domains``), the token
a domain serves to prove it is the account's (``/.well-known/linksvc-verify/{token}``) and the ask endpoint of a
proxy that issues certificates on demand (``/tls/allowed?domain=HOST``, Caddy's ``on_demand_tls``).
"""

from __future__ import annotations

from typing import Literal

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from api.appkeys import DB, RESOURCES, SETTINGS
from api.hosts import SHARED_HOSTS, host_of_request, on_every_host
from api.routing import Endpoint, data, json_response
from api.schemas import Envelope
from linksvc.domains import service as domains
from linksvc.domains.hosts import DomainRecord, held_domains, request_host
from linksvc.domains.url_patterns import EXAMPLE, MAX_LENGTH, MAX_PATTERNS

PATTERNS_DOC = (f"the long links' allow-list: RE2 regular expressions, each matched over the whole decoded URL of "
                f"link, ofl, afl, ifl and si, each naming its scheme and host ({EXAMPLE}); at most {MAX_PATTERNS}, "
                f"each at most {MAX_LENGTH} characters. The hosts of the account's own links are allowed without one")


class DomainCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    host: str = Field(min_length=1, max_length=253, description="a DNS name with at least one dot")
    url_patterns: list[str] = Field(default_factory=list, max_length=MAX_PATTERNS, description=PATTERNS_DOC)


class DomainUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url_patterns: list[str] = Field(max_length=MAX_PATTERNS, description=PATTERNS_DOC + " (replaces the list)")


class DnsRecord(BaseModel):
    type: Literal["CNAME", "A", "AAAA"] = Field(
        description="CNAME to the service's public host; A or AAAA when the service is reached by its address")
    name: str = Field(description="the record's name: the domain itself")
    value: str = Field(description="where it points: the host (or address) of the service's public URL")


class Verification(BaseModel):
    token: str = Field(description="what the domain must serve at path (the service answers it itself)")
    path: str
    url: str = Field(description="where the service fetches the token when asked to verify")
    dns: DnsRecord = Field(description="the DNS record to create so that the domain reaches the service, which then "
                                       "serves the token at path: all the set-up verification needs")


class DomainView(BaseModel):
    id: str
    host: str
    status: str = Field(description="pending until verified, then live")
    verification: Verification
    created_at: str
    verified_at: str | None
    url_patterns: list[str] = Field(description=PATTERNS_DOC)


async def create_domain(request: web.Request, body: DomainCreate) -> web.Response:
    created = await domains.add_domain(request.app[DB], request.app[SETTINGS], request.app[SHARED_HOSTS],
                                       request.match_info["account_id"], body.host, body.url_patterns)
    return data(created, status=201)


async def update_domain(request: web.Request, body: DomainUpdate) -> web.Response:
    return data(await domains.set_url_patterns(request.app[DB], request.app[SETTINGS], request.match_info["account_id"],
                                               request.match_info["domain_id"], body.url_patterns))


async def list_domains(request: web.Request) -> web.Response:
    return data(await domains.list_domains(request.app[DB], request.app[SETTINGS], request.match_info["account_id"]))


async def get_domain(request: web.Request) -> web.Response:
    return data(await domains.get_domain(request.app[DB], request.app[SETTINGS], request.match_info["account_id"],
                                         request.match_info["domain_id"]))


async def delete_domain(request: web.Request) -> web.Response:
    await domains.delete_domain(request.app[DB], request.app[RESOURCES], request.match_info["account_id"],
                                request.match_info["domain_id"])
    return web.Response(status=204)


async def verify_domain(request: web.Request) -> web.Response:
    return data(await domains.verify_domain(request.app[DB], request.app[SETTINGS], request.app[RESOURCES],
                                            request.match_info["account_id"], request.match_info["domain_id"]))


_DOMAIN = "/accounts/{account_id}/domains/{domain_id}"
ENDPOINTS = [
    Endpoint("GET", "/accounts/{account_id}/domains", list_domains, "List the account's custom domains", "domains",
             response=Envelope[list[DomainView]], security="admin", permission="domains:read", errors=(401, 404)),
    Endpoint("POST", "/accounts/{account_id}/domains", create_domain,
             "Add a custom domain (pending until verified); the answer names the token it must serve", "domains",
             body=DomainCreate, response=Envelope[DomainView], status=201, security="admin", permission="domains:write",
             errors=(400, 401, 404, 409)),
    Endpoint("GET", _DOMAIN, get_domain, "Read a custom domain", "domains", response=Envelope[DomainView],
             security="admin", permission="domains:read", errors=(401, 404)),
    Endpoint("PATCH", _DOMAIN, update_domain,
             "Replace the allow-list of the domain's long Dynamic Links (url_patterns); a pattern that is not a "
             "valid RE2 expression or does not name its host is 400 naming it (url_patterns[2])", "domains",
             body=DomainUpdate, response=Envelope[DomainView], security="admin",
             permission="domains:write", errors=(400, 401, 404)),
    Endpoint("DELETE", _DOMAIN, delete_domain, "Delete a custom domain that no link names", "domains", status=204,
             security="admin", permission="domains:write", errors=(401, 404, 409)),
    Endpoint("POST", f"{_DOMAIN}/verify", verify_domain,
             "Fetch the token from the domain: live when it answers it, else 422 (not_served or wrong_body)",
             "domains",
             response=Envelope[DomainView], security="admin", permission="domains:write", errors=(401, 404, 422)),
]




async def domain_of_request(request: web.Request) -> tuple[str, bool, DomainRecord | None]:
    """The request's host, whether it is shared, and the domain of that host (None when shared or unknown);
    a shared host reads nothing."""
    host = host_of_request(request)
    if host in request.app[SHARED_HOSTS]:
        return host, True, None
    return host, False, (await held_domains(request.app[DB]).current()).get(host)


def _not_found(details: str) -> web.Response:
    return json_response({"error": "Not found", "details": details}, status=404)


async def verification_token(request: web.Request) -> web.Response:
    """The token, as text, on the domain that holds it (pending or live); 404 on any other host."""
    token = request.match_info["token"]
    _, _, domain = await domain_of_request(request)
    if domain is None or domain.token != token:
        return _not_found("no domain on this host holds this token")
    return web.Response(text=token, content_type="text/plain", headers={"Cache-Control": "no-store"})


async def tls_allowed(request: web.Request) -> web.Response:
    """200 when a certificate may be issued for ``domain`` (a shared host or a pending or live domain)."""
    host = request_host(request.query.get("domain", ""))
    if host and host in request.app[SHARED_HOSTS]:
        return json_response({"allowed": True})
    if host and host in await held_domains(request.app[DB]).current():
        return json_response({"allowed": True})
    return _not_found(f"{host or 'no domain given'} is not a host of this service")


def add_domain_routes(app: web.Application) -> None:
    """The public routes (the admin endpoints are in :mod:`api.admin`); before the resolver's code route. The
    verification token answers on every host (it is meant for a tenant's domain); the TLS ask endpoint only on
    the service's own hosts, where the proxy asks it (:mod:`api.hosts`)."""

    on_every_host(app, app.router.add_get("/.well-known/linksvc-verify/{token}", verification_token))
    app.router.add_get("/tls/allowed", tls_allowed)


