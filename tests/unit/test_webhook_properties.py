"""Properties of webhook signing (product decisions, section 10; https://www.standardwebhooks.com): the official
``standardwebhooks`` library verifies every delivery, whatever its payload, secret or id, and refuses it once
its body, id or timestamp is changed."""

from __future__ import annotations

import base64
import string
import time
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from linksvc.forwarding.outgoing import Outgoing
from linksvc.forwarding.webhook import build, secret_key, signature
from linksvc.jsoncodec import dumpb

FAST = settings(max_examples=60, deadline=None)

# JSON a client may put in an event: nested objects, unicode, numbers.
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10**15, 10**15) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=10,
)
KEYS = st.binary(min_size=1, max_size=64)
PADDED = st.booleans()
IDS = st.text(string.ascii_letters + string.digits + "_-:.", min_size=1, max_size=40)
# The library refuses timestamps more than five minutes from its own clock.
OFFSETS = st.integers(-200, 200)


def whsec(key: bytes, padded: bool) -> str:
    encoded = base64.b64encode(key).decode()
    return "whsec_" + (encoded if padded else encoded.rstrip("="))


def headers(msg_id: str, timestamp: int, sig: str) -> dict[str, str]:
    return {"webhook-id": msg_id, "webhook-timestamp": str(timestamp), "webhook-signature": sig}


@FAST
@given(JSON, KEYS, PADDED, IDS, OFFSETS)
def test_the_library_verifies_any_payload_secret_and_id(payload: Any, key: bytes, padded: bool, msg_id: str,
                                                        offset: int) -> None:
    secret = whsec(key, padded)
    body, timestamp = dumpb({"type": "event.accepted", "data": payload}), int(time.time()) + offset
    sig = signature(secret_key(secret), msg_id, timestamp, body)
    assert Webhook(secret).verify(body, headers(msg_id, timestamp, sig)) == {"type": "event.accepted", "data": payload}


@FAST
@given(JSON, JSON, KEYS, PADDED, IDS, IDS, OFFSETS, st.integers(-100, 100).filter(bool), KEYS)
def test_a_changed_body_id_timestamp_or_secret_fails(payload: Any, other_payload: Any, key: bytes, padded: bool,
                                                     msg_id: str, other_id: str, offset: int, shift: int,
                                                     other_key: bytes) -> None:
    secret = whsec(key, padded)
    body, timestamp = dumpb({"data": payload}), int(time.time()) + offset
    sig = signature(secret_key(secret), msg_id, timestamp, body)
    other_body = dumpb({"data": other_payload})
    changed = [
        (other_body, headers(msg_id, timestamp, sig), secret) if other_body != body else None,
        (body, headers(other_id, timestamp, sig), secret) if other_id != msg_id else None,
        (body, headers(msg_id, timestamp + shift, sig), secret),
        (body, headers(msg_id, timestamp, sig), whsec(other_key, padded)) if other_key != key else None,
    ]
    for case in filter(None, changed):
        with pytest.raises(WebhookVerificationError):
            Webhook(case[2]).verify(*case[:2])
    # Our signer too gives each changed delivery a signature of its own.
    signatures = {sig, signature(secret_key(secret), msg_id, timestamp + shift, body)}
    if other_body != body:
        signatures.add(signature(secret_key(secret), msg_id, timestamp, other_body))
    if other_id != msg_id:
        signatures.add(signature(secret_key(secret), other_id, timestamp, body))
    assert len(signatures) == 2 + (other_body != body) + (other_id != msg_id)


@FAST
@given(st.dictionaries(st.text(max_size=8), JSON, max_size=4), KEYS, PADDED, IDS, OFFSETS)
def test_every_built_delivery_verifies_and_carries_what_the_client_sent(properties: dict[str, Any], key: bytes,
                                                                        padded: bool, delivery_id: str,
                                                                        offset: int) -> None:
    secret = whsec(key, padded)
    now = datetime.fromtimestamp(time.time() + offset, UTC)
    event = {"id": "e-1", "type": "ADD_TO_CART", "customer_id": "c-1",
             "body": {"type": "ADD_TO_CART", "properties": properties}}
    connection = {"config": {"endpoint_url": "https://hooks.example/in", "secret": secret}}
    request = build("event.accepted", event, None, connection, delivery_id, now)
    assert isinstance(request, Outgoing)
    assert request.headers["webhook-id"] == delivery_id
    received = Webhook(secret).verify(request.body, request.headers)
    assert received["type"] == "event.accepted" and received["data"]["properties"] == properties
