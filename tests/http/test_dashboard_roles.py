"""The dashboard's role table: what each role may do, as the admin API decides it (the page shows a person only
the controls their role allows; the API refuses the rest anyway)."""

from __future__ import annotations

from aiohttp.test_utils import TestClient

from linksvc.people.roles import GRANTS, ROLES


async def test_the_role_table_is_the_one_the_admin_api_decides_by(client: TestClient) -> None:
    response = await client.get("/dashboard/roles")
    assert response.status == 200
    table = (await response.json())["data"]
    assert list(table) == list(ROLES)
    assert {role: set(grants) for role, grants in table.items()} == {r: set(g) for r, g in GRANTS.items()}
    assert not [p for p in table["analyst"] if p.endswith(":write")]
    assert "members:write" in table["owner"] and "members:write" not in table["admin"]
    assert "links:write" in table["marketer"] and "keys:write" not in table["marketer"]
