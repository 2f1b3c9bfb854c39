"""OAuth connections (Google Ads): the refresh token exchanged for an access token at a local token endpoint
that answers as Google's does, the token shared by the connection's deliveries until it expires, a 401 answered
with one fresh token, a refused refresh token a failed delivery, and no secret in any read or error."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from tests.conftest import ADMIN, bearer, token_for
from tests.factories import A
from tests.http.test_forwarding import connect, settled

API = "/api/storefront/v1"
REFRESH = "1//refresh-token-kept-secret"
CLIENT_SECRET = "GOCSPX-client-secret-kept"


@dataclass
class Google:
    """A token endpoint (form-encoded refresh_token grant) and an uploadClickConversions endpoint."""

    server: TestServer | None = None
    grants: list[dict[str, str]] = field(default_factory=list)
    uploads: list[str] = field(default_factory=list)  # the bearer token each upload carried
    revoked: set[str] = field(default_factory=set)
    refuse_grant: bool = False

    def url(self, path: str) -> str:
        assert self.server is not None
        return str(self.server.make_url(path))

    async def token(self, request: web.Request) -> web.Response:
        form = dict(await request.post())
        self.grants.append({k: str(v) for k, v in form.items()})
        if self.refuse_grant or form.get("refresh_token") != REFRESH:
            return web.json_response({"error": "invalid_grant", "error_description": "Token has been expired or "
                                      "revoked."}, status=400)
        return web.json_response({"access_token": f"ya29.token-{len(self.grants)}", "expires_in": 3599,
                                  "scope": "https://www.googleapis.com/auth/adwords", "token_type": "Bearer"})

    async def upload(self, request: web.Request) -> web.Response:
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        await request.read()
        if token in self.revoked:
            return web.json_response({"error": {"code": 401, "message": "Request had invalid authentication "
                                      "credentials.", "status": "UNAUTHENTICATED"}}, status=401)
        self.uploads.append(token)
        return web.json_response({"results": [{"gclid": "g", "conversionAction": "customers/1/conversionActions/2"}]})


@pytest.fixture
async def google() -> AsyncIterator[Google]:
    fake = Google()
    app = web.Application()
    app.router.add_post("/token", fake.token)
    app.router.add_post("/{version}/customers/{tail:.*}", fake.upload)
    fake.server = TestServer(app, host="127.0.0.1")
    await fake.server.start_server()
    yield fake
    await fake.server.close()


async def _connect(service: TestClient, google: Google) -> str:
    return await connect(service, "google_ads", {
        "endpoint_url": google.url(""), "token_url": google.url("/token"), "client_id": "client-1.apps",
        "client_secret": CLIENT_SECRET, "refresh_token": REFRESH, "developer_token": "dev-token",
        "customer_id": "123-456-7890", "conversion_action_id": "55"})


async def _purchase(service: TestClient, order: str) -> str:
    response = await service.post(f"{API}/behavior/events", headers=bearer(await token_for(service, A)), json={
        "type": "PURCHASE", "customer_id": "cust-aaaa", "order_id": order, "currency": "USD", "value": 10,
        "products": [{"sku": "x"}], "click_ids": {"gclid": "Cj0KCQ-gclid"}})
    assert response.status == 202, await response.text()
    return str((await response.json())["data"]["id"])


def _delivery(found: list[dict[str, Any]]) -> dict[str, Any]:
    (delivery,) = [d for d in found if d["destination"] == "google_ads"]
    return delivery


async def test_the_refresh_token_is_exchanged_once_and_shared(service: TestClient, google: Google) -> None:
    await _connect(service, google)
    for order in ("o-1", "o-2", "o-3"):
        assert _delivery(await settled(service, await _purchase(service, order)))["state"] == "delivered"
    assert len(google.grants) == 1
    assert google.grants[0] == {"grant_type": "refresh_token", "client_id": "client-1.apps",
                                "client_secret": CLIENT_SECRET, "refresh_token": REFRESH}
    assert google.uploads == ["ya29.token-1"] * 3


async def test_a_refused_token_is_refreshed_once(service: TestClient, google: Google) -> None:
    await _connect(service, google)
    assert _delivery(await settled(service, await _purchase(service, "o-1")))["state"] == "delivered"
    google.revoked.add("ya29.token-1")  # Google expired it early
    delivery = _delivery(await settled(service, await _purchase(service, "o-2")))
    assert delivery["state"] == "delivered" and delivery["tries"] == 1
    assert google.uploads == ["ya29.token-1", "ya29.token-2"] and len(google.grants) == 2


async def test_a_revoked_refresh_token_fails_without_showing_a_secret(service: TestClient, google: Google) -> None:
    connection_id = await _connect(service, google)
    google.refuse_grant = True
    delivery = _delivery(await settled(service, await _purchase(service, "o-1")))
    assert delivery["state"] == "failed"
    assert "invalid_grant" in delivery["last_error"] and "expired or revoked" in delivery["last_error"]
    shown = await (await service.get(f"/api/admin/v1/accounts/{A}/connections/{connection_id}",
                                     headers=ADMIN)).text()
    listed = await (await service.get(f"/api/admin/v1/accounts/{A}/connections/{connection_id}/deliveries",
                                      headers=ADMIN)).text()
    for secret in (REFRESH, CLIENT_SECRET, "dev-token"):
        assert secret not in shown and secret not in listed and secret not in delivery["last_error"]
    assert google.uploads == []


async def test_a_fixed_access_token_still_works(service: TestClient, google: Google) -> None:
    await connect(service, "google_ads", {"endpoint_url": google.url(""), "access_token": "ya29.fixed",
                                          "developer_token": "dev", "customer_id": "1", "conversion_action_id": "2"})
    assert _delivery(await settled(service, await _purchase(service, "o-1")))["state"] == "delivered"
    assert google.grants == [] and google.uploads == ["ya29.fixed"]
