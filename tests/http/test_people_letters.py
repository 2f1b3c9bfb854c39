"""Invitations and password resets by letter, through a real SMTP server on 127.0.0.1 (aiosmtpd with STARTTLS
and a password, tests/smtp.py), on both stores: the letter carries the one-time link, the link in the letter is
the one that works, and a letter that cannot leave undoes nothing."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import DB
from linksvc.app import create_app
from linksvc.seed import load_seed
from linksvc.settings import Settings
from tests.conftest import service_server
from tests.factories import A, two_accounts
from tests.people import ADMIN, OPERATOR, make_person, session_of, sign_in
from tests.processes import free_port
from tests.smtp import Mailbox, certificate, smtp_server

PUBLIC = "https://links.example.com"
_LINK = re.compile(r"https://links\.example\.com/dashboard/[a-z-]+#token=\S+")


@pytest.fixture
async def mailed(aiohttp_client: Any, settings: Settings, tmp_path: Path) -> AsyncIterator[tuple[TestClient, Mailbox]]:
    context, ca = certificate(tmp_path)
    with smtp_server(starttls=context, users={"links@example.com": "smtp-secret-1"}) as box:
        configured = replace(settings, public_url=PUBLIC, smtp_ca_file=str(ca),
                             smtp_from="Acme links <links@example.com>", smtp_url=f"smtp://links%40example.com:smtp-secret-1@127.0.0.1:{box.port}")
        client: TestClient = await aiohttp_client(service_server(create_app(configured)))
        await load_seed(client.app[DB], two_accounts(), allow_private=True)
        yield client, box


def _link_in(text: str) -> str:
    found = _LINK.search(text)
    assert found, text
    return found.group(0)


async def test_an_invitation_arrives_by_letter_and_its_link_lets_the_person_in(
        mailed: tuple[TestClient, Mailbox]) -> None:
    client, box = mailed
    await make_person(client, "owner@example.com", A, "owner", name="Olga Owner")
    owner = await session_of(client, "owner@example.com")
    answer = await client.post(f"{ADMIN}/accounts/{A}/invitations", headers=owner,
                               json={"email": "Nia@Example.com", "role": "marketer"})
    assert answer.status == 201
    invitation = (await answer.json())["data"]
    assert invitation["letter"]["sent"] is True and "queued as" in invitation["letter"]["detail"]
    [letter] = box.messages
    assert box.envelopes == [("links@example.com", ["Nia@Example.com"])]  # as typed: a local part may be case-sensitive
    assert letter["From"] == "Acme links <links@example.com>" and letter["To"] == "Nia@Example.com"
    assert letter["Subject"].startswith("You are invited to ")
    body = letter.get_content()
    assert "Olga Owner invited you" in body and "as marketer" in body and "links.example.com" in body
    url = _link_in(body)
    assert url == invitation["link"] and url.startswith(f"{PUBLIC}/dashboard/accept-invitation#token=")
    token = url.partition("#token=")[2]
    accepted = await client.post(f"{ADMIN}/invitations/accept",
                                 json={"token": token, "name": "Nia", "password": "a long new password"})
    assert accepted.status == 201
    assert (await sign_in(client, "nia@example.com", "a long new password"))[0] == 200


async def test_a_password_reset_arrives_by_letter(mailed: tuple[TestClient, Mailbox]) -> None:
    client, box = mailed
    person = await make_person(client, "pat@example.com", A, "analyst")
    answer = await client.post(f"{ADMIN}/people/{person['id']}/password-reset", headers=OPERATOR)
    assert answer.status == 201 and (await answer.json())["data"]["letter"]["sent"] is True
    [letter] = box.messages
    assert letter["To"] == "pat@example.com" and letter["Subject"] == "Set a new password for links.example.com"
    url = _link_in(letter.get_content())
    assert url.startswith(f"{PUBLIC}/dashboard/reset-password#token=")
    done = await client.post(f"{ADMIN}/password-resets/accept",
                             json={"token": url.partition("#token=")[2], "password": "the password now"})
    assert done.status == 204
    assert (await sign_in(client, "pat@example.com", "the password now"))[0] == 200


async def test_a_letter_that_cannot_leave_undoes_nothing(aiohttp_client: Any, settings: Settings) -> None:
    """The server is away: the invitation stands, its link is in the answer, and the answer says why no letter."""
    port = free_port()
    client: TestClient = await aiohttp_client(service_server(create_app(
        replace(settings, smtp_url=f"smtp+insecure://127.0.0.1:{port}"))))
    await load_seed(client.app[DB], two_accounts(), allow_private=True)
    answer = await client.post(f"{ADMIN}/accounts/{A}/invitations", headers=OPERATOR,
                               json={"email": "away@example.com", "role": "analyst"})
    assert answer.status == 201
    invitation = (await answer.json())["data"]
    assert invitation["letter"]["sent"] is False
    assert f"could not reach 127.0.0.1:{port}" in invitation["letter"]["detail"]
    listed = await (await client.get(f"{ADMIN}/accounts/{A}/invitations", headers=OPERATOR)).json()
    assert [i["email"] for i in listed["data"]] == ["away@example.com"]
    accepted = await client.post(f"{ADMIN}/invitations/accept", json={
        "token": invitation["token"], "name": "Away", "password": "a long new password"})
    assert accepted.status == 201


async def test_without_a_mail_server_the_answer_says_so(seeded: TestClient) -> None:
    answer = await seeded.post(f"{ADMIN}/accounts/{A}/invitations", headers=OPERATOR,
                               json={"email": "hand@example.com", "role": "analyst"})
    assert (await answer.json())["data"]["letter"] == {
        "sent": False, "detail": "no mail server is configured (LINKSVC_SMTP_URL)"}
