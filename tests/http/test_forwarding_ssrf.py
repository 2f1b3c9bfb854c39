"""Deliveries never reach a loopback or private address unless LINKSVC_ALLOW_PRIVATE_DESTINATIONS is on, whatever
the endpoint's name resolves to at delivery time (the check at save time sees only the name); a refusal is a
failed delivery with the reason, retried only by hand; redirects are not followed."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.test_utils import TestClient
from yarl import URL

from api.appkeys import DB
from linksvc.netguard import PublicOnlyResolver, RefusedDestination
from linksvc.resources.service import Resources
from linksvc.settings import Settings
from tests.conftest import ADMIN
from tests.factories import A
from tests.http.conftest import Receiver, forwarding_service
from tests.http.test_forwarding import ADMIN_API, CUSTOMER, SECRET, connect, send, settled


@pytest.fixture
async def guarded(request: pytest.FixtureRequest, aiohttp_client: Any, tmp_path: Path,
                  settings: Settings) -> TestClient:
    """The service as deployed: private destinations not allowed."""
    return await forwarding_service(request, aiohttp_client, tmp_path / "ssrf.db", allow_private=False,
                                    database_url=settings.database_url)


async def stored_connection(client: TestClient, endpoint_url: str) -> str:
    """A webhook connection stored without the save-time check (saved while the setting was on, or a name that
    resolved to a public address then): what the sender must still refuse."""
    doc = {"destination": "webhook", "enabled": True, "forward_events": True, "event_types": ["page_view"],
           "config": {"endpoint_url": endpoint_url, "secret": SECRET}}
    view = await Resources(client.app[DB], allow_private_destinations=True).create(A, "connections", doc)
    return str(view["id"])


def on_host(receiver: Receiver, host: str) -> str:
    return str(URL(receiver.url()).with_host(host))


async def page_view(client: TestClient) -> dict[str, Any]:
    event_id = await send(client, {"type": "page_view", "customer_id": CUSTOMER})
    [delivery] = await settled(client, event_id)
    return delivery


# The service --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("host", "subjects"), [
    # A name: only the address it resolves to at delivery time tells it is loopback (::1 where /etc/hosts
    # lists that first).
    ("localhost", ["localhost resolves to 127.0.0.1, which", "localhost resolves to ::1, which"]),
    # A literal, which the HTTP client connects to without any lookup.
    ("127.0.0.1", ["127.0.0.1"]),
])
async def test_a_loopback_destination_is_refused_and_said_so(guarded: TestClient, receiver: Receiver,
                                                              host: str, subjects: list[str]) -> None:
    await stored_connection(guarded, on_host(receiver, host))
    refused = await page_view(guarded)
    assert (refused["state"], refused["tries"], refused["last_status"]) == ("failed", 1, None), refused
    assert refused["last_error"] in [f"refused: {subject} is not a public address; "
                                     "set LINKSVC_ALLOW_PRIVATE_DESTINATIONS=1 to allow deliveries to it"
                                     for subject in subjects]
    await asyncio.sleep(0.2)
    assert receiver.received == []
    # Not retried on its own; the operator can send it again by hand (here nothing changed: refused again).
    response = await guarded.post(f"{ADMIN_API}/deliveries/{refused['id']}/retry", headers=ADMIN)
    assert response.status == 200, await response.text()
    [again] = await settled(guarded, refused["event_id"])
    assert (again["state"], again["tries"], again["last_error"]) == ("failed", 2, refused["last_error"])
    assert receiver.received == []


async def test_the_same_destination_gets_it_when_private_destinations_are_allowed(
        service: TestClient, receiver: Receiver) -> None:
    await stored_connection(service, on_host(receiver, "localhost"))
    delivered = await page_view(service)
    assert (delivered["state"], delivered["last_status"], delivered["last_error"]) == ("delivered", 200, None)
    assert [r["json"]["type"] for r in receiver.received] == ["event.accepted"]


async def test_a_redirect_is_not_followed(service: TestClient, receiver: Receiver) -> None:
    await connect(service, "webhook", {"endpoint_url": receiver.url(), "secret": SECRET}, event_types=["page_view"])
    receiver.script = [(307, {"Location": receiver.url("/elsewhere")})]
    failed = await page_view(service)
    assert (failed["state"], failed["tries"], failed["last_status"]) == ("failed", 1, 307)
    await asyncio.sleep(0.2)
    assert [r["path"] for r in receiver.received] == ["/in"]


# The HTTP client's resolver -------------------------------------------------------------------------------------


class StubDNS(AbstractResolver):
    """Stands in for DNS: answers one name with the given addresses (what a rebinding name answers)."""

    def __init__(self, name: str, *addresses: str) -> None:
        self.name, self.addresses = name, addresses

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        if host != self.name:
            raise OSError(f"no such name {host}")
        return [{"hostname": host, "host": address, "port": port, "proto": 0, "flags": 0,
                 "family": socket.AF_INET6 if ":" in address else socket.AF_INET} for address in self.addresses]

    async def close(self) -> None:
        pass


@pytest.mark.parametrize("answers", [
    ("127.0.0.1",), ("10.1.2.3",), ("169.254.169.254",), ("::1",), ("::ffff:127.0.0.1",), ("fd00::1",),
    ("93.184.215.14", "127.0.0.1"),  # one private answer among public ones is enough to refuse
])
async def test_a_name_resolving_to_a_private_address_is_never_connected_to(receiver: Receiver,
                                                                            answers: tuple[str, ...]) -> None:
    connector = aiohttp.TCPConnector(resolver=PublicOnlyResolver(StubDNS("shop.example", *answers)))
    async with aiohttp.ClientSession(connector=connector) as session:
        with pytest.raises(RefusedDestination, match=f"shop.example resolves to {answers[-1]}"):
            await session.post(on_host(receiver, "shop.example"), data=b"{}")
    assert receiver.received == []


async def test_public_answers_pass_through_unchanged() -> None:
    stub = StubDNS("shop.example", "93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c",
                   "64:ff9b::5db8:d70e")
    answers = await PublicOnlyResolver(stub).resolve("shop.example", 443, socket.AF_UNSPEC)
    assert [a["host"] for a in answers] == list(stub.addresses)
