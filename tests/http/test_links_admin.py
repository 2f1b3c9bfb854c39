"""Links in the admin API beyond create/read/update/delete: UTM editing, QR codes; and the app
association files served from the configured apps."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import DB
from linksvc.links.qr import qr_image
from linksvc.seed import load_seed
from tests.conftest import ADMIN
from tests.factories import A, B, ids, two_accounts

LINK = f"/api/admin/v1/accounts/{A}/links/{ids(A)['links']}"
FINGERPRINT = ":".join(["AB"] * 32)


async def edit(client: TestClient, body: dict[str, Any]) -> tuple[int, Any]:
    response = await client.patch(f"{LINK}/utm", json=body, headers=ADMIN)
    return response.status, await response.json()


async def test_editing_utm_changes_only_utm_parameters(seeded: TestClient) -> None:
    await seeded.patch(LINK, json={"destination_url": "https://shop.example/p?x=1&utm_source=old&b=%7E+2#top"},
                       headers=ADMIN)
    status, body = await edit(seeded, {"utm_source": "news letter", "utm_medium": "email"})
    assert status == 200
    assert body["data"]["destination_url"] == ("https://shop.example/p?x=1&utm_source=news%20letter&b=%7E+2"
                                               "&utm_medium=email#top")
    status, body = await edit(seeded, {"utm_source": None, "utm_medium": ""})
    assert body["data"]["destination_url"] == "https://shop.example/p?x=1&b=%7E+2#top"
    assert body["data"]["kind"] == "email" and body["data"]["code"] == "lnkaaaa"


@pytest.mark.parametrize("body", [{"utm_id": "x"}, {"utm_source": 5}, {"destination_url": "https://x.example/"}])
async def test_utm_edit_refuses_other_fields(seeded: TestClient, body: dict[str, Any]) -> None:
    status, answer = await edit(seeded, body)
    assert status == 400 and set(answer) == {"error", "details"}


async def test_utm_edit_of_another_accounts_link_is_404(seeded: TestClient) -> None:
    response = await seeded.patch(f"/api/admin/v1/accounts/{A}/links/{ids(B)['links']}/utm",
                                  json={"utm_source": "x"}, headers=ADMIN)
    assert response.status == 404


@pytest.mark.parametrize(("kind", "content_type", "magic"), [("svg", "image/svg+xml", b"<svg"),
                                                            ("png", "image/png", b"\x89PNG")])
async def test_qr_code_of_the_short_link(seeded: TestClient, kind: str, content_type: str, magic: bytes) -> None:
    response = await seeded.get(f"{LINK}/qr?format={kind}&scale=4", headers=ADMIN)
    assert response.status == 200
    assert response.content_type == content_type
    image = await response.read()
    assert image.startswith(magic)
    # It encodes the published short URL of the link (LINKSVC_PUBLIC_URL + code), nothing else.
    assert image == qr_image("http://127.0.0.1:8080/lnkaaaa", kind, 4)[0]


@pytest.mark.parametrize("kind", ["svg", "png"])
async def test_qr_media_type_is_the_documented_one(seeded: TestClient, kind: str) -> None:
    # Found by the fuzz run: the document promised JSON, the endpoint answers with an image.
    document = await (await seeded.get("/api/admin/v1/openapi.json")).json()
    documented = document["paths"]["/accounts/{account_id}/links/{id}/qr"]["get"]["responses"]["200"]["content"]
    response = await seeded.get(f"{LINK}/qr?format={kind}", headers=ADMIN)
    assert response.status == 200
    assert response.content_type in documented
    assert set(documented) == {"image/svg+xml", "image/png"}


async def test_qr_refuses_unknown_formats(seeded: TestClient) -> None:
    assert (await seeded.get(f"{LINK}/qr?format=gif", headers=ADMIN)).status == 400


@pytest.fixture
async def apps(client: TestClient) -> TestClient:
    doc = two_accounts()
    doc["accounts"][0]["links"].append(
        {"id": "aaaaaaaa-0008-4000-8000-000000000009", "code": "app-one", "kind": "campaign",
         "destination_url": "https://shop.example/",
         "android": {"package": "com.democoffee.app", "sha256_cert_fingerprints": [FINGERPRINT]},
         "ios": {"app_store_id": "1", "bundle_id": "com.democoffee.app", "team_id": "ABCDE12345"}})
    doc["accounts"][1]["links"].append(
        {"id": "bbbbbbbb-0008-4000-8000-000000000009", "code": "app-two", "kind": "campaign",
         "destination_url": "https://bakery.example/", "android": {"package": "com.bakery.app"}})
    await load_seed(client.app[DB], doc, allow_private=True)
    return client


async def test_apple_app_site_association(apps: TestClient) -> None:
    response = await apps.get("/.well-known/apple-app-site-association", allow_redirects=False)
    assert response.status == 200 and response.content_type == "application/json"
    assert await response.json() == {"applinks": {"apps": [], "details": [
        {"appIDs": ["ABCDE12345.com.democoffee.app"], "components": [{"/": "*"}],
         "appID": "ABCDE12345.com.democoffee.app", "paths": ["*"]}]}}


async def test_asset_links_list_packages_with_fingerprints(apps: TestClient) -> None:
    response = await apps.get("/.well-known/assetlinks.json", allow_redirects=False)
    assert response.status == 200 and response.content_type == "application/json"
    assert await response.json() == [{
        "relation": ["delegate_permission/common.handle_all_urls"],
        "target": {"namespace": "android_app", "package_name": "com.democoffee.app",
                   "sha256_cert_fingerprints": [FINGERPRINT]}}]
