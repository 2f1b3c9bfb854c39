"""The role table of issue 35, as ``linksvc.people.roles`` holds it, and every admin route's declared permission."""

from __future__ import annotations

import pytest

from api.admin import ENDPOINTS
from linksvc.people import roles
from linksvc.people.roles import AREAS, GRANTS, ROLES, grants, within

WRITABLE = {a for a in AREAS if a not in ("reports", "audit", "events")}


def writes(role: str) -> set[str]:
    return {p.split(":")[0] for p in GRANTS[role] if p.endswith(":write")}


def test_the_five_roles() -> None:
    assert ROLES == ("owner", "admin", "marketer", "analyst", "developer")


def test_owner_does_everything() -> None:
    assert writes("owner") == WRITABLE
    assert grants("owner", "members:write") and grants("owner", "audit:read")


def test_admin_does_all_but_members() -> None:
    assert writes("admin") == WRITABLE - {"members"}
    assert not grants("admin", "members:write") and grants("admin", "members:read")


def test_marketer_writes_links_only() -> None:
    assert writes("marketer") == {"links"}
    assert grants("marketer", "reports:read") and not grants("marketer", "audit:read")


def test_analyst_reads_only() -> None:
    assert writes("analyst") == set()
    assert all(grants("analyst", f"{a}:read") for a in AREAS if a != "audit")


def test_developer_writes_keys_connections_deliveries() -> None:
    assert writes("developer") == {"keys", "connections", "deliveries"}


@pytest.mark.parametrize("role", ROLES)
def test_nobody_is_granted_the_operators_or_self_routes_by_a_role(role: str) -> None:
    assert not grants(role, roles.OPERATOR) and not grants(role, roles.SELF)


def test_a_token_role_is_within_the_persons() -> None:
    assert all(within(r, "owner") for r in ROLES)
    assert within("analyst", "marketer") and within("analyst", "developer")
    assert not within("marketer", "developer") and not within("developer", "marketer")
    assert not within("admin", "marketer") and not within("owner", "admin")


def test_every_admin_route_declares_a_known_permission() -> None:
    bad = [f"{e.method} {e.path}: {e.permission!r}" for e in ENDPOINTS
           if e.security == "admin" and not (e.permission and roles.is_permission(e.permission))]
    assert not bad
