"""Meta against a local server answering Meta's documented bodies: a refused event, a 200 that received none,
a rate limit, a success; a website event carrying its click's browser; an event with no customer information
(which the server refuses as Meta does) skipped before it is sent; the connection test."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from linksvc.forwarding.versions import default_version
from linksvc.jsoncodec import loads
from tests.conftest import ADMIN
from tests.http.test_forwarding import ADMIN_API, connect, purchase, send, settled

FIXTURES = Path(__file__).parents[2] / "fixtures" / "vendors" / "meta"
UA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36"


def recorded(name: str) -> tuple[int, Any]:
    case = json.loads((FIXTURES / f"{name}.json").read_text())
    return case["status"], case["body"]


def refusal(payload: Any) -> tuple[int, Any] | None:
    """What Meta refuses whatever the script says: an event whose user_data holds no customer information
    parameter ("You must provide at least one of the following user_data parameters")."""
    for server_event in (payload or {}).get("data") or []:
        if not server_event.get("user_data"):
            return recorded("refused_no_customer_information")
    return None


@dataclass
class GraphApi:
    """A server that records what it receives and answers from a script of (status, body), then success."""

    server: TestServer
    received: list[dict[str, Any]] = field(default_factory=list)
    script: list[tuple[int, Any]] = field(default_factory=list)

    def url(self) -> str:
        return str(self.server.make_url("/graph"))


@pytest.fixture
async def graph() -> AsyncIterator[GraphApi]:
    holder: list[GraphApi] = []

    async def handle(request: web.Request) -> web.Response:
        api = holder[0]
        api.received.append({"path": request.path, "query": dict(request.query), "json": loads(await request.read())})
        payload = api.received[-1]["json"]
        status, body = refusal(payload) or (api.script.pop(0) if api.script else recorded("success"))
        return web.json_response(body, status=status)

    app = web.Application()
    app.router.add_route("POST", "/{tail:.*}", handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    holder.append(GraphApi(server))
    yield holder[0]
    await server.close()


async def meta_connection(service: TestClient, graph: GraphApi, **config: Any) -> str:
    return await connect(service, "meta", {"endpoint_url": graph.url(), "pixel_id": "1234", "access_token": "EAAB",
                                           **config})


async def test_a_success_is_delivered_with_metas_receipt(service: TestClient, graph: GraphApi) -> None:
    await meta_connection(service, graph, default_country_code="57")
    event_id = await send(service, purchase(phone="300 123 4567"))
    [delivery] = await settled(service, event_id)
    assert (delivery["state"], delivery["tries"], delivery["last_status"]) == ("delivered", 1, 200)
    [request] = graph.received
    assert request["path"] == f"/graph/{default_version('meta')}/1234/events"
    assert request["query"] == {"access_token": "EAAB"}
    [server_event] = request["json"]["data"]
    assert server_event["event_name"] == "Purchase" and server_event["event_id"] == "order-o-1"
    assert "user_data" in server_event and server_event["action_source"] == "other"  # no click was recorded


async def test_a_refused_event_fails_with_metas_code(service: TestClient, graph: GraphApi) -> None:
    await meta_connection(service, graph)
    graph.script = [recorded("refused_missing_required_parameter")]
    event_id = await send(service, purchase())
    [delivery] = await settled(service, event_id)
    assert (delivery["state"], delivery["tries"], delivery["last_status"]) == ("failed", 1, 400)
    assert delivery["last_error"].startswith("(#100) Invalid parameter: Server-side API parameter error")
    assert "[code 100, subcode 2804019, fbtrace_id AbCdEfGhIjKlMnOpQrStUvW]" in delivery["last_error"]
    await asyncio.sleep(0.1)
    assert len(graph.received) == 1  # not retried


async def test_a_200_that_received_nothing_fails(service: TestClient, graph: GraphApi) -> None:
    await meta_connection(service, graph)
    graph.script = [(200, {"events_received": 0, "messages": [], "fbtrace_id": "Tr4ce"})]
    event_id = await send(service, purchase())
    [delivery] = await settled(service, event_id)
    assert (delivery["state"], delivery["last_status"]) == ("failed", 200)
    assert delivery["last_error"] == "events_received 0 of 1: no message, fbtrace_id Tr4ce"


async def test_a_rate_limit_is_retried_then_delivered(service: TestClient, graph: GraphApi) -> None:
    await meta_connection(service, graph)
    graph.script = [recorded("rate_limit_ad_account_613"), recorded("server_error_transient_2")]
    event_id = await send(service, purchase())
    [delivery] = await settled(service, event_id)
    assert (delivery["state"], delivery["tries"], delivery["last_status"]) == ("delivered", 3, 200)
    assert len(graph.received) == 3 and len({json.dumps(r["json"]) for r in graph.received}) == 1


async def test_an_expired_token_fails_for_a_person_to_fix(service: TestClient, graph: GraphApi) -> None:
    await meta_connection(service, graph)
    graph.script = [recorded("auth_invalid_token_190")]
    event_id = await send(service, purchase())
    [delivery] = await settled(service, event_id)
    assert (delivery["state"], delivery["tries"]) == ("failed", 1)
    assert "[code 190, subcode 460" in delivery["last_error"] and "system-user token" in delivery["last_error"]


async def test_a_website_event_carries_its_clicks_browser(service: TestClient, graph: GraphApi) -> None:
    response = await service.post(f"{ADMIN_API}/links", headers=ADMIN, json={
        "code": "latte", "kind": "campaign", "destination_url": "https://shop.example/latte"})
    assert response.status == 201, await response.text()
    clicked = await service.get("/latte", headers={"User-Agent": UA}, allow_redirects=False)
    assert clicked.status == 302
    tracking_id = dict(p.split("=", 1) for p in clicked.headers["Location"].split("?", 1)[1].split("&"))["tracking_id"]
    await meta_connection(service, graph)
    event = purchase(click_ids={"fbp": "fb.1.1.2"})
    event["attribution"] = {**event["attribution"], "tracking_id": tracking_id}
    deadline = asyncio.get_running_loop().time() + 5
    while True:  # clicks are written in batches: wait until this one is
        event_id = await send(service, {**event, "order_id": f"o-{len(graph.received)}"})
        [delivery] = await settled(service, event_id)
        server_event = graph.received[-1]["json"]["data"][0]
        if server_event["action_source"] == "website" or asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.05)
    assert delivery["state"] == "delivered"
    assert server_event["action_source"] == "website"
    assert server_event["user_data"]["client_user_agent"] == UA and server_event["user_data"]["fbp"] == "fb.1.1.2"
    assert server_event["event_source_url"].startswith("https://shop.example/latte")


async def test_the_connection_test_sends_the_test_event_code(service: TestClient, graph: GraphApi) -> None:
    connection = await meta_connection(service, graph, test_event_code="TEST4242")
    response = await service.post(f"{ADMIN_API}/connections/{connection}/test", headers=ADMIN)
    assert response.status == 200, await response.text()
    assert (await response.json())["data"] == {
        "outcome": "delivered", "status": 200, "message": "events_received 1, fbtrace_id AbCdEfGhIjKlMnOpQrStUvW"}
    [request] = graph.received
    assert request["json"]["test_event_code"] == "TEST4242" and request["json"]["data"][0]["event_name"] == "Purchase"


async def test_the_connection_test_is_not_sent_without_a_test_event_code(service: TestClient,
                                                                          graph: GraphApi) -> None:
    connection = await meta_connection(service, graph)
    response = await service.post(f"{ADMIN_API}/connections/{connection}/test", headers=ADMIN)
    data = (await response.json())["data"]
    assert data["outcome"] == "not_sent" and "test_event_code" in data["message"]
    assert graph.received == []


async def test_an_event_without_customer_information_is_skipped_not_refused(service: TestClient,
                                                                           graph: GraphApi) -> None:
    await meta_connection(service, graph)
    # A customer the account does not know, no email, phone or click ids, no click: nothing for user_data.
    event_id = await send(service, purchase(customer_id="cust-unknown"))
    [delivery] = await settled(service, event_id)
    assert (delivery["state"], delivery["tries"], delivery["last_status"]) == ("skipped", 0, None)
    assert "no customer information" in delivery["reason"] and "user_data" in delivery["reason"]
    assert graph.received == []
    # The same event with the customer's email carries it, and Meta takes it.
    event_id = await send(service, purchase("o-2", customer_id="cust-unknown", email="ana@example.com"))
    [delivery] = await settled(service, event_id)
    assert delivery["state"] == "delivered"
    assert list(graph.received[0]["json"]["data"][0]["user_data"]) == ["em"]
