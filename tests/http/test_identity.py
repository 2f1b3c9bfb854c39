"""The service introduces itself: a delivery and a domain's verification fetch reach a real server on 127.0.0.1
with ``User-Agent: linksvc/<version>``, the version of the installed distribution."""

from __future__ import annotations

from importlib.metadata import version

from aiohttp.test_utils import TestClient

from linksvc.domains.verify import fetch_problem
from tests.http.conftest import Receiver
from tests.http.test_forwarding import SECRET, connect, purchase, send, settled

EXPECTED = f"linksvc/{version('linksvc')}"


async def test_a_delivery_names_the_service_and_its_version(service: TestClient, receiver: Receiver) -> None:
    await connect(service, "webhook", {"endpoint_url": receiver.url(), "secret": SECRET})
    event_id = await send(service, purchase())
    found = await settled(service, event_id)
    assert {d["state"] for d in found} == {"delivered"}
    agents = {r["headers"]["User-Agent"] for r in receiver.received}
    assert agents == {EXPECTED}


async def test_a_domain_verification_fetch_names_the_service(receiver: Receiver) -> None:
    host = f"127.0.0.1:{receiver.server.port}"
    problem = await fetch_problem("http", "links.example.com", "tok", connect=host, timeout=5, allow_private=True)
    assert problem is not None  # the receiver answers {} rather than the token
    [request] = receiver.received
    assert request["path"] == "/.well-known/linksvc-verify/tok"
    assert request["headers"]["User-Agent"] == EXPECTED
