"""Google Ads deliveries against a local server that answers as Google does: the upload at the current API
version with a token from the refresh token, a 200 whose partialFailureError refuses the click (failed, with
the code), one that says "too recent" (retried), a 403 (failed), a 503 (retried), and the connection test's
validateOnly upload."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from api.appkeys import DB
from linksvc.app import create_app
from linksvc.forwarding.versions import default_version
from linksvc.seed import load_seed
from linksvc.settings import Settings
from tests.conftest import ADMIN, service_server
from tests.factories import ADMIN_TOKEN, two_accounts
from tests.http.test_forwarding import ADMIN_API, connect, purchase, send, settled
from tests.vendor_fixtures import answer


def _fixture(name: str) -> tuple[int, Any]:
    return answer("google_ads", name)


@dataclass
class Google:
    """A token endpoint and an uploadClickConversions endpoint answering from a script (then success)."""

    server: TestServer | None = None
    uploads: list[dict[str, Any]] = field(default_factory=list)
    script: list[tuple[int, dict[str, Any]]] = field(default_factory=list)

    def url(self, path: str) -> str:
        assert self.server is not None
        return str(self.server.make_url(path))

    async def token(self, request: web.Request) -> web.Response:
        await request.post()
        return web.json_response({"access_token": "ya29.fresh", "expires_in": 3599, "token_type": "Bearer"})

    async def upload(self, request: web.Request) -> web.Response:
        self.uploads.append({"path": request.path, "headers": dict(request.headers), "json": await request.json()})
        status, body = self.script.pop(0) if self.script else _fixture("upload_success")
        return web.json_response(body, status=status)


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


@pytest.fixture
async def service(aiohttp_client: Any, tmp_path: Path, settings: Settings) -> TestClient:
    """A retry waits a minute here: a retried delivery stays pending with its first try counted."""
    settings = Settings(db_path=str(tmp_path / "gads.db"), database_url=settings.database_url,
                        admin_token=ADMIN_TOKEN, load_demo=False,
                        allow_private_destinations=True, db_synchronous="NORMAL", delivery_backoff_seconds=60,
                        delivery_max_tries=3, delivery_timeout_seconds=2)
    client: TestClient = await aiohttp_client(service_server(create_app(settings)))
    await load_seed(client.app[DB], two_accounts(), allow_private=True)
    return client


async def _connect(service: TestClient, google: Google, **config: str) -> str:
    return await connect(service, "google_ads", {
        "endpoint_url": google.url(""), "token_url": google.url("/token"), "client_id": "client-1.apps",
        "client_secret": "GOCSPX-secret", "refresh_token": "1//refresh", "customer_id": "123-456-7890",
        "conversion_action_id": "55", **config})


async def _delivery(service: TestClient, google: Google, answer: tuple[int, dict[str, Any]] | None = None,
                    ) -> dict[str, Any]:
    if answer is not None:
        google.script.append(answer)
    event_id = await send(service, purchase(click_ids={"gclid": "Cj0-native"}))
    found = await settled(service, event_id, lambda ds: all(d["state"] != "pending" or d["tries"] >= 1 for d in ds))
    (delivery,) = [d for d in found if d["destination"] == "google_ads"]
    return delivery


async def test_an_accepted_upload_goes_to_the_current_version(service: TestClient, google: Google) -> None:
    await _connect(service, google)
    delivery = await _delivery(service, google)
    assert (delivery["state"], delivery["tries"]) == ("delivered", 1)
    (upload,) = google.uploads
    assert upload["path"] == f"/{default_version('google_ads')}/customers/1234567890:uploadClickConversions"
    assert upload["headers"]["Authorization"] == "Bearer ya29.fresh"
    assert upload["json"]["partialFailure"] is True and "validateOnly" not in upload["json"]
    assert upload["json"]["conversions"][0]["gclid"] == "Cj0-native"


async def test_a_configured_version_is_used(service: TestClient, google: Google) -> None:
    await _connect(service, google, api_version="v25")
    assert (await _delivery(service, google))["state"] == "delivered"
    assert google.uploads[0]["path"].startswith("/v25/customers/1234567890:")


async def test_a_click_google_cannot_find_fails_with_its_code(service: TestClient, google: Google) -> None:
    await _connect(service, google)
    delivery = await _delivery(service, google, _fixture("partial_failure_event_not_found"))
    assert (delivery["state"], delivery["tries"], delivery["last_status"]) == ("failed", 1, 200)
    assert "conversionUploadError: EVENT_NOT_FOUND at conversions[0]" in delivery["last_error"]
    assert "request id aBcDeFgHiJkLmNoPqRsT12" in delivery["last_error"]
    assert len(google.uploads) == 1


async def test_a_click_too_recent_is_tried_again_later(service: TestClient, google: Google) -> None:
    await _connect(service, google)
    delivery = await _delivery(service, google, _fixture("partial_failure_too_recent_event"))
    assert (delivery["state"], delivery["tries"], delivery["last_status"]) == ("pending", 1, 200)
    assert "TOO_RECENT_EVENT" in delivery["last_error"]


async def test_a_refused_permission_fails(service: TestClient, google: Google) -> None:
    await _connect(service, google)
    delivery = await _delivery(service, google, _fixture("permission_denied_developer_token_403"))
    assert (delivery["state"], delivery["tries"], delivery["last_status"]) == ("failed", 1, 403)
    assert "PERMISSION_DENIED" in delivery["last_error"] and "DEVELOPER_TOKEN_NOT_APPROVED" in delivery["last_error"]


async def test_an_unavailable_google_is_tried_again(service: TestClient, google: Google) -> None:
    await _connect(service, google)
    delivery = await _delivery(service, google, _fixture("unavailable_503"))
    assert (delivery["state"], delivery["tries"], delivery["last_status"]) == ("pending", 1, 503)
    assert "UNAVAILABLE" in delivery["last_error"]


async def _test(service: TestClient, connection_id: str) -> dict[str, Any]:
    response = await service.post(f"{ADMIN_API}/connections/{connection_id}/test", headers=ADMIN)
    assert response.status == 200, await response.text()
    return dict((await response.json())["data"])


async def test_the_connection_test_validates_without_uploading(service: TestClient, google: Google) -> None:
    connection_id = await _connect(service, google)
    google.script.append((200, {"partialFailureError": {"code": 3, "message": "m", "details": [
        {"@type": "type.googleapis.com/google.ads.googleads.v26.errors.GoogleAdsFailure", "requestId": "r-1",
         "errors": [{"errorCode": {"conversionUploadError": "UNPARSEABLE_GCLID"}, "message": "The imported gclid "
                     "could not be decoded.", "location": {"fieldPathElements": [
                         {"fieldName": "conversions", "index": 0}, {"fieldName": "gclid"}]}}]}]}}))
    answer = await _test(service, connection_id)
    assert (answer["outcome"], answer["status"]) == ("delivered", 200)
    assert "validateOnly" in answer["message"] and "UNPARSEABLE_GCLID" in answer["message"]
    (upload,) = google.uploads
    assert upload["json"]["validateOnly"] is True and upload["json"]["partialFailure"] is True
    assert upload["json"]["conversions"][0]["conversionAction"] == "customers/1234567890/conversionActions/55"
    # A customer the OAuth user may not reach: the test says so.
    google.script.append(_fixture("permission_denied_user_403"))
    answer = await _test(service, connection_id)
    assert (answer["outcome"], answer["status"]) == ("failed", 403)
    assert "USER_PERMISSION_DENIED" in answer["message"]


async def test_the_connection_test_names_the_missing_credentials(service: TestClient, google: Google) -> None:
    connection_id = await connect(service, "google_ads", {"endpoint_url": google.url(""), "customer_id": "1",
                                                          "conversion_action_id": "2", "client_id": "c"})
    answer = await _test(service, connection_id)
    assert answer["outcome"] == "not_sent"
    assert "no access_token" in answer["message"] and "client_secret, refresh_token" in answer["message"]
    assert google.uploads == []
