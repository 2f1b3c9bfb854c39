"""Admin handlers of people, members, personal access tokens and the audit log (docs/decisions.md, "People and
roles"): ``/people`` (the operator's), ``/people/me`` (the signed-in person's), ``/accounts/{account_id}/members``,
``.../invitations``, ``.../audit-log``, and the pages of the two one-time links (``/invitations/accept``,
``/password-resets/accept``), which take the link's token instead of a credential.
"""

from __future__ import annotations

from typing import Any, Literal

from aiohttp import web
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from api.appkeys import DB, SETTINGS
from api.auth import actor, client_ip
from api.routing import Endpoint, data, json_response
from api.schemas import Envelope, Page, Paging
from linksvc.people import audit, members, service, tokens
from linksvc.people.mail import Post

Role = Literal["owner", "admin", "marketer", "analyst", "developer"]
InvitedRole = Literal["admin", "marketer", "analyst", "developer"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PersonCreate(Strict):
    email: str = Field(min_length=3, max_length=320)
    name: str = Field(min_length=1, max_length=200)
    password: str = Field(min_length=service.MIN_PASSWORD, max_length=1000)
    account_id: str | None = Field(default=None, description="make the person a member of this account ...")
    role: Role | None = Field(default=None, description="... with this role (owner: the account's first owner)")


class Membership(BaseModel):
    account_id: str
    role: str


class PersonView(BaseModel):
    id: str
    email: str
    name: str
    totp_enabled: bool
    created_at: str
    updated_at: str
    accounts: list[Membership] | None = None


class ProfilePatch(Strict):
    email: str | None = Field(default=None, min_length=3, max_length=320)
    name: str | None = Field(default=None, min_length=1, max_length=200)


class PasswordChange(Strict):
    current_password: str = Field(min_length=1, max_length=1000)
    new_password: str = Field(min_length=service.MIN_PASSWORD, max_length=1000)


class TotpEnrolment(BaseModel):
    secret: str = Field(description="the base32 secret to enter in an authenticator app (shown once)")
    otpauth_uri: str = Field(description="the same as an otpauth:// URI, for a QR code")


class Code(Strict):
    code: str = Field(min_length=6, max_length=10, description="the authenticator's current code")


class TokenCreate(Strict):
    account_id: str = Field(min_length=1, max_length=200)
    role: Role = Field(description="at most your role in the account")
    name: str = Field(default="", max_length=200)
    expires_in_days: int = Field(default=tokens.DEFAULT_DAYS, ge=1, le=tokens.MAX_DAYS)


class TokenView(BaseModel):
    id: str
    account_id: str
    role: str
    name: str
    prefix: str = Field(description="the first characters of the token, to recognise it")
    created_at: str
    expires_at: str
    revoked_at: str | None
    last_used_at: str | None = Field(description="the last use, noted at most once a minute")
    status: Literal["active", "expired", "revoked"]


class TokenCreated(TokenView):
    token: str = Field(description="the secret: shown only in this response; send it as Authorization: Bearer")


class MemberView(BaseModel):
    person_id: str
    account_id: str
    email: str
    name: str
    role: str
    since: str


class MemberPut(Strict):
    role: Role


class MemberPatch(Strict):
    role: InvitedRole


class Transfer(Strict):
    person_id: str = Field(min_length=1, max_length=200, description="the member who becomes the owner")


class InvitationCreate(Strict):
    email: str = Field(min_length=3, max_length=320)
    role: InvitedRole


class InvitationView(BaseModel):
    id: str
    account_id: str | None
    email: str
    role: str
    invited_by: str
    created_at: str
    expires_at: str
    accepted_at: str | None
    status: Literal["pending", "accepted", "expired"]


class Letter(BaseModel):
    sent: bool = Field(description="whether the SMTP server of LINKSVC_SMTP_URL accepted the letter with the link")
    detail: str = Field(description="the server's reply, or why no letter left (no server configured, a refusal, "
                                    "the server unreachable)", examples=["accepted by mail.example.com:587: 2.0.0 OK"])


class InvitationCreated(InvitationView):
    token: str = Field(description="the one-time token: shown only in this response")
    link: str = Field(description="the dashboard page that accepts it; pass it on to the person invited")
    letter: Letter = Field(description="the letter that carries the link to the person invited")


class InvitationAccept(Strict):
    token: str = Field(min_length=1, max_length=200)
    name: str | None = Field(default=None, min_length=1, max_length=200, description="a new person's name")
    password: str | None = Field(default=None, min_length=service.MIN_PASSWORD, max_length=1000,
                                 description="a new person's password")


class Accepted(BaseModel):
    person_id: str
    email: str
    account_id: str
    role: str


class ResetCreated(BaseModel):
    id: str
    person_id: str
    email: str
    expires_at: str
    token: str = Field(description="the one-time token: shown only in this response")
    link: str = Field(description="the dashboard page that takes it; pass it on to the person")
    letter: Letter = Field(description="the letter that carries the link to the person")


class ResetFinish(Strict):
    token: str = Field(min_length=1, max_length=200)
    password: str = Field(min_length=service.MIN_PASSWORD, max_length=1000)


class AuditQuery(Paging):
    model_config = ConfigDict(extra="forbid")
    actor: str | None = Field(default=None, max_length=200,
                              description="operator, a person's id (their tokens' entries too) or a token's id")
    object_kind: str | None = Field(default=None, max_length=100)
    object_id: str | None = Field(default=None, max_length=200)
    action: str | None = Field(default=None, max_length=100)
    since: AwareDatetime | None = Field(default=None, description="entries at or after this time")
    until: AwareDatetime | None = Field(default=None, description="entries before this time")


class AuditActor(BaseModel):
    kind: Literal["operator", "person", "token"]
    id: str
    person_id: str | None


class AuditObject(BaseModel):
    kind: str
    id: str


class AuditEntry(BaseModel):
    id: str
    at: str
    actor: AuditActor
    object: AuditObject
    account_id: str | None = Field(description="the account changed; null for a person's own profile, password, "
                                               "second factor or tokens")
    action: str
    fields: Any = Field(description="the fields the request sent, secrets masked")
    client: str


def _account(request: web.Request) -> str:
    return request.match_info["account_id"]


def _person(request: web.Request) -> str:
    person_id = actor(request).person_id
    assert person_id is not None  # the route's permission is "self": a person's session
    return person_id


# The operator's.

async def list_people(request: web.Request, query: Paging) -> web.Response:
    views, total = await service.list_people(request.app[DB], query.limit, query.offset)
    return json_response({"data": views, "count": total, "limit": query.limit, "offset": query.offset})


async def create_person(request: web.Request, body: PersonCreate) -> web.Response:
    return data(await service.create_person(request.app[DB], body.email, body.name, body.password,
                                            body.account_id, body.role), status=201)


async def get_person(request: web.Request) -> web.Response:
    return data(await service.read_person(request.app[DB], request.match_info["person_id"]))


async def reset_any(request: web.Request) -> web.Response:
    return data(await members.start_password_reset(request.app[DB], actor(request), None,
                                                   request.match_info["person_id"],
                                                   Post.of(request.app[SETTINGS])), status=201)


# The signed-in person's.

async def me(request: web.Request) -> web.Response:
    return data(await service.read_person(request.app[DB], _person(request)))


async def patch_me(request: web.Request, body: ProfilePatch) -> web.Response:
    return data(await service.update_person(request.app[DB], _person(request), body.email, body.name))


async def change_password(request: web.Request, body: PasswordChange) -> web.Response:
    await service.change_password(request.app[DB], _person(request), body.current_password, body.new_password)
    return web.Response(status=204)


async def enrol_totp(request: web.Request) -> web.Response:
    return data(await service.enrol_totp(request.app[DB], _person(request)), status=201)


async def confirm_totp(request: web.Request, body: Code) -> web.Response:
    return data(await service.confirm_totp(request.app[DB], _person(request), body.code))


async def disable_totp(request: web.Request, body: Code) -> web.Response:
    return data(await service.disable_totp(request.app[DB], _person(request), body.code))


async def list_tokens(request: web.Request) -> web.Response:
    return data(await tokens.list_tokens(request.app[DB], _person(request)))


async def create_token(request: web.Request, body: TokenCreate) -> web.Response:
    return data(await tokens.create_token(request.app[DB], _person(request), body.account_id, body.role, body.name,
                                          body.expires_in_days), status=201)


async def revoke_token(request: web.Request) -> web.Response:
    return data(await tokens.revoke_token(request.app[DB], _person(request), request.match_info["token_id"]))


# An account's members.

async def list_members(request: web.Request) -> web.Response:
    return data(await members.list_members(request.app[DB], _account(request)))


async def put_member(request: web.Request, body: MemberPut) -> web.Response:
    return data(await members.set_member(request.app[DB], _account(request), request.match_info["person_id"],
                                         body.role))


async def patch_member(request: web.Request, body: MemberPatch) -> web.Response:
    return data(await members.change_role(request.app[DB], _account(request), request.match_info["person_id"],
                                          body.role))


async def remove_member(request: web.Request) -> web.Response:
    await members.remove_member(request.app[DB], _account(request), request.match_info["person_id"])
    return web.Response(status=204)


async def reset_member(request: web.Request) -> web.Response:
    return data(await members.start_password_reset(request.app[DB], actor(request), _account(request),
                                                   request.match_info["person_id"],
                                                   Post.of(request.app[SETTINGS])), status=201)


async def transfer(request: web.Request, body: Transfer) -> web.Response:
    return data(await members.transfer_ownership(request.app[DB], _account(request), body.person_id))


async def list_invitations(request: web.Request) -> web.Response:
    return data(await members.list_invitations(request.app[DB], _account(request)))


async def invite(request: web.Request, body: InvitationCreate) -> web.Response:
    return data(await members.invite(request.app[DB], actor(request), _account(request), body.email, body.role,
                                     Post.of(request.app[SETTINGS])), status=201)


async def cancel_invitation(request: web.Request) -> web.Response:
    await members.cancel_invitation(request.app[DB], _account(request), request.match_info["invitation_id"])
    return web.Response(status=204)


async def read_whole_audit_log(request: web.Request, query: AuditQuery) -> web.Response:
    entries, total = await audit.read_log(request.app[DB], None, query.limit, query.offset, query.actor,
                                          query.object_kind, query.object_id, query.action, query.since, query.until)
    return json_response({"data": entries, "count": total, "limit": query.limit, "offset": query.offset})


async def read_my_audit_log(request: web.Request, query: AuditQuery) -> web.Response:
    entries, total = await audit.read_log(request.app[DB], None, query.limit, query.offset, _person(request),
                                          query.object_kind, query.object_id, query.action, query.since, query.until)
    return json_response({"data": entries, "count": total, "limit": query.limit, "offset": query.offset})


async def read_audit_log(request: web.Request, query: AuditQuery) -> web.Response:
    entries, total = await audit.read_log(request.app[DB], _account(request), query.limit, query.offset,
                                          query.actor, query.object_kind, query.object_id, query.action,
                                          query.since, query.until)
    return json_response({"data": entries, "count": total, "limit": query.limit, "offset": query.offset})


# The one-time links' pages: the token is the credential.

async def accept_invitation(request: web.Request, body: InvitationAccept) -> web.Response:
    return data(await members.accept_invitation(request.app[DB], body.token, body.name, body.password,
                                                client_ip(request)), status=201)


async def finish_reset(request: web.Request, body: ResetFinish) -> web.Response:
    await members.finish_password_reset(request.app[DB], body.token, body.password, client_ip(request))
    return web.Response(status=204)


_M = "/accounts/{account_id}/members"
_ADMIN: dict[str, Any] = {"security": "admin", "errors": (401, 404)}

ENDPOINTS = [
    # /people/me first: "me" is not a person's id.
    Endpoint("GET", "/people/me", me, "The signed-in person, with their accounts and roles", "people",
             response=Envelope[PersonView], permission="self", **_ADMIN),
    Endpoint("PATCH", "/people/me", patch_me, "Change your name or email", "people", body=ProfilePatch,
             response=Envelope[PersonView], permission="self", security="admin", errors=(401, 409), action="update"),
    Endpoint("POST", "/people/me/password", change_password, "Change your password", "people",
             body=PasswordChange, status=204, permission="self", action="change-password", security="admin",
             errors=(401,),
             description="Every session of yours ends: sign in again with the new password."),
    Endpoint("POST", "/people/me/totp", enrol_totp, "Enrol a second factor (an authenticator app)", "people",
             response=Envelope[TotpEnrolment], status=201, permission="self", action="enrol-totp", security="admin",
             errors=(401,),
             description="The secret counts once a code of it is confirmed (POST /people/me/totp/confirm); "
                         "sign-in asks for a code from then on."),
    Endpoint("POST", "/people/me/totp/confirm", confirm_totp, "Confirm the enrolled second factor with a code",
             "people", body=Code, response=Envelope[PersonView], permission="self", security="admin",
             errors=(401, 409), action="confirm-totp"),
    Endpoint("POST", "/people/me/totp/disable", disable_totp, "Turn the second factor off, given a current code",
             "people", body=Code, response=Envelope[PersonView], permission="self", security="admin",
             errors=(401, 409), action="disable-totp"),
    Endpoint("GET", "/people/me/tokens", list_tokens, "Your personal access tokens (never their secrets)",
             "personal-tokens", response=Envelope[list[TokenView]], permission="self", security="admin",
             errors=(401,)),
    Endpoint("POST", "/people/me/tokens", create_token, "Create a personal access token; the token is shown once",
             "personal-tokens", body=TokenCreate, response=Envelope[TokenCreated], status=201, permission="self",
             **_ADMIN, description="Scoped to one account you are a member of, with a role that grants no more "
                                   "than yours there; accepted by the admin API as Authorization: Bearer."),
    Endpoint("DELETE", "/people/me/tokens/{token_id}", revoke_token, "Revoke a personal access token at once",
             "personal-tokens", response=Envelope[TokenView], permission="self", **_ADMIN),
    Endpoint("GET", "/audit-log", read_whole_audit_log, "Who changed what, in every account and outside any (a "
             "person's own profile, password, second factor and tokens)", "audit-log", query=AuditQuery,
             response=Page[AuditEntry], permission="operator", security="admin", errors=(400, 401)),
    Endpoint("GET", "/people/me/audit-log", read_my_audit_log, "What you changed, in every account and in your "
             "own profile (the actor filter is you)", "audit-log", query=AuditQuery, response=Page[AuditEntry],
             permission="self", security="admin", errors=(400, 401)),
    Endpoint("GET", "/people", list_people, "List people", "people", query=Paging, response=Page[PersonView],
             permission="operator", security="admin", errors=(401,)),
    Endpoint("POST", "/people", create_person, "Create a person (and their first membership)", "people",
             body=PersonCreate, response=Envelope[PersonView], status=201, permission="operator",
             security="admin", errors=(401, 404, 409),
             description="With account_id and role owner, the account's first owner."),
    Endpoint("GET", "/people/{person_id}", get_person, "Read a person, with their accounts and roles", "people",
             response=Envelope[PersonView], permission="operator", **_ADMIN),
    Endpoint("POST", "/people/{person_id}/password-reset", reset_any, "A one-time link to set a new password",
             "people", response=Envelope[ResetCreated], status=201, permission="operator", **_ADMIN,
             description="The link is shown here, to be passed on; it lapses after 24 hours or at its use."),
    Endpoint("GET", _M, list_members, "Members of the account and their roles", "members",
             response=Envelope[list[MemberView]], permission="members:read", **_ADMIN),
    Endpoint("PUT", _M + "/{person_id}", put_member, "Make a person a member with a role (owner too)", "members",
             body=MemberPut, response=Envelope[MemberView], permission="operator", security="admin",
             errors=(401, 404, 409), description="The operator's: how an account gets its first owner."),
    Endpoint("PATCH", _M + "/{person_id}", patch_member, "Change a member's role (not to or from owner)",
             "members", body=MemberPatch, response=Envelope[MemberView], permission="members:write",
             security="admin", errors=(401, 404, 409)),
    Endpoint("DELETE", _M + "/{person_id}", remove_member, "Remove a member (not an owner)", "members",
             status=204, permission="members:write", security="admin", errors=(401, 404, 409)),
    Endpoint("POST", _M + "/{person_id}/password-reset", reset_member,
             "A one-time link with which a member sets a new password", "members", response=Envelope[ResetCreated],
             status=201, permission="members:write", **_ADMIN,
             description="The link is shown here, to be passed on; it lapses after 24 hours or at its use."),
    Endpoint("POST", "/accounts/{account_id}/transfer-ownership", transfer, "Make a member the owner", "members",
             body=Transfer, response=Envelope[list[MemberView]], permission="members:write", **_ADMIN,
             action="transfer-ownership",
             description="Every other owner becomes an admin."),
    Endpoint("GET", "/accounts/{account_id}/invitations", list_invitations, "Invitations to the account",
             "members", response=Envelope[list[InvitationView]], permission="members:read", **_ADMIN),
    Endpoint("POST", "/accounts/{account_id}/invitations", invite, "Invite a person by email", "members",
             body=InvitationCreate, response=Envelope[InvitationCreated], status=201, permission="members:write",
             security="admin", errors=(401, 404, 409),
             description="A pending invitation with a one-time link, shown here to be passed on (it is not "
                         "sent by email yet); it lapses after 7 days or at its use."),
    Endpoint("DELETE", "/accounts/{account_id}/invitations/{invitation_id}", cancel_invitation,
             "Cancel an invitation", "members", status=204, permission="members:write", **_ADMIN),
    Endpoint("GET", "/accounts/{account_id}/audit-log", read_audit_log, "Who changed what in the account",
             "audit-log", query=AuditQuery, response=Page[AuditEntry], permission="audit:read", **_ADMIN,
             description="Every change made through the admin API, newest first: the actor (operator, person or "
                         "personal token), the object, the action, the fields sent with secrets masked, the "
                         "client's address. Append-only: no route changes or deletes an entry."),
    Endpoint("POST", "/invitations/accept", accept_invitation, "Accept an invitation with its one-time token",
             "members", body=InvitationAccept, response=Envelope[Accepted], status=201, security=None,
             errors=(401, 404),
             description="A new person sets a name and a password; a person who has the invited email already "
                         "joins with their own password."),
    Endpoint("POST", "/password-resets/accept", finish_reset, "Set a new password with a reset link's token",
             "people", body=ResetFinish, status=204, security=None, errors=(404,),
             description="Every session of the person ends."),
]
