"""Custom domains through the admin API: adding, listing, reading, deleting and verifying a domain, the links
that name one, and the ownership proof fetched over a real loopback socket (from the service itself, from a
local server that answers the wrong body, from a port nobody listens on, from one that answers 404)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from api.appkeys import DB
from api.server import FAST_LANE
from linksvc.app import create_app
from linksvc.seed import load_seed
from linksvc.settings import Settings
from storage import domains as domains_repo
from tests.conftest import ADMIN, ServiceTestServer
from tests.factories import A, B, ids, two_accounts
from tests.rawhttp import kept_alive

ADMIN_API = "/api/admin/v1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def start(aiohttp_client: Any, settings: Settings, connect_port: int | None = None) -> TestClient:
    """The service with the two test accounts; its verification fetch connects to ``connect_port`` (by default
    the service's own port) over plain HTTP."""
    port = free_port()
    settings = replace(settings, domain_verify_scheme="http",
                       domain_verify_connect=f"127.0.0.1:{connect_port or port}", domain_verify_timeout_seconds=2.0)
    client: TestClient = await aiohttp_client(ServiceTestServer(create_app(settings), host="127.0.0.1", port=port))
    await load_seed(client.app[DB], two_accounts(), allow_private=True)
    return client


@pytest.fixture
async def service(aiohttp_client: Any, settings: Settings) -> TestClient:
    return await start(aiohttp_client, settings)


async def add(client: TestClient, host: str, account: str = A) -> Any:
    return await client.post(f"{ADMIN_API}/accounts/{account}/domains", json={"host": host}, headers=ADMIN)


async def added(client: TestClient, host: str, account: str = A) -> dict[str, Any]:
    response = await add(client, host, account)
    assert response.status == 201, await response.text()
    return dict((await response.json())["data"])


async def verify(client: TestClient, domain: dict[str, Any], account: str = A) -> Any:
    return await client.post(f"{ADMIN_API}/accounts/{account}/domains/{domain['id']}/verify", headers=ADMIN)


async def test_a_new_domain_is_pending_with_a_token_to_serve(service: TestClient) -> None:
    domain = await added(service, "Links.Example.COM.")
    token = domain["verification"]["token"]
    assert domain["host"] == "links.example.com"
    assert domain["status"] == "pending" and domain["verified_at"] is None
    assert len(token) >= 32 and token.replace("-", "").replace("_", "").isalnum()
    assert domain["verification"]["path"] == f"/.well-known/linksvc-verify/{token}"
    assert domain["verification"]["url"] == f"http://links.example.com/.well-known/linksvc-verify/{token}"
    listed = await (await service.get(f"{ADMIN_API}/accounts/{A}/domains", headers=ADMIN)).json()
    assert listed["data"] == [domain]
    read = await service.get(f"{ADMIN_API}/accounts/{A}/domains/{domain['id']}", headers=ADMIN)
    assert (await read.json())["data"] == domain
    other = await added(service, "go.example.org")
    assert other["verification"]["token"] != token


@pytest.mark.parametrize("host", ["localhost", "example", "127.0.0.1", "10.1.2.3", "[::1]", "-bad.example.com",
                                  "bad_host.example.com", "a..example.com", "münchen.example", "x" * 64 + ".com",
                                  "1.2.3.4.5", "links.example.com/path", "links.example.com:8443", " "])
async def test_a_host_that_is_not_a_dns_name_of_the_account_is_refused(service: TestClient, host: str) -> None:
    response = await add(service, host)
    assert response.status == 400, await response.text()
    body = await response.json()
    assert set(body) == {"error", "details"}
    assert body["details"]["field"] == "host"


async def test_a_shared_host_is_refused(aiohttp_client: Any, settings: Settings) -> None:
    client = await start(aiohttp_client, replace(settings, public_url="https://go.linksvc.example"))
    response = await add(client, "go.linksvc.example")
    assert response.status == 400
    assert (await response.json())["details"]["issues"][0]["type"] == "reserved"


async def test_a_host_another_domain_has_is_a_conflict(service: TestClient) -> None:
    await added(service, "links.example.com")
    for account in (A, B):
        response = await add(service, "LINKS.example.com", account)
        assert response.status == 409
        body = await response.json()
        assert body["error"] == "Domain taken" and body["details"]["field"] == "host"


async def test_another_accounts_domain_is_not_found(service: TestClient) -> None:
    domain = await added(service, "links.example.com")
    for method, path in (("GET", ""), ("DELETE", ""), ("POST", "/verify")):
        response = await service.request(method, f"{ADMIN_API}/accounts/{B}/domains/{domain['id']}{path}",
                                          headers=ADMIN)
        assert response.status == 404, (method, path)
        assert set(await response.json()) == {"error", "details"}
    listed = await (await service.get(f"{ADMIN_API}/accounts/{B}/domains", headers=ADMIN)).json()
    assert listed["data"] == []
    unknown = await service.get(f"{ADMIN_API}/accounts/00000000-0000-4000-8000-000000000000/domains", headers=ADMIN)
    assert unknown.status == 404
    assert (await service.get(f"{ADMIN_API}/accounts/{A}/domains")).status == 401


async def test_delete_then_the_host_is_free(service: TestClient) -> None:
    domain = await added(service, "links.example.com")
    deleted = await service.delete(f"{ADMIN_API}/accounts/{A}/domains/{domain['id']}", headers=ADMIN)
    assert deleted.status == 204
    assert (await service.get(f"{ADMIN_API}/accounts/{A}/domains/{domain['id']}", headers=ADMIN)).status == 404
    await added(service, "links.example.com", B)


async def test_the_service_serves_the_token_only_on_its_domain(service: TestClient) -> None:
    domain = await added(service, "links.example.com")
    token, path = domain["verification"]["token"], domain["verification"]["path"]
    on_domain = await service.get(path, headers={"Host": "links.example.com"})
    assert on_domain.status == 200
    assert on_domain.content_type == "text/plain"
    assert await on_domain.text() == token
    for host in ("127.0.0.1", "other.example.com"):
        response = await service.get(path, headers={"Host": host})
        assert response.status == 404
        assert set(await response.json()) == {"error", "details"}
    wrong = await service.get("/.well-known/linksvc-verify/not-the-token", headers={"Host": "links.example.com"})
    assert wrong.status == 404


async def test_verify_against_the_service_itself_makes_the_domain_live(service: TestClient) -> None:
    domain = await added(service, "links.example.com")
    response = await verify(service, domain)
    assert response.status == 200, await response.text()
    live = (await response.json())["data"]
    assert live["status"] == "live" and live["verified_at"] is not None
    assert live["verification"] == domain["verification"]
    listed = await (await service.get(f"{ADMIN_API}/accounts/{A}/domains", headers=ADMIN)).json()
    assert listed["data"] == [live]
    # The token is still served on a live domain; verifying again keeps it live.
    assert (await service.get(domain["verification"]["path"], headers={"Host": "links.example.com"})).status == 200
    assert (await verify(service, domain)).status == 200


@pytest.fixture
async def impostor() -> AsyncIterator[TestServer]:
    """A local server that answers its own text at every path, and 404 to the host missing.example.com."""
    async def handle(request: web.Request) -> web.Response:
        if request.host.startswith("missing."):
            return web.Response(status=404, text="not here")
        return web.Response(text="hello from somewhere else")

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    yield server
    await server.close()


async def not_verified(client: TestClient, domain: dict[str, Any]) -> dict[str, Any]:
    response = await verify(client, domain)
    assert response.status == 422, await response.text()
    body = await response.json()
    assert body["error"] == "Domain not verified"
    assert isinstance(body["details"], list) and len(body["details"]) == 1
    read = await client.get(f"{ADMIN_API}/accounts/{A}/domains/{domain['id']}", headers=ADMIN)
    assert (await read.json())["data"]["status"] == "pending"
    return dict(body["details"][0])


async def test_a_wrong_body_is_not_a_proof(aiohttp_client: Any, settings: Settings, impostor: TestServer) -> None:
    client = await start(aiohttp_client, settings, impostor.port)
    domain = await added(client, "links.example.com")
    problem = await not_verified(client, domain)
    assert problem["problem"] == "wrong_body"
    assert "not the token" in problem["message"]
    assert problem["url"] == domain["verification"]["url"]


async def test_a_refused_connection_is_named(aiohttp_client: Any, settings: Settings) -> None:
    client = await start(aiohttp_client, settings, free_port())
    problem = await not_verified(client, await added(client, "links.example.com"))
    assert problem["problem"] == "connection_refused"
    assert "connection refused" in problem["message"]


async def test_a_status_other_than_200_is_named(aiohttp_client: Any, settings: Settings,
                                                impostor: TestServer) -> None:
    client = await start(aiohttp_client, settings, impostor.port)
    problem = await not_verified(client, await added(client, "missing.example.com"))
    assert problem["problem"] == "status"
    assert "status 404" in problem["message"]


async def test_a_link_may_name_only_a_domain_of_its_account(service: TestClient) -> None:
    await added(service, "links.example.com")
    await added(service, "b.example.net", B)
    link = {"kind": "external", "destination_url": "https://shop.example/", "domain": "Links.Example.com"}
    created = await service.post(f"{ADMIN_API}/accounts/{A}/links", json=link, headers=ADMIN)
    assert created.status == 201, await created.text()
    body = (await created.json())["data"]
    assert body["domain"] == "links.example.com"
    overview = await (await service.get(f"{ADMIN_API}/accounts/{A}/links/overview", headers=ADMIN)).json()
    short = {item["code"]: item["short_url"] for item in overview["data"]}
    assert short[body["code"]] == f"http://links.example.com/{body['code']}"
    assert short["lnkaaaa"].endswith("/lnkaaaa") and "links.example.com" not in short["lnkaaaa"]
    for host in ("b.example.net", "nowhere.example.com"):
        refused = await service.post(f"{ADMIN_API}/accounts/{A}/links", json={**link, "domain": host}, headers=ADMIN)
        assert refused.status == 400
        details = (await refused.json())["details"]
        assert details["field"] == "domain" and host in details["message"]
    patched = await service.patch(f"{ADMIN_API}/accounts/{A}/links/{ids(A)['links']}",
                                  json={"domain": "b.example.net"}, headers=ADMIN)
    assert patched.status == 400
    assert (await patched.json())["details"]["field"] == "domain"


async def test_a_domain_a_link_names_cannot_be_deleted(service: TestClient) -> None:
    domain = await added(service, "links.example.com")
    link = {"kind": "external", "destination_url": "https://shop.example/", "domain": "links.example.com"}
    created = await service.post(f"{ADMIN_API}/accounts/{A}/links", json=link, headers=ADMIN)
    link_id = (await created.json())["data"]["id"]
    refused = await service.delete(f"{ADMIN_API}/accounts/{A}/domains/{domain['id']}", headers=ADMIN)
    assert refused.status == 409
    assert "1 link(s)" in (await refused.json())["details"]["message"]
    assert (await service.delete(f"{ADMIN_API}/accounts/{A}/links/{link_id}", headers=ADMIN)).status == 204
    assert (await service.delete(f"{ADMIN_API}/accounts/{A}/domains/{domain['id']}", headers=ADMIN)).status == 204


async def test_the_tls_ask_endpoint(service: TestClient) -> None:
    pending = await added(service, "pending.example.com")
    live = await added(service, "live.example.com")
    assert (await verify(service, live)).status == 200
    answers = {host: (await service.get("/tls/allowed", params={"domain": host})).status
               for host in ("pending.example.com", "LIVE.example.com", "127.0.0.1", "localhost", "other.example.com",
                            "")}
    assert answers == {"pending.example.com": 200, "LIVE.example.com": 200, "127.0.0.1": 200, "localhost": 200,
                       "other.example.com": 404, "": 404}
    assert pending["status"] == "pending"
    assert (await service.get("/tls/allowed")).status == 404


def _kept_alive(port: int, host: str, paths: list[str]) -> list[int]:
    """The statuses of GETs of ``paths`` one after the other on one HTTP/1.1 connection with ``Host: host``."""
    return [reply.status for reply in kept_alive(port, host, paths)]


async def test_the_fast_lane_applies_the_host_rule(service: TestClient) -> None:
    lane = service.app[FAST_LANE]
    domain = await added(service, "links.example.com")
    assert (await verify(service, domain)).status == 200
    await added(service, "pending.example.com")
    port = service.server.port
    assert port is not None
    # The first request of each code fills this worker's links; the next ones are the lane's to answer.
    before = lane.answered
    statuses = await asyncio.to_thread(_kept_alive, port, "links.example.com", ["/lnkaaaa", "/lnkbbbb"] * 3)
    assert statuses == [302, 404] * 3
    assert lane.answered - before == 2  # A's link, after the handler's first answer; B's never
    before = lane.answered
    for host in ("pending.example.com", "unknown.example.com"):
        assert await asyncio.to_thread(_kept_alive, port, host, ["/lnkaaaa"] * 2) == [404, 404]
    assert await asyncio.to_thread(_kept_alive, port, f"127.0.0.1:{port}", ["/lnkaaaa", "/lnkbbbb"] * 2) == [302] * 4
    assert lane.answered - before == 4


async def test_a_shared_host_reads_no_domain(service: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    domain = await added(service, "links.example.com")
    assert (await verify(service, domain)).status == 200
    await added(service, "other.example.com")  # the domains changed since this worker read them

    async def refuse(conn: Any) -> Any:
        raise AssertionError("the domains were read")

    monkeypatch.setattr(domains_repo, "every_domain", refuse)
    for attempt in range(2):  # the handler, then the fast lane
        answer = await service.get("/lnkaaaa", allow_redirects=False)
        assert answer.status == 302, attempt
