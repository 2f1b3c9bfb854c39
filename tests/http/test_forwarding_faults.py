"""Destinations that hang or reset connections: ingest and redirects go on, nothing accepted is lost, and
the deliveries go out once the destination behaves."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from linksvc.forwarding.sender import MAX_RESPONSE_BYTES
from tests.conftest import ADMIN, bearer, token_for
from tests.factories import A
from tests.http.test_forwarding import SECRET, connect, deliveries, settled

API = "/api/storefront/v1"


class Misbehaving:
    """A destination that hangs or resets connections until told to behave; records what it accepted."""

    def __init__(self) -> None:
        self.mode = "hang"
        self.release = asyncio.Event()
        self.accepted: list[str] = []
        self.server: TestServer | None = None

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        if self.mode == "hang":
            await self.release.wait()
        elif self.mode == "reset":
            assert request.transport is not None
            request.transport.abort()  # the connection is reset mid-request
            return web.Response(status=200)
        self.accepted.append(body["data"]["id"])
        return web.Response(status=204)

    def url(self) -> str:
        assert self.server is not None
        return str(self.server.make_url("/hook"))


@pytest.fixture
async def destination() -> AsyncIterator[Misbehaving]:
    bad = Misbehaving()
    app = web.Application()
    app.router.add_post("/hook", bad.handle)
    bad.server = TestServer(app, host="127.0.0.1")
    await bad.server.start_server()
    yield bad
    bad.release.set()
    await bad.server.close()


async def _events(client: TestClient, count: int) -> list[str]:
    headers = bearer(await token_for(client, A))
    ids = []
    for _ in range(count):
        response = await client.post(f"{API}/behavior/events", json={"type": "page_view"}, headers=headers)
        assert response.status == 202
        ids.append((await response.json())["data"]["id"])
    return ids


@pytest.mark.parametrize("mode", ["hang", "reset"])
async def test_a_bad_destination_slows_nothing_and_loses_nothing(service: TestClient, destination: Misbehaving,
                                                                 mode: str) -> None:
    destination.mode = mode
    await connect(service, "webhook", {"endpoint_url": destination.url(), "secret": SECRET},
                  event_types=["page_view"])
    # More events than the dispatcher has slots (16): with every slot stuck, ingest still answers each at once
    # (it never waits on a delivery) and the resolver still redirects.
    accepted = await _events(service, 40)
    response = await service.get("/lnkaaaa", allow_redirects=False)
    assert response.status == 302
    assert destination.accepted == []
    states = {d["state"] for event_id in accepted[:3] for d in await deliveries(service, event_id)}
    assert states <= {"pending", "dead"}
    # The destination behaves again: dead ones are retried by hand, the rest go out by themselves.
    destination.mode = "ok"
    destination.release.set()
    for event_id in accepted:
        found = await settled(service, event_id, seconds=30)
        for delivery in found:
            if delivery["state"] == "dead":
                for _ in range(10):  # a 503 "Storage busy" (the dispatcher wrote the same row) says retry
                    response = await service.post(
                        f"/api/admin/v1/accounts/{A}/deliveries/{delivery['id']}/retry",
                        headers=ADMIN)
                    if response.status != 503:
                        break
                    await asyncio.sleep(float(response.headers.get("Retry-After", "1")))
                assert response.status == 200, await response.text()
                await settled(service, event_id, seconds=30)
    assert set(destination.accepted) >= set(accepted)


async def test_an_endless_answer_is_not_read_to_its_end(service: TestClient) -> None:
    """A destination that answers 200 with a body that never ends: the delivery counts, the dispatcher reads
    at most MAX_RESPONSE_BYTES of it and drops the connection, and the next delivery goes out as usual."""
    sent: list[int] = []
    done = asyncio.Event()

    async def endless(request: web.Request) -> web.StreamResponse:
        await request.read()
        response = web.StreamResponse(status=200)
        await response.prepare(request)
        chunk = b"x" * 65536
        try:
            for _ in range(100_000):  # 6.5 GB if it were all read
                await response.write(chunk)
                sent.append(len(chunk))
        except (ConnectionError, RuntimeError):
            pass
        finally:
            done.set()
        return response

    app = web.Application()
    app.router.add_post("/hook", endless)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    try:
        await connect(service, "webhook", {"endpoint_url": str(server.make_url("/hook")), "secret": SECRET},
                      event_types=["page_view"])
        accepted = await _events(service, 2)
        for event_id in accepted:
            found = await settled(service, event_id, seconds=30)
            assert [d["state"] for d in found] == ["delivered"]
        await asyncio.wait_for(done.wait(), 30)
        assert sum(sent) < 64 * MAX_RESPONSE_BYTES  # the writer was cut off long before its end
    finally:
        await server.close()
