"""TikTok and GA4 against local servers answering as the vendors do: refusals inside HTTP 200, retries on
TikTok's rate-limit and system codes, GA4 events too old to send, and each vendor's connection test."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from linksvc.jsoncodec import dumpb, loads
from tests.conftest import ADMIN
from tests.http.test_forwarding import ADMIN_API, connect, purchase, send, settled

OK = {"code": 0, "message": "OK", "request_id": "req-ok", "data": {}}


@dataclass
class Vendor:
    """Records what it receives; answers from ``answers`` (status, JSON body) in turn, then the last again."""

    server: TestServer
    answers: list[tuple[int, Any]] = field(default_factory=list)
    received: list[dict[str, Any]] = field(default_factory=list)

    def url(self, path: str) -> str:
        return str(self.server.make_url(path))


@pytest.fixture
async def vendor() -> AsyncIterator[Vendor]:
    holder: list[Vendor] = []

    async def handle(request: web.Request) -> web.Response:
        me = holder[0]
        body = await request.read()
        me.received.append({"path": request.path, "query": dict(request.query), "json": loads(body) if body else None})
        status, answer = me.answers.pop(0) if len(me.answers) > 1 else me.answers[0]
        return web.Response(status=status, body=b"" if answer is None else dumpb(answer),
                            content_type="application/json")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    holder.append(Vendor(server, [(200, OK)]))
    yield holder[0]
    await server.close()


def tiktok_config(vendor: Vendor, **more: Any) -> dict[str, Any]:
    return {"endpoint_url": vendor.url("/tt"), "pixel_code": "PX1", "access_token": "tt-token", **more}


async def test_tiktok_refusal_inside_a_200_fails_with_the_vendor_code(service: TestClient, vendor: Vendor) -> None:
    vendor.answers = [(200, {"code": 40002, "message": "Invalid value for event_id: not a valid string.",
                             "request_id": "2023031413"})]
    await connect(service, "tiktok", tiktok_config(vendor))
    [delivery] = await settled(service, await send(service, purchase()))
    assert (delivery["state"], delivery["tries"], delivery["last_status"]) == ("failed", 1, 200)
    assert "TikTok code 40002" in delivery["last_error"] and "2023031413" in delivery["last_error"]
    assert len(vendor.received) == 1  # refused data is not sent again


@pytest.mark.parametrize("code", [50000, 40100])
async def test_tiktok_system_errors_and_rate_limits_are_retried(service: TestClient, vendor: Vendor,
                                                                code: int) -> None:
    vendor.answers = [(200, {"code": code, "message": "later", "request_id": "r1"}), (200, OK)]
    await connect(service, "tiktok", tiktok_config(vendor))
    [delivery] = await settled(service, await send(service, purchase()))
    assert (delivery["state"], delivery["tries"]) == ("delivered", 2)
    assert len(vendor.received) == 2


async def test_tiktok_retries_end_dead_with_the_last_code(service: TestClient, vendor: Vendor) -> None:
    vendor.answers = [(200, {"code": 50000, "message": "System error", "request_id": "r9"})]
    await connect(service, "tiktok", tiktok_config(vendor))
    [delivery] = await settled(service, await send(service, purchase()))
    assert (delivery["state"], delivery["tries"]) == ("dead", 3)  # the test service gives up after 3 tries
    assert "TikTok code 50000: System error" in delivery["last_error"]


async def test_a_ga4_event_older_than_72_hours_is_skipped(service: TestClient, vendor: Vendor) -> None:
    connection_id = await connect(service, "ga4", {"endpoint_url": vendor.url("/g"), "measurement_id": "G-1",
                                                   "api_secret": "s"})
    old = (datetime.now(UTC) - timedelta(hours=73)).isoformat().replace("+00:00", "Z")
    fresh = (datetime.now(UTC) - timedelta(hours=71)).isoformat().replace("+00:00", "Z")
    analytics = {"client_id": "555.666"}
    [skipped] = await settled(service, await send(service, purchase("o-old", issued_at=old, analytics=analytics)))
    assert skipped["state"] == "skipped" and skipped["tries"] == 0
    assert "73 hours old" in skipped["reason"] and "72 hours" in skipped["reason"]
    [sent] = await settled(service, await send(service, purchase("o-new", issued_at=fresh, analytics=analytics)))
    assert sent["state"] == "delivered"
    assert [r["json"]["events"][0]["params"]["transaction_id"] for r in vendor.received] == ["o-new"]
    listed = await service.get(f"{ADMIN_API}/connections/{connection_id}/deliveries?state=skipped", headers=ADMIN)
    assert [d["id"] for d in (await listed.json())["data"]] == [skipped["id"]]
    metrics = await (await service.get("/metrics")).text()
    assert 'linksvc_deliveries{destination="ga4",state="skipped"} 1.0' in metrics


async def test_ga4_connection_test_reports_the_validation_messages(service: TestClient, vendor: Vendor) -> None:
    vendor.answers = [(200, {"validationMessages": [{
        "fieldPath": "events", "validationCode": "NAME_INVALID",
        "description": "Event at index: [0] has invalid name [_badEventName]. Names must start with an "
                       "alphabetic character."}]})]
    connection_id = await connect(service, "ga4", {"endpoint_url": vendor.url("/g"), "measurement_id": "G-1",
                                                   "api_secret": "s"})
    response = await service.post(f"{ADMIN_API}/connections/{connection_id}/test", headers=ADMIN)
    assert response.status == 200, await response.text()
    result = (await response.json())["data"]
    assert result["outcome"] == "failed" and result["status"] == 200
    assert "NAME_INVALID at events" in result["message"]
    [request] = vendor.received
    assert request["path"] == "/g/debug/mp/collect" and request["query"]["measurement_id"] == "G-1"

    vendor.answers = [(200, {"validationMessages": []})]
    response = await service.post(f"{ADMIN_API}/connections/{connection_id}/test", headers=ADMIN)
    assert (await response.json())["data"]["outcome"] == "delivered"


async def test_tiktok_connection_test_sends_the_test_event_code(service: TestClient, vendor: Vendor) -> None:
    connection_id = await connect(service, "tiktok", tiktok_config(vendor, test_event_code="TEST42"))
    response = await service.post(f"{ADMIN_API}/connections/{connection_id}/test", headers=ADMIN)
    assert (await response.json())["data"] == {"outcome": "delivered", "status": 200, "message": None}
    [request] = vendor.received
    assert request["path"] == "/tt/open_api/v1.3/event/track/"
    assert request["json"]["test_event_code"] == "TEST42"

    without = await connect(service, "tiktok", tiktok_config(vendor))
    response = await service.post(f"{ADMIN_API}/connections/{without}/test", headers=ADMIN)
    result = (await response.json())["data"]
    assert result["outcome"] == "not_sent" and "test_event_code" in result["message"]
    assert len(vendor.received) == 1
