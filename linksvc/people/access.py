"""Who calls the admin API and what they may do there: the one check of every admin route.

Three credentials reach the admin API (``api.auth``): the operator token (``LINKSVC_ADMIN_TOKEN``) as a bearer
token, a personal access token (``lpt_...``) as a bearer token, and a dashboard session cookie, opened with the
operator token or by a person's sign-in. Each becomes an :class:`Actor`; :func:`authorize` then decides, from
the route's declared permission and the account the path names, with the same code for all of them:

- the operator may do everything but ``self`` (it is nobody);
- ``operator`` routes (accounts, people) refuse everyone else with 403;
- ``self`` routes take a person's session (a personal token gets 403);
- an account's route: an account the person is not a member of, or that a personal token is not scoped to, is
  answered 404 ``Account not found``, as an account that does not exist (a person learns nothing of other
  accounts, not even that they exist); a member whose role does not grant the permission gets 403. A personal
  token is held to its own role and to its person's role now (a member whose role was lowered, or who was
  removed, takes their tokens down with them).
"""

from __future__ import annotations

from dataclasses import dataclass

from linksvc.errors import Forbidden, NotFound
from linksvc.people import roles
from linksvc.store import Store
from storage import people as repo


@dataclass(frozen=True)
class Actor:
    kind: str  # "operator", "person" (a dashboard session) or "token" (a personal access token)
    person_id: str | None = None
    token_id: str | None = None
    token_account: str | None = None
    token_role: str | None = None

    @property
    def id(self) -> str:
        """What the audit log names: "operator", the person's id or the token's id."""
        return self.token_id or self.person_id or "operator"


OPERATOR = Actor("operator")


def account_not_found(account_id: str) -> NotFound:
    return NotFound("Account not found", f"no account with id {account_id}")


async def authorize(db: Store, actor: Actor, permission: str, account_id: str | None) -> str | None:
    """Raises Forbidden (403) or NotFound (404) unless ``actor`` may do what ``permission`` names in
    ``account_id`` (None for a route outside any account). Returns the role the decision went by (None for
    the operator and for routes outside an account)."""
    if not roles.is_permission(permission):
        raise Forbidden("No permission declared", f"the route declares an unknown permission {permission!r}")
    if actor.kind == "operator":
        if permission == roles.SELF:
            raise Forbidden("Not a person", "this route is about the signed-in person; the operator token is "
                                            "nobody: sign in as a person")
        return None
    if permission == roles.OPERATOR:
        raise Forbidden("Operator only", "this route takes the operator token (LINKSVC_ADMIN_TOKEN)")
    if permission == roles.SELF:
        if actor.kind != "person":
            raise Forbidden("Session required", "a personal access token cannot manage its person; sign in")
        return None
    if account_id is None:
        raise Forbidden("Not allowed", "this route is not of an account")
    assert actor.person_id is not None
    if actor.kind == "token" and account_id != actor.token_account:
        raise account_not_found(account_id)
    role = await repo.role_in(db.reader, actor.person_id, account_id)
    if role is None:
        raise account_not_found(account_id)
    if actor.token_role is not None and not roles.grants(actor.token_role, permission):
        raise Forbidden("Not allowed", f"a personal token with the role {actor.token_role} may not do this "
                                       f"({permission})")
    if not roles.grants(role, permission):
        raise Forbidden("Not allowed", f"the role {role} may not do this ({permission})")
    return role
