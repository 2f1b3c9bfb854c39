"""Custom domains through the admin API: adding, listing, reading, deleting and verifying a domain, the links
that name one, and the ownership proof fetched over a real loopback socket (from the service itself, from a
local server that answers the wrong body, from a port nobody listens on, one that never answers, one that
answers 404: the last three one same answer), never from a private address unless allowed."""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from functools import partial
from typing import Any

import pytest
from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.test_utils import TestClient, TestServer

from api.appkeys import DB
from api.server import FAST_LANE
from linksvc.app import create_app
from linksvc.domains.verify import fetch_problem
from linksvc.seed import load_seed
from linksvc.settings import Settings
from storage import domains as domains_repo
from tests.conftest import ADMIN, ServiceTestServer
from tests.factories import A, B, ids, two_accounts
from tests.http.conftest import Receiver
from tests.rawhttp import kept_alive
from tests.unit.test_domain_hosts import IP_LITERALS, LOCAL_NAMES

ADMIN_API = "/api/admin/v1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def start(aiohttp_client: Any, settings: Settings, connect_port: int | None = None, timeout: float = 2.0,
                guarded: bool = False) -> TestClient:
    """The service with the two test accounts; its verification fetch connects to ``connect_port`` (by default
    the service's own port) over plain HTTP; ``guarded``: to the domain itself, private addresses refused (the
    service as deployed)."""
    port = free_port()
    connect = "" if guarded else f"127.0.0.1:{connect_port or port}"
    settings = replace(settings, domain_verify_scheme="http", domain_verify_connect=connect,
                       domain_verify_timeout_seconds=timeout, allow_private_destinations=not guarded)
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


@pytest.mark.parametrize(("public_url", "record"), [
    ("https://go.linksvc.example", {"type": "CNAME", "value": "go.linksvc.example"}),
    ("https://GO.Linksvc.example:8443/base", {"type": "CNAME", "value": "go.linksvc.example"}),
    ("http://203.0.113.7:8080", {"type": "A", "value": "203.0.113.7"}),
    ("http://[2001:db8:0::7]:8080", {"type": "AAAA", "value": "2001:db8::7"}),
])
async def test_a_domain_names_the_dns_record_that_points_it_at_the_service(
        aiohttp_client: Any, settings: Settings, public_url: str, record: dict[str, str]) -> None:
    client = await start(aiohttp_client, replace(settings, public_url=public_url))
    domain = await added(client, "links.example.com")
    assert domain["verification"]["dns"] == {**record, "name": "links.example.com"}
    assert (await verify(client, domain)).status == 200  # the record is shown live too (the dashboard hides it)


@pytest.mark.parametrize("host", ["localhost", "example", "127.0.0.1", "10.1.2.3", "[::1]", "-bad.example.com",
                                  "bad_host.example.com", "a..example.com", "münchen.example", "x" * 64 + ".com",
                                  "1.2.3.4.5", "links.example.com/path", "links.example.com:8443", " "])
async def test_a_host_that_is_not_a_dns_name_of_the_account_is_refused(service: TestClient, host: str) -> None:
    response = await add(service, host)
    assert response.status == 400, await response.text()
    body = await response.json()
    assert set(body) == {"error", "details"}
    assert body["details"]["field"] == "host"


@pytest.mark.parametrize(("host", "what"), IP_LITERALS)
async def test_an_ip_address_in_any_notation_is_refused(service: TestClient, host: str, what: str) -> None:
    response = await add(service, host)
    assert response.status == 400, (what, await response.text())
    body = await response.json()
    assert set(body) == {"error", "details"}
    assert body["details"]["field"] == "host"
    assert "not an IP address" in body["details"]["message"], what


@pytest.mark.parametrize("host", LOCAL_NAMES)
async def test_a_name_for_local_networks_is_refused(service: TestClient, host: str) -> None:
    response = await add(service, host)
    assert response.status == 400, await response.text()
    issue = (await response.json())["details"]["issues"][0]
    assert (issue["path"], issue["type"]) == ("host", "reserved")
    assert issue["message"].startswith("is a name for local networks"), issue
    listed = await (await service.get(f"{ADMIN_API}/accounts/{A}/domains", headers=ADMIN)).json()
    assert listed["data"] == []


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


@pytest.fixture
async def silent() -> AsyncIterator[int]:
    """A port that accepts connections and never answers."""
    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()
        writer.close()

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    yield int(server.sockets[0].getsockname()[1])
    server.close()


async def stored(client: TestClient, host: str) -> dict[str, Any]:
    """A domain stored with ``host`` as is, past the host check (a row from before the check refused it)."""
    domain = await added(client, f"stored-{uuid.uuid4().hex[:8]}.example.com")
    db = client.app[DB]
    record = await domains_repo.by_id(db.reader, A, domain["id"])
    assert record is not None
    copy = replace(record, id=str(uuid.uuid4()), host=host, token=f"{record.token[:-1]}x")

    async def unit(tx: Any) -> None:
        await domains_repo.insert(tx, copy)

    await db.write(unit)
    return {"id": copy.id, "host": host}


def without_host(problem: dict[str, Any], host: str) -> dict[str, Any]:
    """The answer with the domain's own URL and host taken out: what is left must say nothing else."""
    assert problem["url"].startswith(f"http://{host}/.well-known/linksvc-verify/")
    return {key: value.replace(problem["url"], "URL").replace(host, "HOST") for key, value in problem.items()}


async def test_every_failure_to_fetch_is_the_same_answer(aiohttp_client: Any, settings: Settings,
                                                         impostor: TestServer, silent: int) -> None:
    """A refused connection, a timeout, a status other than 200, a name or an address that is not public: one
    answer, which says nothing about what is behind the host (an admin could otherwise map the internal
    network: which ports are open, which hosts exist)."""
    answers = []
    for port, host in ((free_port(), "refused.example.com"), (silent, "silent.example.com"),
                       (impostor.port, "missing.example.com")):
        client = await start(aiohttp_client, settings, port, timeout=0.5)
        answers.append(without_host(await not_verified(client, await added(client, host)), host))
    # The service as deployed: no LINKSVC_DOMAIN_VERIFY_CONNECT, private destinations not allowed; hosts the
    # check refuses today, stored before it did, that resolve (or are) a loopback address.
    deployed = await start(aiohttp_client, settings, guarded=True)
    for host in ("localhost", "0x7f.0x1", "127.1", "127.0.0.1", "[::1]", "[::ffff:127.0.0.1]"):
        answers.append(without_host(await not_verified(deployed, await stored(deployed, host)), host))
    assert answers == [{"problem": "not_served", "url": "URL", "message": "could not fetch URL: HOST must point at "
                        "this service, which answers the token there"}] * len(answers)


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


# The verification fetch and what a name resolves to ------------------------------------------------------------


class PointedDNS(AbstractResolver):
    """Stands in for DNS: ``name`` resolves to 127.0.0.1 at ``port`` (a name an admin pointed at an internal
    server); any other name resolves nowhere."""

    def __init__(self, name: str, port: int) -> None:
        self.name, self.port = name, port

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        if host != self.name:
            raise OSError(f"no such name {host}")
        return [{"hostname": host, "host": "127.0.0.1", "port": self.port, "proto": 0, "flags": 0,
                 "family": socket.AF_INET}]

    async def close(self) -> None:
        pass


async def test_a_name_resolving_to_a_private_address_is_never_fetched(receiver: Receiver) -> None:
    dns = PointedDNS("links.example.com", receiver.server.port or 0)
    fetch = partial(fetch_problem, "http", "links.example.com", "the-token", connect="", timeout=2.0, resolver=dns)
    problem = await fetch(allow_private=False)
    assert problem is not None and problem["problem"] == "not_served", problem
    assert receiver.received == []
    # The same name with private destinations allowed: fetched (the receiver's answer is not the token).
    problem = await fetch(allow_private=True)
    assert problem is not None and problem["problem"] == "wrong_body", problem
    assert [(r["path"], r["headers"]["Host"]) for r in receiver.received] == [
        ("/.well-known/linksvc-verify/the-token", "links.example.com")]
