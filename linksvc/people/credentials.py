"""The actor behind an admin API credential: the operator token or a personal access token (a bearer token), or a
dashboard session's cookie (opened with the operator token or by a person's sign-in)."""

from __future__ import annotations

from linksvc.accounts.sessions import is_admin_token, session_of
from linksvc.errors import Unauthorized
from linksvc.people.access import OPERATOR, Actor
from linksvc.people.tokens import actor_of_token, is_personal_token
from linksvc.store import Store


async def admin_actor(db: Store, admin_token: str, bearer: str | None, session_id: str | None) -> Actor:
    """Who ``bearer`` (when given) or else the session ``session_id`` stands for; Unauthorized for nobody."""
    if bearer is not None:
        if is_personal_token(bearer):
            return await actor_of_token(db, bearer)
        if not is_admin_token(bearer, admin_token):
            raise Unauthorized("Invalid admin token", "the bearer token is not the admin token")
        return OPERATOR
    signed = await session_of(db, admin_token, session_id)
    if signed is None:
        raise Unauthorized("Invalid session", "the dashboard session has expired or is not valid; sign in again")
    return OPERATOR if signed.person_id is None else Actor("person", signed.person_id)
