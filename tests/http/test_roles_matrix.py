"""Every route of the admin API's OpenAPI document, for every role, on both stores: allowed, 403 or 404.

The table is made from the document: each operation's ``x-permission`` (which ``api.routing.Endpoint`` declares
and the document publishes) and the role table of ``linksvc.people.roles`` give the expected answer, so a new
route is walked as soon as it is added, and one without a declared permission fails here.

- A member whose role grants the permission in their account is *allowed*: whatever the handler then answers
  (200, 400 for the empty body sent, 404 for the made-up object ids), it is not 401, 403 or the 404 of an
  account they cannot see.
- A member whose role does not grant it gets 403.
- The same route of another account (B, where nobody here is a member) is 404 ``Account not found``, as an
  account that does not exist: a person learns nothing of other accounts.
- Routes of the operator (accounts, people) are 403 for every person; ``self`` routes take a person's session,
  and are 403 for the operator and for personal tokens.
- A personal token with a role is held to that role in its own account and is 404 in any other.
"""

from __future__ import annotations

import re
from typing import Any

from aiohttp.test_utils import TestClient

from linksvc.people import roles
from tests.factories import A, B
from tests.people import ADMIN, OPERATOR, as_bearer, make_person, session_of

PARAM = re.compile(r"\{(\w+)\}")


def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    found = []
    for path, ops in document["paths"].items():
        for method, op in ops.items():
            if op.get("security") != [{"admin": []}]:
                continue
            assert op.get("x-permission"), f"{method.upper()} {path} declares no permission"
            assert roles.is_permission(op["x-permission"]), f"{method.upper()} {path}: {op['x-permission']}"
            found.append((method.upper(), path, op))
    return found


def concrete(path: str, account_id: str) -> str:
    return PARAM.sub(lambda m: account_id if m.group(1) == "account_id" else "nothing-here-0000", path)


async def call(client: TestClient, method: str, path: str, op: dict[str, Any], account_id: str,
               headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
    url = ADMIN + concrete(path, account_id)
    body = {} if "requestBody" in op else None
    response = await client.request(method, url, json=body, headers=headers)
    if response.content_type == "text/event-stream":  # a stream (the live feed) was opened: it is allowed
        response.close()
        return response.status, {}
    text = await response.read()
    try:
        payload = await response.json(content_type=None) if text and text[:1] == b"{" else {}
    except ValueError:
        payload = {}
    return response.status, payload


def verdict(status: int, payload: dict[str, Any]) -> str:
    if status == 403:
        return "403"
    if status == 404 and payload.get("error") == "Account not found":
        return "404"
    if status == 401:
        return "401"
    return "allowed"


def expected(permission: str, role: str | None, own_account: bool, is_token: bool = False) -> str:
    """role None: the operator."""
    if role is None:
        return "403" if permission == roles.SELF else "allowed"
    if permission == roles.OPERATOR:
        return "403"
    if permission == roles.SELF:
        return "403" if is_token else "allowed"
    if not own_account:
        return "404"
    return "allowed" if roles.grants(role, permission) else "403"


async def test_every_admin_route_for_every_role(seeded: TestClient) -> None:
    client = seeded
    document = await (await client.get(f"{ADMIN}/openapi.json")).json()
    ops = operations(document)
    assert len(ops) > 100
    people: dict[str, dict[str, str]] = {}
    for role in roles.ROLES:
        await make_person(client, f"{role}@example.com", A, role)
        people[role] = await session_of(client, f"{role}@example.com")
    # an owner's personal token limited to analyst, and a developer's with their full role
    tokens = {}
    for holder, role in (("owner", "analyst"), ("developer", "developer")):
        response = await client.post(f"{ADMIN}/people/me/tokens", json={"account_id": A, "role": role},
                                     headers=people[holder])
        assert response.status == 201, await response.text()
        tokens[role] = as_bearer((await response.json())["data"]["token"])

    mismatches = []
    seen: dict[str, int] = {}
    for method, path, op in ops:
        permission = op["x-permission"]
        scoped = "{account_id}" in path
        accounts = (A, B) if scoped else (A,)
        cases: list[tuple[str, str | None, dict[str, str], bool]] = [("operator", None, OPERATOR, False)]
        cases += [(role, role, headers, False) for role, headers in people.items()]
        cases += [(f"token:{role}", role, headers, True) for role, headers in tokens.items()]
        for label, role, headers, is_token in cases:
            for account in accounts:
                # the operator's walk uses an account that does not exist: it may change nothing of A's
                target = "ghost-account" if role is None and scoped else account
                status, payload = await call(client, method, path, op, target, headers)
                want = expected(permission, role, account == A, is_token)
                got = verdict(status, payload)
                if role is None and want == "allowed" and got == "404":
                    got = "allowed"  # the ghost account is not found: the operator got past the check
                seen[got] = seen.get(got, 0) + 1
                if got != want:
                    mismatches.append(f"{method} {path} [{permission}] as {label} in {account[:8]}: "
                                      f"want {want}, got {status} {payload.get('error')}")
    assert not mismatches, "\n".join(mismatches)
    assert seen["allowed"] > 300 and seen["403"] > 300 and seen["404"] > 300, seen
