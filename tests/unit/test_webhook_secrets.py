"""Webhook signing secrets: which secrets are accepted, what rotation stores, and which secrets sign a delivery
at a given moment, checked with the reference ``standardwebhooks`` library for each secret."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from linksvc.errors import InvalidField
from linksvc.forwarding.outgoing import Outgoing
from linksvc.forwarding.webhook import build
from linksvc.forwarding.webhook_secrets import (
    check_secrets,
    new_secret,
    rotated,
    secret_key,
    secret_problem,
    signing_secrets,
)


def whsec(size: int, *, padded: bool = True) -> str:
    encoded = base64.b64encode(bytes(range(size))).decode()
    return "whsec_" + (encoded if padded else encoded.rstrip("="))


OLD, NEW = whsec(32), new_secret()
ROTATED_AT = datetime(2024, 5, 2, 8, 0, tzinfo=UTC)
EXPIRES = ROTATED_AT + timedelta(hours=24)

SECRETS: list[tuple[Any, bool]] = [
    (whsec(24), True),
    (whsec(32), True),
    (whsec(64), True),
    (whsec(25, padded=False), True),  # the reference library pads what is left off
    (whsec(23), False),
    (whsec(65), False),
    (whsec(12), False),  # 16 characters of base64
    ("whsec_" + "ab-_" * 8, False),  # URL-safe base64 decodes to other bytes in the reference library
    ("whsec_not base64!", False),
    ("whsec_" + "QUJD" * 8 + "=", False),  # padding where none belongs
    ("whsec_", False),
    ("", False),
    (base64.b64encode(bytes(32)).decode(), False),  # no whsec_ prefix
    (None, False),
    (12345, False),
]


@pytest.mark.parametrize(("secret", "valid"), SECRETS, ids=[str(s)[:24] for s, _ in SECRETS])
def test_which_secrets_are_accepted(secret: Any, valid: bool) -> None:
    assert (secret_problem(secret) is None) is valid


def test_a_new_secret_is_32_random_bytes() -> None:
    first, second = new_secret(), new_secret()
    assert first != second
    assert secret_problem(first) is None and len(secret_key(first)) == 32


def test_rotation_keeps_the_old_secret_for_24_hours() -> None:
    config = {"endpoint_url": "https://hooks.example/in", "secret": OLD}
    after = rotated(config, ROTATED_AT)
    assert after["endpoint_url"] == "https://hooks.example/in"
    assert after["previous_secret"] == OLD and after["secret"] not in (OLD, after["previous_secret"])
    assert after["previous_secret_expires_at"] == "2024-05-03T08:00:00.000000Z"
    # A second rotation drops the secret of the first: never more than two signatures.
    again = rotated(after, ROTATED_AT + timedelta(hours=1))
    assert again["previous_secret"] == after["secret"] and OLD not in again.values()


def test_rotation_drops_a_stored_secret_that_cannot_sign() -> None:
    after = rotated({"secret": "whsec_not base64!"}, ROTATED_AT)
    assert "previous_secret" not in after and secret_problem(after["secret"]) is None


OVERLAP_CASES = [
    ("just rotated", ROTATED_AT, [NEW, OLD]),
    ("a second before the end", EXPIRES - timedelta(seconds=1), [NEW, OLD]),
    ("at the end", EXPIRES, [NEW]),
    ("after the end", EXPIRES + timedelta(days=3), [NEW]),
]


@pytest.mark.parametrize(("name", "now", "expected"), OVERLAP_CASES, ids=[c[0] for c in OVERLAP_CASES])
def test_signing_secrets_over_the_overlap(name: str, now: datetime, expected: list[str]) -> None:
    config = {"secret": NEW, "previous_secret": OLD, "previous_secret_expires_at": "2024-05-03T08:00:00.000000Z"}
    assert signing_secrets(config, now) == expected


def test_without_a_usable_previous_secret_only_the_current_one_signs() -> None:
    assert signing_secrets({"secret": NEW}, ROTATED_AT) == [NEW]
    assert signing_secrets({"secret": NEW, "previous_secret": OLD}, ROTATED_AT) == [NEW]  # no end: not used
    unusable = {"secret": NEW, "previous_secret": "whsec_not base64!",
                "previous_secret_expires_at": "2024-05-03T08:00:00Z"}
    assert signing_secrets(unusable, ROTATED_AT) == [NEW]


def rotated_connection(expires: datetime) -> dict[str, Any]:
    return {"destination": "webhook", "config": {
        "endpoint_url": "http://127.0.0.1:9/hook", "secret": NEW, "previous_secret": OLD,
        "previous_secret_expires_at": expires.isoformat()}}


def send_now(connection: dict[str, Any]) -> Outgoing:
    # The library refuses timestamps more than five minutes from its own clock: sign at the real time.
    event = {"id": "ev-1", "type": "page_view", "customer_id": "c-1", "body": {"type": "page_view"}}
    request = build("event.accepted", event, None, connection, "msg_1", datetime.now(UTC))
    assert isinstance(request, Outgoing)
    return request


def test_during_the_overlap_both_secrets_verify_new_first() -> None:
    request = send_now(rotated_connection(datetime.now(UTC) + timedelta(hours=23)))
    signatures = request.headers["webhook-signature"].split(" ")
    assert len(signatures) == 2 and all(s.startswith("v1,") for s in signatures)
    for secret in (NEW, OLD):
        assert Webhook(secret).verify(request.body, request.headers)["type"] == "event.accepted"
    # New first: the first signature alone verifies with the new secret.
    assert Webhook(NEW).verify(request.body, {**request.headers, "webhook-signature": signatures[0]})
    with pytest.raises(WebhookVerificationError):
        Webhook(whsec(40)).verify(request.body, request.headers)


def test_after_the_overlap_only_the_new_secret_verifies() -> None:
    request = send_now(rotated_connection(datetime.now(UTC) - timedelta(seconds=1)))
    assert " " not in request.headers["webhook-signature"]
    Webhook(NEW).verify(request.body, request.headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(OLD).verify(request.body, request.headers)


def path(field: str) -> str:
    return f"connections[0].{field}"


SHORT = whsec(16)
CHECKS: list[tuple[str, dict[str, Any], dict[str, Any] | None, str | None]] = [
    ("valid new secret", {"secret": NEW}, None, None),
    ("short new secret", {"secret": SHORT}, None, "connections[0].config.secret"),
    ("short secret kept as stored", {"secret": SHORT}, {"secret": SHORT}, None),
    ("short secret changed", {"secret": whsec(20)}, {"secret": SHORT}, "connections[0].config.secret"),
    ("stored secret moved to previous", {"secret": NEW, "previous_secret": SHORT,
                                         "previous_secret_expires_at": "2024-05-03T08:00:00Z"},
     {"secret": SHORT}, None),
    ("new short previous secret", {"secret": NEW, "previous_secret": SHORT,
                                   "previous_secret_expires_at": "2024-05-03T08:00:00Z"}, None,
     "connections[0].config.previous_secret"),
    ("previous secret without its end", {"secret": NEW, "previous_secret": OLD}, None,
     "connections[0].config.previous_secret_expires_at"),
    ("previous secret with an end that is no time", {"secret": NEW, "previous_secret": OLD,
                                                     "previous_secret_expires_at": "tomorrow"}, None,
     "connections[0].config.previous_secret_expires_at"),
    ("an end without a previous secret", {"secret": NEW, "previous_secret_expires_at": "2024-05-03T08:00:00Z"},
     None, "connections[0].config.previous_secret_expires_at"),
    ("missing secret", {}, None, "connections[0].config.secret"),
]


@pytest.mark.parametrize(("name", "config", "stored", "field"), CHECKS, ids=[c[0] for c in CHECKS])
def test_check_secrets_names_the_bad_field(name: str, config: dict[str, Any], stored: dict[str, Any] | None,
                                           field: str | None) -> None:
    if field is None:
        check_secrets(config, stored, path)
        return
    with pytest.raises(InvalidField) as caught:
        check_secrets(config, stored, path)
    assert caught.value.path == field
