"""Which hosts serve what (docs/operations.md, "Which hosts serve what"): on a tenant's domain (live or pending)
and on a name nobody configured, only the links, the association files, the verification token and the health
checks answer; the back office, the APIs, their documents and the metrics are 404 ``{error, details}`` there,
as a path the service does not serve, and answer on the shared hosts and on IP addresses. The host is the
request target's authority when the target is in absolute form (RFC 9112 section 3.2.2), else ``Host``; the
fast lanes agree. Raw HTTP/1.1 on a real loopback socket, each host's requests on one kept-alive connection."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from api.customers.lane import FastLookups
from api.server import FAST_LANE, FAST_LANES
from linksvc.settings import Settings
from tests.conftest import ADMIN, ADMIN_TOKEN
from tests.factories import KEYS, A
from tests.http.test_domains import added, start, verify
from tests.http.test_lookup_lane import at_once
from tests.rawhttp import Reply, exchange, kept_alive

ADMIN_API = "/api/admin/v1"
LIVE = "links.example.com"
PENDING = "pending.example.com"
UNKNOWN = "unknown.example.com"
# Everything the back office and the operators use, by GET (a signed-in admin's credentials are sent along).
OWN_PATHS = ["/dashboard", "/dashboard/links", "/dashboard/static/app.js", "/dashboard/session",
             f"{ADMIN_API}/accounts", f"{ADMIN_API}/openapi.json", "/api/storefront/v1/openapi.json",
             "/api/storefront/v1/brands", "/metrics", f"/tls/allowed?domain={LIVE}"]


@pytest.fixture
async def service(aiohttp_client: Any, settings: Settings) -> TestClient:
    client = await start(aiohttp_client, settings)
    domain = await added(client, LIVE)
    assert (await verify(client, domain)).status == 200
    await added(client, PENDING)
    response = await client.post(f"{ADMIN_API}/accounts/{A}/links", headers=ADMIN,
                                 json={"code": "on-domain", "kind": "external", "destination_url": "https://a.example/",
                                       "domain": LIVE})
    assert response.status == 201, await response.text()
    return client


def port_of(client: TestClient) -> int:
    port = client.server.port
    assert port is not None
    return port


def gets(client: TestClient, host: str, paths: list[str], headers: dict[str, str] | None = None) -> list[Reply]:
    return kept_alive(port_of(client), host, paths, {"Authorization": f"Bearer {ADMIN_TOKEN}", **(headers or {})})


def not_served(reply: Reply, path: str) -> bool:
    """The 404 of a path the service does not serve: ``{error, details}``, as under /api/."""
    return reply.status == 404 and json.loads(reply.body) == {
        "error": "Not found", "details": f"no route matches GET {path.split('?')[0]}"}


@pytest.mark.parametrize("host", [LIVE, f"{LIVE.upper()}.:443", PENDING, UNKNOWN])
async def test_the_back_office_is_not_served_on_a_tenants_domain_or_an_unknown_name(service: TestClient,
                                                                                  host: str) -> None:
    replies = await asyncio.to_thread(gets, service, host, OWN_PATHS)
    assert [path for path, reply in zip(OWN_PATHS, replies, strict=True) if not not_served(reply, path)] == []
    # The same on the shared host, for a path nobody serves.
    nothing = await service.get(f"{ADMIN_API}/nothing")
    assert await nothing.json() == {"error": "Not found", "details": f"no route matches GET {ADMIN_API}/nothing"}


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost:8080", "10.1.2.3:8080", "[::1]:8080"])
async def test_the_back_office_is_served_on_a_shared_host_and_an_ip_address(service: TestClient, host: str) -> None:
    replies = await asyncio.to_thread(gets, service, host, OWN_PATHS)
    statuses = dict(zip(OWN_PATHS, (reply.status for reply in replies), strict=True))
    # The storefront wants its bearer token, not the admin's: 401, an answer of the route.
    assert statuses == {**dict.fromkeys(OWN_PATHS, 200), "/api/storefront/v1/brands": 401}


async def test_signing_in_on_a_tenants_domain_sets_no_cookie(service: TestClient) -> None:
    for host in (LIVE, PENDING, UNKNOWN):
        answer = await service.post("/dashboard/session", json={"token": ADMIN_TOKEN}, headers={"Host": host})
        assert answer.status == 404 and "Set-Cookie" not in answer.headers, host
        assert set(await answer.json()) == {"error", "details"}
        # Another method than the route's is the same 404, not a 405 telling that the path exists.
        answer = await service.delete(f"{ADMIN_API}/openapi.json", headers={"Host": host})
        assert answer.status == 404 and set(await answer.json()) == {"error", "details"}, host
    answer = await service.post("/dashboard/session", json={"token": ADMIN_TOKEN})
    assert answer.status == 200 and "linksvc_admin=" in answer.headers["Set-Cookie"]


async def test_a_tenants_domain_serves_links_association_files_the_token_and_health(service: TestClient) -> None:
    token = (await (await service.get(f"{ADMIN_API}/accounts/{A}/domains", headers=ADMIN)).json())["data"]
    verification = next(domain for domain in token if domain["host"] == LIVE)["verification"]["path"]
    paths = ["/on-domain", "/lnkaaaa", "/.well-known/apple-app-site-association", "/.well-known/assetlinks.json",
             verification, "/healthz", "/readyz"]
    replies = await asyncio.to_thread(gets, service, LIVE, paths)
    assert [reply.status for reply in replies] == [302, 302, 200, 200, 200, 200, 200]
    # An unknown path there is the same 404 as a back-office path.
    assert not_served((await asyncio.to_thread(gets, service, LIVE, ["/a/b"]))[0], "/a/b")


async def test_an_absolute_form_target_names_the_host(service: TestClient) -> None:
    """RFC 9112 section 3.2.2: the authority of an absolute-form target wins over ``Host``, for the links (the
    resolver and its fast lane) and for the back office alike. Three times on one connection: the first
    answer of a held link is the handler's, the next ones could be the fast lane's."""
    port = port_of(service)
    on_live = f"http://{LIVE}/on-domain"
    # Host says the shared host, the target says the tenant's domain: the domain's link resolves...
    replies = await asyncio.to_thread(gets, service, f"127.0.0.1:{port}", [on_live] * 3)
    assert [reply.status for reply in replies] == [302] * 3
    assert replies[0].headers["location"].startswith("https://a.example/")
    # ... and the back office does not answer.
    for path in ("/metrics", "/dashboard", f"{ADMIN_API}/accounts"):
        replies = await asyncio.to_thread(gets, service, f"127.0.0.1:{port}", [f"http://{LIVE}{path}"] * 2)
        assert all(not_served(reply, path) for reply in replies), path
    # A name nobody configured, whatever Host says: nothing.
    replies = await asyncio.to_thread(gets, service, f"127.0.0.1:{port}", [f"http://{UNKNOWN}/lnkaaaa"] * 3)
    assert [reply.status for reply in replies] == [404] * 3
    # The other way round: Host says the tenant's domain, the target the shared host.
    replies = await asyncio.to_thread(gets, service, LIVE, [f"http://127.0.0.1:{port}/metrics",
                                                            "HTTP://127.0.0.1/on-domain", "http://[::1]/metrics"])
    assert [reply.status for reply in replies] == [200, 404, 200]


async def test_absolute_form_targets_take_the_handler(service: TestClient) -> None:
    lane = service.app[FAST_LANE]
    port = port_of(service)
    await asyncio.to_thread(gets, service, f"127.0.0.1:{port}", ["/lnkaaaa"])  # the link is held from now on
    before = lane.answered
    replies = await asyncio.to_thread(gets, service, f"127.0.0.1:{port}", [f"http://127.0.0.1:{port}/lnkaaaa"] * 3)
    assert [reply.status for reply in replies] == [302] * 3 and lane.answered == before
    await asyncio.to_thread(gets, service, f"127.0.0.1:{port}", ["/lnkaaaa"] * 2)
    assert lane.answered == before + 2


async def test_the_customer_lookup_lane_answers_only_on_an_own_host(service: TestClient) -> None:
    lane = service.app[FAST_LANES].lane_of("/api/storefront/v1/customers")
    assert isinstance(lane, FastLookups)
    authorized = await service.get("/api/storefront/v1/auth/authorize", headers={"x-api-key": KEYS[(A, "SERVER")]})
    bearer = {"Authorization": f"Bearer {(await authorized.json())['data']}"}
    path = "/api/storefront/v1/customers?phone=%2B57%20300%20000%200000"
    replies = await asyncio.to_thread(gets, service, "127.0.0.1", [path] * 2, bearer)  # the token is held now
    assert [reply.status for reply in replies] == [404] * 2
    before = lane.answered
    replies = await asyncio.to_thread(gets, service, LIVE, [path] * 3, bearer)
    assert all(not_served(reply, path) for reply in replies) and lane.answered == before
    replies = await asyncio.to_thread(gets, service, "127.0.0.1", [path] * 3, bearer)
    assert [reply.status for reply in replies] == [404] * 3 and lane.answered == before + at_once(service, 3)
    assert json.loads(replies[0].body)["error"] != "Not found"


async def test_a_request_without_host_is_for_the_service_itself(service: TestClient) -> None:
    reply = await asyncio.to_thread(exchange, port_of(service), b"GET /metrics HTTP/1.0\r\n\r\n")
    assert reply.status == 200


# --- issue 32: second look, links and hosts ---

@pytest.mark.parametrize(("public_url", "shared", "host"), [
    ("http://[::1]:8080", "localhost", "[::1]:8080"),  # serve --host ::1: the public URL made from it
    ("http://[2001:DB8::1]", "localhost", "[2001:db8:0::1]"),  # another spelling of the same address
    ("http://links.example.net", "::1", "[::1]"),  # LINKSVC_SHARED_HOSTS lists a bare IPv6 address
    # An internationalised name: browsers send it in punycode, however the setting spells it.
    ("https://bücher.example", "localhost", "xn--bcher-kva.example"),
    ("https://xn--bcher-kva.example", "localhost", "xn--bcher-kva.example"),
    ("http://links.example.net", "Bücher.example", "xn--bcher-kva.example"),
])
async def test_an_ipv6_or_idn_public_url_or_shared_host_serves_its_links(aiohttp_client: Any, settings: Settings,
                                                                         public_url: str, shared: str,
                                                                         host: str) -> None:
    """A public URL or a shared host that is an IPv6 address was read as the host ``:`` (``::1`` cut at its last
    colon as if ``1`` were a port), and one that is an internationalised name as its Unicode form (even when
    written in punycode), which no ``Host`` header carries: every short link, and the association files,
    answered 404 at the very address the service printed them under."""
    client = await start(aiohttp_client, replace(settings, public_url=public_url, shared_hosts=shared))
    replies = await asyncio.to_thread(gets, client, host, ["/lnkaaaa", "/lnkaaaa", "/.well-known/assetlinks.json"])
    assert [reply.status for reply in replies] == [302, 302, 200], [reply.raw[:200] for reply in replies]
