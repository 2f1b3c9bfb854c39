"""Webhook signing secrets through the admin API: refused when short or not base64, generated and shown once,
rotated with 24 hours in which deliveries to a real receiver verify with the old and the new secret (checked
with the reference ``standardwebhooks`` library), and kept to their account."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from api.appkeys import DB
from linksvc.clock import parse_iso
from linksvc.errors import InvalidField
from linksvc.forwarding.webhook_secrets import secret_key, secret_problem
from linksvc.jsoncodec import dumps, loads
from linksvc.seed import load_seed
from storage import documents
from tests.conftest import ADMIN
from tests.factories import A, B, ids, two_accounts
from tests.http.conftest import Receiver
from tests.http.test_forwarding import ADMIN_API, SECRET, connect, send, settled

MASK = "********"
SHORT = "whsec_MTIzNDU2Nzg5MDEyMzQ1Ng=="  # 16 bytes


def rotate_url(account: str, connection: str) -> str:
    return f"/api/admin/v1/accounts/{account}/connections/{connection}/rotate-secret"


async def stored_config(client: TestClient, account: str, connection: str) -> dict[str, Any]:
    row = await documents.get(client.app[DB].reader, "connections", account, connection)
    assert row is not None
    return dict(row.body["config"])


async def rotate(client: TestClient, connection: str) -> dict[str, Any]:
    response = await client.post(rotate_url(A, connection), headers=ADMIN)
    assert response.status == 200, await response.text()
    return dict((await response.json())["data"])


async def page_view_delivery(client: TestClient, receiver: Receiver) -> dict[str, Any]:
    """Send one page view and return what the receiver got for it."""
    event_id = await send(client, {"type": "page_view"})
    [delivery] = await settled(client, event_id)
    assert delivery["state"] == "delivered", delivery
    [request] = [r for r in receiver.received if r["headers"]["webhook-id"] == delivery["message_id"]]
    return request


async def test_short_and_non_base64_secrets_are_refused_on_every_edit(service: TestClient) -> None:
    connection = ids(A)["connections"]
    config = {"endpoint_url": "https://hooks.example.com/in"}
    found = []
    for method, secret in (("PUT", SHORT), ("PATCH", SHORT), ("PUT", "whsec_not base64!"),
                           ("PATCH", "whsec_" + "a_b-" * 8)):
        body = {"config": {**config, "secret": secret}}
        if method == "PUT":
            body |= {"event_types": ["PURCHASE"], "destination": "webhook"}
        response = await service.request(method, f"{ADMIN_API}/connections/{connection}", json=body, headers=ADMIN)
        found.append((response.status, (await response.json())["details"]["field"]))
    assert found == [(400, "config.secret")] * 4
    # A seed file is held to the same rule, and the error names the place in the file.
    seed = two_accounts()
    seed["accounts"][0]["connections"][0]["config"]["secret"] = SHORT
    with pytest.raises(InvalidField) as caught:
        await load_seed(service.app[DB], seed, allow_private=True)
    assert caught.value.path == "accounts[0].connections[0].config.secret"


async def test_a_generated_secret_is_shown_once_then_masked(service: TestClient) -> None:
    body = {"event_types": ["PURCHASE"],
            "destination": "webhook", "config": {"endpoint_url": "https://hooks.example.com/in"}}
    response = await service.post(f"{ADMIN_API}/connections", json=body, headers=ADMIN)
    assert response.status == 201, await response.text()
    created = (await response.json())["data"]
    secret = created["config"]["secret"]
    assert secret_problem(secret) is None and len(secret_key(secret)) == 32
    assert (await stored_config(service, A, created["id"]))["secret"] == secret
    for url in (f"{ADMIN_API}/connections/{created['id']}", f"{ADMIN_API}/connections"):
        text = await (await service.get(url, headers=ADMIN)).text()
        assert secret not in text and secret.removeprefix("whsec_") not in text
    shown = await (await service.get(f"{ADMIN_API}/connections/{created['id']}", headers=ADMIN)).json()
    assert shown["data"]["config"]["secret"] == MASK
    # Another webhook gets another secret; a secret that is given is kept and not shown back.
    again = await (await service.post(f"{ADMIN_API}/connections", json=body, headers=ADMIN)).json()
    assert again["data"]["config"]["secret"] != secret
    given = await (await service.post(f"{ADMIN_API}/connections", json={
        "event_types": ["PURCHASE"],
        "destination": "webhook", "config": {"endpoint_url": "https://hooks.example.com/in", "secret": SECRET}},
        headers=ADMIN)).json()
    assert given["data"]["config"]["secret"] == MASK


async def test_rotation_answers_the_new_secret_once(service: TestClient) -> None:
    connection = ids(A)["connections"]
    old = (await stored_config(service, A, connection))["secret"]
    before = datetime.now(UTC)
    rotated = await rotate(service, connection)
    assert set(rotated) == {"secret", "previous_secret_expires_at"}
    assert secret_problem(rotated["secret"]) is None and rotated["secret"] != old
    expires = parse_iso(rotated["previous_secret_expires_at"])
    assert before + timedelta(hours=24) <= expires <= datetime.now(UTC) + timedelta(hours=24)
    stored = await stored_config(service, A, connection)
    assert (stored["secret"], stored["previous_secret"]) == (rotated["secret"], old)
    assert stored["previous_secret_expires_at"] == rotated["previous_secret_expires_at"]
    text = await (await service.get(f"{ADMIN_API}/connections/{connection}", headers=ADMIN)).text()
    assert rotated["secret"] not in text and old not in text
    shown = loads(text)["data"]["config"]
    assert (shown["secret"], shown["previous_secret"]) == (MASK, MASK)


async def test_after_rotation_deliveries_verify_with_the_old_and_the_new_secret(service: TestClient,
                                                                                 receiver: Receiver) -> None:
    connection = await connect(service, "webhook", {"endpoint_url": receiver.url(), "secret": SECRET},
                               event_types=["page_view"])
    first = await page_view_delivery(service, receiver)
    Webhook(SECRET).verify(first["body"], first["headers"])
    assert " " not in first["headers"]["webhook-signature"]
    new = (await rotate(service, connection))["secret"]

    during = await page_view_delivery(service, receiver)
    assert len(during["headers"]["webhook-signature"].split(" ")) == 2
    for secret in (SECRET, new):  # receivers that switched and receivers that did not
        assert Webhook(secret).verify(during["body"], during["headers"])["type"] == "event.accepted"

    # 24 hours later (the end written into the past through the admin API, masks sent back as read).
    shown = (await (await service.get(f"{ADMIN_API}/connections/{connection}", headers=ADMIN)).json())["data"]
    ended = {**shown["config"], "previous_secret_expires_at": (datetime.now(UTC) - timedelta(seconds=1)).isoformat()}
    response = await service.patch(f"{ADMIN_API}/connections/{connection}", json={"config": ended}, headers=ADMIN)
    assert response.status == 200, await response.text()
    stored = await stored_config(service, A, connection)
    assert (stored["secret"], stored["previous_secret"]) == (new, SECRET)  # the masks kept the stored secrets

    after = await page_view_delivery(service, receiver)
    assert " " not in after["headers"]["webhook-signature"]
    Webhook(new).verify(after["body"], after["headers"])
    with pytest.raises(WebhookVerificationError):
        Webhook(SECRET).verify(after["body"], after["headers"])


async def test_a_short_secret_stored_before_the_rule_can_be_rotated_away(service: TestClient) -> None:
    connection = ids(A)["connections"]
    async with service.app[DB].transaction() as tx:  # as saved before secrets had a minimum length
        row = await documents.get(tx, "connections", A, connection)
        assert row is not None
        body = row.body
        body["config"]["secret"] = SHORT
        await documents.update(tx, "connections", A, connection, dumps(body), {}, row.updated_at)
    response = await service.patch(f"{ADMIN_API}/connections/{connection}", json={"enabled": True}, headers=ADMIN)
    assert response.status == 200, await response.text()  # edits that keep it go on working
    new = (await rotate(service, connection))["secret"]
    stored = await stored_config(service, A, connection)
    assert (stored["secret"], stored["previous_secret"]) == (new, SHORT)


async def test_rotation_stays_in_its_account(service: TestClient) -> None:
    mine, theirs = ids(A)["connections"], ids(B)["connections"]
    theirs_before = await stored_config(service, B, theirs)
    found = []
    for url in (rotate_url(A, theirs), rotate_url(B, mine), rotate_url(A, "0f0f0f0f-0000-4000-8000-000000000000"),
                rotate_url("0f0f0f0f-0000-4000-8000-000000000000", mine)):
        found.append((await service.post(url, headers=ADMIN)).status)
    assert found == [404, 404, 404, 404]
    unauthenticated = await service.post(rotate_url(A, mine))
    assert unauthenticated.status == 401
    await rotate(service, mine)
    assert await stored_config(service, B, theirs) == theirs_before


async def test_only_webhook_connections_have_a_secret_to_rotate(service: TestClient) -> None:
    body = {"event_types": ["PURCHASE"],
            "destination": "messaging", "config": {"endpoint_url": "https://msg.example.com/in"}}
    created = await (await service.post(f"{ADMIN_API}/connections", json=body, headers=ADMIN)).json()
    response = await service.post(rotate_url(A, created["data"]["id"]), headers=ADMIN)
    assert response.status == 400
    assert (await response.json())["details"]["field"] == "destination"
    assert await stored_config(service, A, created["data"]["id"]) == body["config"]
