"""The dashboard's sign-in and the admin API's acceptance of its session cookie; the page and its assets.

Sessions are kept in the store: sign-out, expiry and a new admin token end them, on every worker process
(two apps on one database file stand for two workers) and across restarts.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import replace
from datetime import timedelta
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import DB
from linksvc.accounts.sessions import SESSION_SECONDS, is_signed_in
from linksvc.accounts.sessions import sign_in as open_session
from linksvc.app import create_app
from linksvc.clock import iso, utcnow
from linksvc.settings import Settings
from storage import dashboard_sessions as session_repo
from storage.db import dialect, fetch_all
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
    assert not morsel["secure"]  # plain http and an http public URL here
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
    "A" * 43,
    ADMIN_TOKEN,
    "v1.99999999999.00",
    "v1." + "9" * 5000 + ".00",
    "v1.١٢٣.00",
    "ÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄ",
], ids=["never-issued", "raw-token", "old-stateless-format", "huge", "non-ascii-digits", "non-ascii"])
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


async def test_a_cookie_replayed_after_sign_out_is_refused(client: TestClient) -> None:
    _, _, cookie = await sign_in(client)
    value = cookie["linksvc_admin"].value
    assert (await client.get(ACCOUNTS, headers=with_cookie(value, **DASHBOARD))).status == 200
    assert (await client.delete(SESSION, headers=with_cookie(value))).status == 200
    replayed = await client.get(ACCOUNTS, headers=with_cookie(value, **DASHBOARD))
    assert replayed.status == 401
    assert (await replayed.json())["error"] == "Invalid session"
    state = await client.get(SESSION, headers=with_cookie(value))
    assert (await state.json()) == {"data": {"signed_in": False}}
    # Signing out again, or with a cookie that names nothing, is harmless.
    assert (await client.delete(SESSION, headers=with_cookie(value))).status == 200
    assert (await client.delete(SESSION)).status == 200


async def test_signing_in_again_ends_the_session_the_browser_held(client: TestClient) -> None:
    _, _, first = await sign_in(client)
    response = await client.post(SESSION, json={"token": ADMIN_TOKEN},
                                 headers=with_cookie(first["linksvc_admin"].value))
    second = response.cookies["linksvc_admin"].value
    client.session.cookie_jar.clear()
    assert second != first["linksvc_admin"].value
    assert (await client.get(ACCOUNTS, headers=with_cookie(first["linksvc_admin"].value, **DASHBOARD))).status == 401
    assert (await client.get(ACCOUNTS, headers=with_cookie(second, **DASHBOARD))).status == 200


async def test_a_sign_out_on_one_worker_ends_the_session_on_the_others(aiohttp_client: Any,
                                                                       settings: Settings) -> None:
    first: TestClient = await aiohttp_client(create_app(settings))
    second: TestClient = await aiohttp_client(create_app(settings))  # another process on the same file
    _, _, cookie = await sign_in(first)
    value = cookie["linksvc_admin"].value
    assert (await second.get(ACCOUNTS, headers=with_cookie(value, **DASHBOARD))).status == 200
    assert (await (await second.get(SESSION, headers=with_cookie(value))).json())["data"]["signed_in"] is True
    assert (await first.delete(SESSION, headers=with_cookie(value))).status == 200
    assert (await second.get(ACCOUNTS, headers=with_cookie(value, **DASHBOARD))).status == 401
    assert (await (await second.get(SESSION, headers=with_cookie(value))).json())["data"]["signed_in"] is False


async def test_a_new_admin_token_ends_every_session(aiohttp_client: Any, settings: Settings) -> None:
    before: TestClient = await aiohttp_client(create_app(settings))
    _, _, cookie = await sign_in(before)
    value = cookie["linksvc_admin"].value
    await before.close()
    rotated = replace(settings, admin_token="rotated-admin-token-9876543210")
    after: TestClient = await aiohttp_client(create_app(rotated))
    assert (await after.get(ACCOUNTS, headers=with_cookie(value, **DASHBOARD))).status == 401
    assert (await (await after.get(SESSION, headers=with_cookie(value))).json())["data"]["signed_in"] is False
    assert await session_repo.count(after.app[DB].reader) == 0  # deleted at start, not only refused
    # A restart with the same token keeps the sessions opened under it.
    status, _, fresh = await sign_in(after, rotated.admin_token)
    assert status == 200
    again: TestClient = await aiohttp_client(create_app(rotated))
    assert (await again.get(ACCOUNTS, headers=with_cookie(fresh["linksvc_admin"].value, **DASHBOARD))).status == 200


async def test_a_start_prunes_expired_sessions_of_people_and_keeps_the_live_ones(aiohttp_client: Any,
                                                                                  settings: Settings) -> None:
    # Only people's sessions: the start has no operator session to compare the admin token's fingerprint with.
    first: TestClient = await aiohttp_client(create_app(settings))
    db, now = first.app[DB], utcnow()
    async with db.transaction() as tx:
        for name, expires in (("expired", now - timedelta(seconds=1)), ("live", now + timedelta(hours=1))):
            await session_repo.insert(tx, session_repo.SessionRecord(
                name, "", iso(now - timedelta(hours=2)), iso(expires), person_id=f"person-{name}"))
    await first.close()
    again: TestClient = await aiohttp_client(create_app(settings))
    reader = again.app[DB].reader
    assert await session_repo.get(reader, "expired") is None
    assert await session_repo.get(reader, "live") is not None


async def test_an_expired_session_is_refused_and_pruned(client: TestClient) -> None:
    db = client.app[DB]
    opened = utcnow() - timedelta(seconds=SESSION_SECONDS)
    old = await open_session(db, ADMIN_TOKEN, ADMIN_TOKEN, now=opened)
    assert await is_signed_in(db, ADMIN_TOKEN, old.session_id, now=old.expires_at - timedelta(seconds=1))
    assert not await is_signed_in(db, ADMIN_TOKEN, old.session_id, now=old.expires_at)
    assert (await client.get(ACCOUNTS, headers=with_cookie(old.session_id, **DASHBOARD))).status == 401
    state = await client.get(SESSION, headers=with_cookie(old.session_id))
    assert (await state.json()) == {"data": {"signed_in": False}}
    assert await session_repo.count(db.reader) == 1
    await sign_in(client)
    assert await session_repo.count(db.reader) == 1  # the expired row went with the next sign-in


async def test_checking_a_session_writes_nothing(client: TestClient, settings: Settings) -> None:
    _, _, cookie = await sign_in(client)
    value = cookie["linksvc_admin"].value
    watcher = sqlite3.connect(settings.db_path)
    try:
        version = watcher.execute("PRAGMA data_version").fetchone()[0]
        for _ in range(5):
            assert (await client.get(ACCOUNTS, headers=with_cookie(value, **DASHBOARD))).status == 200
            assert (await (await client.get(SESSION, headers=with_cookie(value))).json())["data"]["signed_in"]
        assert watcher.execute("PRAGMA data_version").fetchone()[0] == version
    finally:
        watcher.close()


@pytest.mark.parametrize(("public_url", "secure"), [("https://go.example.com", True), ("http://127.0.0.1:8080", False)])
async def test_the_cookie_is_secure_when_the_public_url_is_https(aiohttp_client: Any, settings: Settings,
                                                                  public_url: str, secure: bool) -> None:
    client: TestClient = await aiohttp_client(create_app(replace(settings, public_url=public_url)))
    _, _, cookie = await sign_in(client)
    assert bool(cookie["linksvc_admin"]["secure"]) is secure
    signed_out = await client.delete(SESSION, headers=with_cookie(cookie["linksvc_admin"].value))
    assert ("Secure" in signed_out.headers["Set-Cookie"]) is secure


async def test_the_store_holds_neither_the_session_id_nor_the_admin_token(client: TestClient,
                                                                         settings: Settings) -> None:
    _, _, cookie = await sign_in(client)
    value = cookie["linksvc_admin"].value
    assert len(value) >= 43  # 32 random bytes
    reader = client.app[DB].reader
    if dialect(reader) == "postgresql":  # the store is the database: every table's name and rows
        tables = [row[0] for row in await fetch_all(
            reader, "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")]
        stored = "\n".join(tables).encode()
        for table in tables:
            stored += b"".join(row[0].encode() for row in await fetch_all(reader, f'SELECT t::text FROM "{table}" t'))
        assert b"dashboard_sessions" in stored
        assert value.encode() not in stored and ADMIN_TOKEN.encode() not in stored
        found = await fetch_all(reader, "SELECT * FROM dashboard_sessions")
        assert len(found) == 1
        assert not any(value in str(column) or ADMIN_TOKEN in str(column) for column in found[0])
        return
    files = [Path(settings.db_path), Path(settings.db_path + "-wal")]
    stored = b"".join(path.read_bytes() for path in files if path.exists())
    assert b"dashboard_sessions" in stored
    assert value.encode() not in stored and ADMIN_TOKEN.encode() not in stored
    with sqlite3.connect(settings.db_path) as conn:
        rows = conn.execute("SELECT * FROM dashboard_sessions").fetchall()
    assert len(rows) == 1
    assert not any(value in str(column) or ADMIN_TOKEN in str(column) for column in rows[0])


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
        # Only the SVG namespace and example addresses (RFC 2606 names, in placeholders) may appear; text that is
        # no host name (a template's ${host}, a URL pattern's ([a-z0-9-]+\.)*) is shown to people, never loaded.
        hosts = {host for host in re.findall(r"https?://([^/\s'\"`)<>]+)", text)
                 if re.fullmatch(r"[A-Za-z0-9.-]+(:[0-9]+)?", host)
                 and host != "www.w3.org" and not host.endswith(("example.com", ".example"))}
        assert not hosts, (path.name, hosts)
        for target in re.findall(r"""(?:src|href)=["']([^"']*)""", text):
            assert target.startswith(("/dashboard", "#")) and not target.startswith("//"), (path.name, target)
