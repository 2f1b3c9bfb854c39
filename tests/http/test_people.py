"""People and roles through the HTTP API, on both stores: sign-in (and its throttle), the second factor, personal
access tokens, isolation between accounts, members, invitations and password resets by one-time links, and the
audit log of every change."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import pyotp
from aiohttp.test_utils import TestClient

from api.appkeys import DB
from linksvc.app import create_app
from linksvc.seed import load_seed
from linksvc.settings import Settings
from storage.db import execute
from tests.conftest import service_server
from tests.factories import A, B, ids, two_accounts
from tests.people import ADMIN, OPERATOR, PASSWORD, SESSION, as_bearer, as_session, make_person, session_of, sign_in

LINK_A = f"{ADMIN}/accounts/{A}/links/{ids(A)['links']}"
LINK_B = f"{ADMIN}/accounts/{B}/links/{ids(B)['links']}"


async def backdate(client: TestClient, table: str, column: str, value: str) -> None:
    """Moves a lifetime into the past, as time would (a token's or a one-time link's expiry)."""
    async with client.app[DB].transaction() as tx:
        await execute(tx, f"UPDATE {table} SET {column} = ?", (value,))


# Sign-in.

async def test_a_person_signs_in_with_email_and_password_and_out_again(seeded: TestClient) -> None:
    person = await make_person(seeded, "Ana@Example.com", A, "marketer")
    assert person["accounts"] == [{"account_id": A, "role": "marketer"}]
    status, body, cookie = await sign_in(seeded, "ana@example.COM")  # any case
    assert status == 200 and body == {"data": {"signed_in": True}} and cookie
    state = await (await seeded.get(SESSION, headers={"Cookie": f"linksvc_admin={cookie}"})).json()
    assert state == {"data": {"signed_in": True, "person_id": person["id"]}}
    me = await seeded.get(f"{ADMIN}/people/me", headers=as_session(cookie))
    assert me.status == 200 and (await me.json())["data"]["email"] == "Ana@Example.com"
    assert (await seeded.get(LINK_A, headers=as_session(cookie))).status == 200
    await seeded.delete(SESSION, headers={"Cookie": f"linksvc_admin={cookie}"})
    assert (await seeded.get(LINK_A, headers=as_session(cookie))).status == 401


async def test_a_wrong_password_or_unknown_email_is_401_and_the_email_is_unique(seeded: TestClient) -> None:
    await make_person(seeded, "bo@example.com", A, "analyst")
    for email, password in (("bo@example.com", "not the password"), ("nobody@example.com", PASSWORD)):
        status, body, cookie = await sign_in(seeded, email, password)
        assert status == 401 and body["error"] == "Invalid email or password" and cookie is None
    nul = await seeded.post(f"{ADMIN}/people", headers=OPERATOR,
                            json={"email": "nul@example.com", "name": "N\u0000", "password": PASSWORD})
    assert nul.status == 400 and (await nul.json())["details"]["field"] == "name"
    again = await seeded.post(f"{ADMIN}/people", headers=OPERATOR,
                              json={"email": "BO@example.com", "name": "Bo", "password": PASSWORD})
    assert again.status == 409


async def test_failed_sign_ins_are_throttled(aiohttp_client: Any, settings: Settings) -> None:
    client: TestClient = await aiohttp_client(service_server(create_app(replace(settings, auth_failure_limit=3))))
    await load_seed(client.app[DB], two_accounts(), allow_private=True)
    await make_person(client, "cy@example.com", A, "owner")
    for _ in range(3):
        assert (await sign_in(client, "cy@example.com", "wrong password!"))[0] == 401
    status, body, _ = await sign_in(client, "cy@example.com")  # even the right password, now
    assert status == 429 and body["error"]


async def test_a_new_password_ends_the_sessions(seeded: TestClient) -> None:
    await make_person(seeded, "di@example.com", A, "analyst")
    session = await session_of(seeded, "di@example.com")
    wrong = await seeded.post(f"{ADMIN}/people/me/password", headers=session,
                              json={"current_password": "nope", "new_password": "another long password"})
    assert wrong.status == 401
    done = await seeded.post(f"{ADMIN}/people/me/password", headers=session,
                             json={"current_password": PASSWORD, "new_password": "another long password"})
    assert done.status == 204
    assert (await seeded.get(f"{ADMIN}/people/me", headers=session)).status == 401
    assert (await sign_in(seeded, "di@example.com"))[0] == 401
    assert (await sign_in(seeded, "di@example.com", "another long password"))[0] == 200


# The second factor.

async def test_a_second_factor_once_confirmed_is_asked_at_sign_in(seeded: TestClient) -> None:
    await make_person(seeded, "ed@example.com", A, "owner")
    session = await session_of(seeded, "ed@example.com")
    enrolled = await seeded.post(f"{ADMIN}/people/me/totp", headers=session)
    assert enrolled.status == 201
    secret = (await enrolled.json())["data"]["secret"]
    assert (await enrolled.json())["data"]["otpauth_uri"].startswith("otpauth://totp/")
    assert (await sign_in(seeded, "ed@example.com"))[0] == 200  # not confirmed yet: not asked
    bad = await seeded.post(f"{ADMIN}/people/me/totp/confirm", headers=session, json={"code": "000000"})
    assert bad.status == 400
    totp = pyotp.TOTP(secret)
    confirm_at = time.time() - 30  # the step before: accepted, and leaves this step's code for the sign-in
    confirmed = await seeded.post(f"{ADMIN}/people/me/totp/confirm", headers=session,
                                  json={"code": totp.at(confirm_at)})
    assert confirmed.status == 200 and (await confirmed.json())["data"]["totp_enabled"] is True
    status, body, _ = await sign_in(seeded, "ed@example.com")
    assert status == 401 and body["error"] == "Code required"
    assert (await sign_in(seeded, "ed@example.com", code="12345x"))[0] == 401
    code = totp.at(time.time() + 30)  # the next step's: accepted too (clocks drift)
    status, _, cookie = await sign_in(seeded, "ed@example.com", code=code)
    assert status == 200 and cookie
    status, body, _ = await sign_in(seeded, "ed@example.com", code=code)  # a code counts once
    assert status == 401 and body["error"] == "Invalid code"


# Personal access tokens.

async def create_token(client: TestClient, session: dict[str, str], **body: Any) -> tuple[int, dict[str, Any]]:
    response = await client.post(f"{ADMIN}/people/me/tokens", headers=session, json=body)
    return response.status, await response.json()


async def test_a_personal_token_is_scoped_to_its_account_and_role(seeded: TestClient) -> None:
    await make_person(seeded, "fa@example.com", A, "marketer")
    session = await session_of(seeded, "fa@example.com")
    assert (await create_token(seeded, session, account_id=A, role="admin"))[0] == 403  # above the person's
    assert (await create_token(seeded, session, account_id=A, role="developer"))[0] == 403  # not within
    assert (await create_token(seeded, session, account_id=B, role="analyst"))[0] == 404  # not a member
    status, body = await create_token(seeded, session, account_id=A, role="marketer", name="ci")
    assert status == 201 and body["data"]["token"].startswith("lpt_") and body["data"]["status"] == "active"
    token = as_bearer(body["data"]["token"])
    assert (await seeded.get(LINK_A, headers=token)).status == 200
    edited = await seeded.patch(LINK_A, headers=token, json={"destination_url": "https://shop.example/ci"})
    assert edited.status == 200
    missing = await seeded.get(LINK_B, headers=token)
    assert missing.status == 404 and (await missing.json())["error"] == "Account not found"
    assert (await seeded.get(f"{ADMIN}/accounts/{A}/api-keys", headers=token)).status == 200
    assert (await seeded.post(f"{ADMIN}/accounts/{A}/api-keys", headers=token, json={"kind": "SERVER"})).status == 403
    assert (await seeded.get(f"{ADMIN}/people/me/tokens", headers=token)).status == 403  # never its own manager
    listed = await (await seeded.get(f"{ADMIN}/people/me/tokens", headers=session)).json()
    assert [t["name"] for t in listed["data"]] == ["ci"] and "token" not in listed["data"][0]


async def test_a_token_follows_its_persons_role_of_the_moment(seeded: TestClient) -> None:
    member = await make_person(seeded, "ga@example.com", A, "admin")
    session = await session_of(seeded, "ga@example.com")
    token = as_bearer((await create_token(seeded, session, account_id=A, role="admin"))[1]["data"]["token"])
    keys = f"{ADMIN}/accounts/{A}/api-keys"
    assert (await seeded.post(keys, headers=token, json={"kind": "CLIENT"})).status == 201
    lowered = await seeded.put(f"{ADMIN}/accounts/{A}/members/{member['id']}", headers=OPERATOR,
                               json={"role": "analyst"})
    assert lowered.status == 200
    assert (await seeded.post(keys, headers=token, json={"kind": "CLIENT"})).status == 403
    assert (await seeded.delete(f"{ADMIN}/accounts/{A}/members/{member['id']}", headers=OPERATOR)).status == 204
    assert (await seeded.get(keys, headers=token)).status == 404


async def test_a_token_expires_and_is_revoked(seeded: TestClient) -> None:
    await make_person(seeded, "ha@example.com", A, "analyst")
    session = await session_of(seeded, "ha@example.com")
    first = (await create_token(seeded, session, account_id=A, role="analyst", expires_in_days=1))[1]["data"]
    assert (await seeded.get(LINK_A, headers=as_bearer(first["token"]))).status == 200
    await backdate(seeded, "personal_tokens", "expires_at", "2000-01-01T00:00:00.000000Z")
    expired = await seeded.get(LINK_A, headers=as_bearer(first["token"]))
    assert expired.status == 401 and (await expired.json())["error"] == "Token expired"
    second = (await create_token(seeded, session, account_id=A, role="analyst"))[1]["data"]
    revoked = await seeded.delete(f"{ADMIN}/people/me/tokens/{second['id']}", headers=session)
    assert revoked.status == 200 and (await revoked.json())["data"]["status"] == "revoked"
    refused = await seeded.get(LINK_A, headers=as_bearer(second["token"]))
    assert refused.status == 401 and (await refused.json())["error"] == "Token revoked"
    assert (await seeded.get(LINK_A, headers=as_bearer("lpt_" + "x" * 43))).status == 401


async def test_a_tokens_last_use_is_noted_at_most_once_a_minute(seeded: TestClient) -> None:
    await make_person(seeded, "io@example.com", A, "analyst")
    session = await session_of(seeded, "io@example.com")
    created = (await create_token(seeded, session, account_id=A, role="analyst"))[1]["data"]
    assert created["last_used_at"] is None

    async def last_use() -> str | None:
        listed = await (await seeded.get(f"{ADMIN}/people/me/tokens", headers=session)).json()
        value: str | None = listed["data"][0]["last_used_at"]
        return value

    assert (await seeded.get(LINK_A, headers=as_bearer(created["token"]))).status == 200
    noted = await last_use()
    assert noted is not None
    assert (await seeded.get(LINK_A, headers=as_bearer(created["token"]))).status == 200
    assert await last_use() == noted  # the second use within the minute wrote nothing
    await backdate(seeded, "personal_tokens", "last_used_at", "2000-01-01T00:00:00.000000Z")
    assert (await seeded.get(LINK_A, headers=as_bearer(created["token"]))).status == 200
    assert (await last_use() or "") > "2000-01-01T00:00:00.000000Z"


# Isolation.

async def test_a_person_never_reads_or_changes_another_accounts_data(seeded: TestClient) -> None:
    await make_person(seeded, "jo@example.com", A, "owner")
    session = await session_of(seeded, "jo@example.com")
    for method, url in (("GET", LINK_B), ("PATCH", LINK_B), ("DELETE", LINK_B),
                        ("GET", f"{ADMIN}/accounts/{B}"), ("GET", f"{ADMIN}/accounts/{B}/members"),
                        ("GET", f"{ADMIN}/accounts/{B}/audit-log")):
        response = await seeded.request(method, url, headers=session, json={} if method == "PATCH" else None)
        assert response.status == 404 and (await response.json()) == {
            "error": "Account not found", "details": f"no account with id {B}"}, (method, url)
    assert (await seeded.get(f"{ADMIN}/accounts", headers=session)).status == 403  # the operator's list
    assert (await seeded.get(LINK_B, headers=OPERATOR)).status == 200  # still there


# Members, invitations, resets.

async def test_an_invitation_link_is_accepted_once_and_lapses(seeded: TestClient) -> None:
    await make_person(seeded, "ka@example.com", A, "owner")
    owner = await session_of(seeded, "ka@example.com")
    invited = await seeded.post(f"{ADMIN}/accounts/{A}/invitations", headers=owner,
                                json={"email": "new@example.com", "role": "marketer"})
    assert invited.status == 201
    invitation = (await invited.json())["data"]
    assert invitation["status"] == "pending" and invitation["link"].endswith(invitation["token"])
    listed = await (await seeded.get(f"{ADMIN}/accounts/{A}/invitations", headers=owner)).json()
    assert [i["email"] for i in listed["data"]] == ["new@example.com"] and "token" not in listed["data"][0]
    accept = f"{ADMIN}/invitations/accept"
    no_password = await seeded.post(accept, json={"token": invitation["token"]})
    assert no_password.status == 400
    accepted = await seeded.post(accept, json={"token": invitation["token"], "name": "New",
                                               "password": "a brand new password"})
    assert accepted.status == 201 and (await accepted.json())["data"]["role"] == "marketer"
    again = await seeded.post(accept, json={"token": invitation["token"], "name": "New",
                                            "password": "a brand new password"})
    assert again.status == 404
    newcomer = await session_of(seeded, "new@example.com", "a brand new password")
    assert (await seeded.get(LINK_A, headers=newcomer)).status == 200
    members = await (await seeded.get(f"{ADMIN}/accounts/{A}/members", headers=newcomer)).json()
    assert sorted(m["role"] for m in members["data"]) == ["marketer", "owner"]
    elsewhere = await make_person(seeded, "else@example.com")  # a person already, of no account yet
    joined = (await (await seeded.post(f"{ADMIN}/accounts/{A}/invitations", headers=owner,
                                       json={"email": "else@example.com", "role": "analyst"})).json())["data"]
    wrong = await seeded.post(accept, json={"token": joined["token"], "password": "not their password"})
    assert wrong.status == 401
    assert (await seeded.post(accept, json={"token": joined["token"], "password": PASSWORD})).status == 201
    assert (await (await seeded.get(f"{ADMIN}/people/{elsewhere['id']}", headers=OPERATOR)).json())["data"][
        "accounts"] == [{"account_id": A, "role": "analyst"}]
    member_again = await seeded.post(f"{ADMIN}/accounts/{A}/invitations", headers=owner,
                                     json={"email": "NEW@example.com", "role": "analyst"})
    assert member_again.status == 409
    late = (await (await seeded.post(f"{ADMIN}/accounts/{A}/invitations", headers=owner,
                                     json={"email": "late@example.com", "role": "analyst"})).json())["data"]
    await backdate(seeded, "one_time_links", "expires_at", "2000-01-01T00:00:00.000000Z")
    lapsed = await seeded.post(accept, json={"token": late["token"], "name": "Late", "password": "a long password"})
    assert lapsed.status == 404 and (await lapsed.json())["error"] == "Link not valid"
    assert (await seeded.post(f"{ADMIN}/accounts/{A}/invitations", headers=newcomer,
                              json={"email": "x@example.com", "role": "analyst"})).status == 403


async def test_a_password_reset_link_sets_a_new_password_once_and_lapses(seeded: TestClient) -> None:
    await make_person(seeded, "la@example.com", A, "owner")
    member = await make_person(seeded, "mo@example.com", A, "developer")
    owner = await session_of(seeded, "la@example.com")
    old_session = await session_of(seeded, "mo@example.com")
    reset = await seeded.post(f"{ADMIN}/accounts/{A}/members/{member['id']}/password-reset", headers=owner)
    assert reset.status == 201
    token = (await reset.json())["data"]["token"]
    finish = f"{ADMIN}/password-resets/accept"
    assert (await seeded.post(finish, json={"token": token, "password": "the new password"})).status == 204
    assert (await seeded.post(finish, json={"token": token, "password": "another password"})).status == 404
    assert (await seeded.get(f"{ADMIN}/people/me", headers=old_session)).status == 401
    assert (await sign_in(seeded, "mo@example.com", "the new password"))[0] == 200
    by_operator = await seeded.post(f"{ADMIN}/people/{member['id']}/password-reset", headers=OPERATOR)
    assert by_operator.status == 201
    await backdate(seeded, "one_time_links", "expires_at", "2000-01-01T00:00:00.000000Z")
    lapsed = await seeded.post(finish, json={"token": (await by_operator.json())["data"]["token"],
                                             "password": "yet another password"})
    assert lapsed.status == 404


async def test_roles_change_and_ownership_transfers_but_an_account_keeps_an_owner(seeded: TestClient) -> None:
    first = await make_person(seeded, "na@example.com", A, "owner")
    other = await make_person(seeded, "ol@example.com", A, "analyst")
    owner = await session_of(seeded, "na@example.com")
    members = f"{ADMIN}/accounts/{A}/members"
    assert (await seeded.delete(f"{members}/{first['id']}", headers=owner)).status == 409
    assert (await seeded.patch(f"{members}/{first['id']}", headers=owner, json={"role": "admin"})).status == 409
    changed = await seeded.patch(f"{members}/{other['id']}", headers=owner, json={"role": "developer"})
    assert changed.status == 200 and (await changed.json())["data"]["role"] == "developer"
    moved = await seeded.post(f"{ADMIN}/accounts/{A}/transfer-ownership", headers=owner,
                              json={"person_id": other["id"]})
    assert moved.status == 200
    assert {m["email"]: m["role"] for m in (await moved.json())["data"]} == {
        "na@example.com": "admin", "ol@example.com": "owner"}
    assert (await seeded.post(f"{ADMIN}/accounts/{A}/transfer-ownership", headers=owner,
                              json={"person_id": first["id"]})).status == 403  # an admin now
    assert (await seeded.delete(f"{members}/{first['id']}", headers=OPERATOR)).status == 204


# The audit log.

async def audit(client: TestClient, headers: dict[str, str], **query: str) -> dict[str, Any]:
    response = await client.get(f"{ADMIN}/accounts/{A}/audit-log", headers=headers, params=query)
    assert response.status == 200, await response.text()
    body: dict[str, Any] = await response.json()
    return body


async def test_every_change_is_in_the_audit_log_with_secrets_masked(seeded: TestClient) -> None:
    person = await make_person(seeded, "pa@example.com", A, "admin")
    session = await session_of(seeded, "pa@example.com")
    made = (await audit(seeded, OPERATOR))["data"]
    assert [(e["actor"]["kind"], e["object"]["kind"], e["action"]) for e in made] == [("operator", "people", "create")]
    assert made[0]["fields"]["password"] == "********" and made[0]["fields"]["email"] == "pa@example.com"
    changed = await seeded.patch(LINK_A, headers=session, json={"password": "open sesame 123",
                                                                 "destination_url": "https://shop.example/x"})
    assert changed.status == 200, await changed.text()
    created = await seeded.post(f"{ADMIN}/accounts/{A}/api-keys", headers=OPERATOR, json={"kind": "CLIENT"})
    assert created.status == 201
    token = (await create_token(seeded, session, account_id=A, role="admin"))[1]["data"]
    key_id = (await created.json())["data"]["id"]
    revoked = await seeded.delete(f"{ADMIN}/accounts/{A}/api-keys/{key_id}", headers=as_bearer(token["token"]))
    assert revoked.status == 200
    refused = await seeded.patch(LINK_A, headers=session, json={"destination_url": 5})  # invalid: no change
    assert refused.status == 400
    log = await audit(seeded, session)
    assert log["count"] == 5
    newest, made_token, key, link, _ = log["data"]
    assert made_token["object"]["kind"] == "personal-tokens" and made_token["action"] == "create"
    assert made_token["actor"]["id"] == person["id"] and made_token["object"]["id"] == token["id"]
    assert key["object"]["id"] == key_id
    assert link["actor"] == {"kind": "person", "id": person["id"], "person_id": person["id"]}
    assert link["object"] == {"kind": "links", "id": ids(A)["links"]} and link["action"] == "update"
    assert link["fields"] == {"password": "********", "destination_url": "https://shop.example/x"}
    assert link["client"] == "127.0.0.1"
    assert key["actor"]["kind"] == "operator" and key["action"] == "create" and key["fields"] == {"kind": "CLIENT"}
    assert newest["actor"] == {"kind": "token", "id": token["id"], "person_id": person["id"]}
    assert newest["object"] == {"kind": "api-keys", "id": key_id} and newest["action"] == "delete"
    assert "open sesame" not in str(log)
    assert (await audit(seeded, OPERATOR, actor=person["id"]))["count"] == 3  # their session's and token's
    assert (await audit(seeded, OPERATOR, actor="operator"))["count"] == 2
    assert (await audit(seeded, OPERATOR, object_kind="links", action="update"))["count"] == 1
    assert (await audit(seeded, OPERATOR, since="2000-01-01T00:00:00Z", until="2000-01-02T00:00:00Z"))["count"] == 0
    assert [e["id"] for e in (await audit(seeded, OPERATOR, limit="1", offset="1"))["data"]] == [made_token["id"]]
    log_url = f"{ADMIN}/accounts/{A}/audit-log"
    for method in ("PUT", "PATCH", "DELETE", "POST"):
        assert (await seeded.request(method, log_url, headers=OPERATOR, json={})).status in (404, 405)
    analyst = await make_person(seeded, "pb@example.com", A, "analyst")
    assert analyst and (await seeded.get(log_url, headers=await session_of(seeded, "pb@example.com"))).status == 403
    in_b = await seeded.patch(LINK_B, headers=OPERATOR, json={"destination_url": "https://shop.example/b"})
    assert in_b.status == 200 and (await audit(seeded, OPERATOR))["count"] == 6  # + pb made; B's change is B's


async def test_changes_of_every_kind_are_entries_named_by_their_action(seeded: TestClient) -> None:
    base = f"{ADMIN}/accounts/{A}"
    brand = await seeded.post(f"{base}/brands", headers=OPERATOR, json={"name": "New brand"})
    assert brand.status == 201
    brand_id = (await brand.json())["data"]["id"]
    assert (await seeded.delete(f"{base}/brands/{brand_id}", headers=OPERATOR)).status == 204
    domain = await seeded.post(f"{base}/domains", headers=OPERATOR, json={"host": "go.brand.example"})
    assert domain.status == 201
    rotated = await seeded.post(f"{base}/connections/{ids(A)['connections']}/rotate-secret", headers=OPERATOR)
    assert rotated.status == 200, await rotated.text()
    assert (await seeded.patch(base, headers=OPERATOR, json={"name": "Renamed"})).status == 200
    log = (await audit(seeded, OPERATOR))["data"]
    assert [(e["object"]["kind"], e["action"]) for e in reversed(log)] == [
        ("brands", "create"), ("brands", "delete"), ("domains", "create"), ("connections", "rotate-secret"),
        ("accounts", "update")]
    assert log[-2]["object"]["id"] == brand_id and log[1]["object"]["id"] == ids(A)["connections"]
    assert log[-1]["object"]["id"] == brand_id  # a creation names the id the service made
    assert log[2]["object"]["id"] == (await domain.json())["data"]["id"]
    assert (await rotated.json())["data"]["secret"] not in str(log)  # a secret the service made is not a field


async def test_what_happens_outside_an_account_and_through_one_time_links_is_in_the_log(seeded: TestClient) -> None:
    """A person's own changes (profile, password, tokens) belong to no account: the operator reads them in the
    whole log, the person in their own; accepting an invitation and setting a password from a reset link are
    the person's entries, in the account of the link."""
    await make_person(seeded, "ow@example.com", A, "owner")
    owner = await session_of(seeded, "ow@example.com")
    assert (await seeded.patch(f"{ADMIN}/people/me", headers=owner, json={"name": "Owen"})).status == 200
    invitation = (await (await seeded.post(f"{ADMIN}/accounts/{A}/invitations", headers=owner,
                                           json={"email": "jo@example.com", "role": "analyst"})).json())["data"]
    accepted = await seeded.post(f"{ADMIN}/invitations/accept", json={
        "token": invitation["token"], "name": "Jo", "password": "jo's long password"})
    jo = (await accepted.json())["data"]["person_id"]
    reset = (await (await seeded.post(f"{ADMIN}/people/{jo}/password-reset", headers=OPERATOR)).json())["data"]
    assert (await seeded.post(f"{ADMIN}/password-resets/accept", json={
        "token": reset["token"], "password": "jo's newer password"})).status == 204

    whole = await seeded.get(f"{ADMIN}/audit-log", headers=OPERATOR, params={"actor": jo})
    entries = (await whole.json())["data"]
    assert [(e["object"]["kind"], e["action"], e["account_id"]) for e in entries] == [
        ("password-resets", "accept", None), ("invitations", "accept", A)]
    assert entries[0]["fields"] == {"password": "********"} and entries[1]["actor"]["kind"] == "person"
    assert "jo's newer password" not in await whole.text()
    account_log = await audit(seeded, OPERATOR, action="accept")
    assert [(e["object"]["id"], e["actor"]["person_id"]) for e in account_log["data"]] == [(invitation["id"], jo)]
    mine = await (await seeded.get(f"{ADMIN}/people/me/audit-log", headers=owner)).json()
    assert {(e["object"]["kind"], e["action"], e["account_id"]) for e in mine["data"]} >= {
        ("people", "update", None), ("members", "create", A)}
    assert all(e["actor"]["person_id"] not in (None, jo) for e in mine["data"])
    assert (await seeded.get(f"{ADMIN}/audit-log", headers=owner)).status == 403
