"""The dashboard's role table: what each role may do, as the admin API decides it (the page shows a person only
the controls their role allows; the API refuses the rest anyway); the QR code of a second factor being enrolled."""

from __future__ import annotations

from typing import Any

from aiohttp.test_utils import TestClient

from linksvc.people.roles import GRANTS, ROLES
from tests.factories import ADMIN_TOKEN

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


async def test_the_role_table_is_the_one_the_admin_api_decides_by(client: TestClient) -> None:
    response = await client.get("/dashboard/roles")
    assert response.status == 200
    table = (await response.json())["data"]
    assert list(table) == list(ROLES)
    assert {role: set(grants) for role, grants in table.items()} == {r: set(g) for r, g in GRANTS.items()}
    assert not [p for p in table["analyst"] if p.endswith(":write")]
    assert "members:write" in table["owner"] and "members:write" not in table["admin"]
    assert "links:write" in table["marketer"] and "keys:write" not in table["marketer"]


async def test_the_second_factor_s_uri_is_drawn_for_a_signed_in_person_only(client: TestClient) -> None:
    uri = "otpauth://totp/linksvc:ana%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=linksvc"
    refused = await client.post("/dashboard/totp-qr", json={"uri": uri})
    assert refused.status == 401 and set(await refused.json()) == {"error", "details"}
    status, body = await _post(client, "/api/admin/v1/people", {
        "email": "qr@example.com", "name": "Q", "password": "a long passphrase"}, ADMIN)
    assert status == 201, body
    signed = await client.post("/dashboard/session", json={"email": "qr@example.com", "password": "a long passphrase"})
    assert signed.status == 200
    drawn = await client.post("/dashboard/totp-qr", json={"uri": uri})
    assert drawn.status == 200 and drawn.content_type == "image/svg+xml"
    assert (await drawn.text()).lstrip().startswith("<svg")
    other = await client.post("/dashboard/totp-qr", json={"uri": "https://www.example.com/"})
    assert other.status == 400 and set(await other.json()) == {"error", "details"}


async def _post(client: TestClient, path: str, body: dict[str, str], headers: dict[str, str]) -> tuple[int, Any]:
    response = await client.post(path, json=body, headers=headers)
    return response.status, await response.json()
