"""Helpers of the tests of people and roles: people made through the admin API, signed in through the dashboard's
session endpoint, and the headers each credential is sent with."""

from __future__ import annotations

from http.cookies import SimpleCookie
from typing import Any

from aiohttp.test_utils import TestClient

from tests.factories import ADMIN_TOKEN

ADMIN = "/api/admin/v1"
SESSION = "/dashboard/session"
OPERATOR = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
PASSWORD = "correct horse battery staple"


async def make_person(client: TestClient, email: str, account_id: str | None = None, role: str | None = None,
                      password: str = PASSWORD, name: str = "A Person") -> dict[str, Any]:
    body: dict[str, Any] = {"email": email, "name": name, "password": password}
    if account_id is not None:
        body |= {"account_id": account_id, "role": role}
    response = await client.post(f"{ADMIN}/people", json=body, headers=OPERATOR)
    assert response.status == 201, await response.text()
    person: dict[str, Any] = (await response.json())["data"]
    return person


async def sign_in(client: TestClient, email: str, password: str = PASSWORD, code: str | None = None,
                  ) -> tuple[int, dict[str, Any], str | None]:
    """(status, body, the session cookie's value or None)."""
    body: dict[str, Any] = {"email": email, "password": password}
    if code is not None:
        body["code"] = code
    response = await client.post(SESSION, json=body)
    cookie = SimpleCookie()
    for header in response.headers.getall("Set-Cookie", []):
        cookie.load(header)
    client.session.cookie_jar.clear()
    value = cookie["linksvc_admin"].value if "linksvc_admin" in cookie else None
    return response.status, await response.json(), value


def as_session(value: str) -> dict[str, str]:
    return {"Cookie": f"linksvc_admin={value}", "X-Requested-With": "linksvc-dashboard"}


def as_bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def session_of(client: TestClient, email: str, password: str = PASSWORD) -> dict[str, str]:
    status, body, value = await sign_in(client, email, password)
    assert status == 200 and value is not None, body
    return as_session(value)
