"""The dashboard's sign-in and the admin API's acceptance of its session cookie; the page and its assets."""

from __future__ import annotations

import re
import time
from http.cookies import SimpleCookie
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from api.auth import SESSION_SECONDS, session_value
from tests.factories import ADMIN_TOKEN

SESSION = "/dashboard/session"
ACCOUNTS = "/api/admin/v1/accounts"
DASHBOARD = {"X-Requested-With": "linksvc-dashboard"}
STATIC = Path(__file__).resolve().parents[2] / "api" / "dashboard" / "static"


async def sign_in(client: TestClient, token: str = ADMIN_TOKEN) -> tuple[int, dict, SimpleCookie]:
    response = await client.post(SESSION, json={"token": token})
    cookie = SimpleCookie()
    for header in response.headers.getall("Set-Cookie", []):
        cookie.load(header)
    client.session.cookie_jar.clear()  # each test sends the cookie it means to send
    return response.status, await response.json(), cookie


def with_cookie(value: str, **headers: str) -> dict[str, str]:
    return {"Cookie": f"linksvc_admin={value}", **headers}


async def test_sign_in_sets_an_httponly_strict_cookie_that_is_not_the_token(client: TestClient) -> None:
    status, body, cookie = await sign_in(client)
    assert status == 200 and body == {"data": {"signed_in": True}}
    morsel = cookie["linksvc_admin"]
    assert morsel["httponly"] is True and morsel["samesite"] == "Strict" and morsel["path"] == "/"
    assert int(morsel["max-age"]) == SESSION_SECONDS
    assert not morsel["secure"]  # plain http here; over https it is Secure
    assert ADMIN_TOKEN not in morsel.value


async def test_the_admin_api_takes_the_cookie_with_the_dashboard_header(client: TestClient) -> None:
    _, _, cookie = await sign_in(client)
    value = cookie["linksvc_admin"].value
    response = await client.get(ACCOUNTS, headers=with_cookie(value, **DASHBOARD))
    assert response.status == 200 and "data" in await response.json()
    state = await client.get(SESSION, headers=with_cookie(value))
    assert (await state.json()) == {"data": {"signed_in": True}}


@pytest.mark.parametrize("header", [{}, {"X-Requested-With": "XMLHttpRequest"}, {"X-Requested-With": ""}],
                         ids=["missing", "other", "empty"])
async def test_the_cookie_without_the_dashboard_header_is_401(client: TestClient, header: dict[str, str]) -> None:
    _, _, cookie = await sign_in(client)
    response = await client.get(ACCOUNTS, headers=with_cookie(cookie["linksvc_admin"].value, **header))
    assert response.status == 401
    body = await response.json()
    assert set(body) == {"error", "details"} and "X-Requested-With" in body["details"]


@pytest.mark.parametrize("value", [
    session_value("another-admin-token", time.time()),
    session_value(ADMIN_TOKEN, time.time() - SESSION_SECONDS - 1),
    ADMIN_TOKEN,
    "v1.99999999999.00",
    "v1." + "9" * 5000 + ".00",
    "v1.١٢٣.00",
], ids=["other-token", "expired", "raw-token", "forged", "huge", "non-ascii-digits"])
async def test_a_cookie_the_service_did_not_issue_now_is_401(client: TestClient, value: str) -> None:
    response = await client.get(ACCOUNTS, headers=with_cookie(value, **DASHBOARD))
    assert response.status == 401
    assert set(await response.json()) == {"error", "details"}
    state = await client.get(SESSION, headers=with_cookie(value))
    assert (await state.json()) == {"data": {"signed_in": False}}


async def test_a_bearer_header_wins_over_the_cookie(client: TestClient) -> None:
    _, _, cookie = await sign_in(client)
    headers = with_cookie(cookie["linksvc_admin"].value, Authorization="Bearer wrong", **DASHBOARD)
    assert (await client.get(ACCOUNTS, headers=headers)).status == 401
    headers["Authorization"] = f"Bearer {ADMIN_TOKEN}"
    assert (await client.get(ACCOUNTS, headers=headers)).status == 200


async def test_a_wrong_token_is_401_and_sets_no_cookie(client: TestClient) -> None:
    response = await client.post(SESSION, json={"token": ADMIN_TOKEN + "x"})
    assert response.status == 401
    body = await response.json()
    assert body["details"]["field"] == "token" and set(body) == {"error", "details"}
    assert "Set-Cookie" not in response.headers


@pytest.mark.parametrize("body", [b"", b"nope", b"[]", b'{"token": ""}', b'{"token": 5}', b'{"token": "x", "y": 1}'])
async def test_a_malformed_sign_in_is_400(client: TestClient, body: bytes) -> None:
    response = await client.post(SESSION, data=body, headers={"Content-Type": "application/json"})
    assert response.status == 400
    assert set(await response.json()) == {"error", "details"}


async def test_sign_out_clears_the_cookie(client: TestClient) -> None:
    _, _, cookie = await sign_in(client)
    response = await client.delete(SESSION, headers=with_cookie(cookie["linksvc_admin"].value))
    assert response.status == 200
    cleared = SimpleCookie()
    cleared.load(response.headers["Set-Cookie"])
    assert cleared["linksvc_admin"].value == "" and cleared["linksvc_admin"]["max-age"] == "0"
    assert cleared["linksvc_admin"]["path"] == "/"


async def test_every_dashboard_path_is_the_page_with_a_strict_policy(client: TestClient) -> None:
    for path in ("/dashboard", "/dashboard/", "/dashboard/some-account/links/some-link/clicks"):
        response = await client.get(path)
        assert response.status == 200, path
        assert response.content_type == "text/html"
        assert '<script type="module" src="/dashboard/static/app.js">' in await response.text()
        policy = response.headers["Content-Security-Policy"]
        assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy
        assert response.headers["X-Content-Type-Options"] == "nosniff"


async def test_assets_are_served_with_their_types_and_revalidated(client: TestClient) -> None:
    response = await client.get("/dashboard/static/app.js")
    assert response.status == 200 and response.content_type == "text/javascript"
    again = await client.get("/dashboard/static/app.js", headers={"If-None-Match": response.headers["ETag"]})
    assert again.status == 304
    assert (await client.get("/dashboard/static/app.css")).content_type == "text/css"
    assert (await client.get("/dashboard/static/nothing.js")).status == 404
    assert (await client.get("/dashboard/static/..%2Fapp.js")).status == 404


def test_no_asset_names_another_host() -> None:
    """Every asset comes from the service: no CDN, no font or script from elsewhere."""
    for path in STATIC.iterdir():
        text = path.read_text()
        # Only the SVG namespace and example addresses (RFC 2606 names, in placeholders) may appear.
        hosts = {host for host in re.findall(r"https?://([^/\s'\"`)<>]+)", text)
                 if host != "www.w3.org" and not host.endswith(("example.com", ".example"))}
        assert not hosts, (path.name, hosts)
        for target in re.findall(r"""(?:src|href)=["']([^"']*)""", text):
            assert target.startswith(("/dashboard", "#")) and not target.startswith("//"), (path.name, target)
