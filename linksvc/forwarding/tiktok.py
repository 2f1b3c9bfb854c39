"""TikTok's Events API 2.0 request for an accepted event (product decisions, section 10; the
specification's Behavior events, rules 4 and 8).

POST ``{endpoint_url or https://business-api.tiktok.com}/open_api/v1.3/event/track/`` with header
``Access-Token``: one web event of the pixel ``config.pixel_code``, ``CompletePayment`` for a purchase (a
custom event: its type), the same ``event_id`` rule as Meta's (deduplication with the pixel), email, phone
and customer id hashed, and ``ttclid`` only when the client sent it. Reversals are never sent (TikTok would
count one more payment). Custom events' free-form properties are not forwarded (no unhashed personal data).

TikTok answers HTTP 200 to a refused event too: the body's ``code`` says what happened (``{"code", "message",
"request_id", "data"}``; https://github.com/stape-io/tiktok-tag/issues/10 shows a real refusal). ``code`` 0
is delivered; anything else never is:

    40100 (too many requests), 5xxxx (TikTok's own errors)   retry
    40001 (the token lacks a permission), 40105 (the access   failed: a person must replace the access
        token is incorrect or revoked)                        token or grant the scope, then retry by hand
    any other code (40002 invalid parameter...)               failed: TikTok refused the data

The message is TikTok's own code, message and ``request_id`` (what TikTok's support asks for). A body
without a ``code`` (a proxy's page, a 5xx) is judged by its status. The connection test sends one synthetic
payment with the connection's ``test_event_code``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from linksvc.forwarding.outgoing import (
    EVENT,
    REVERSAL,
    Filtered,
    Outgoing,
    ads_event_id,
    base_url,
    click_id,
    compact,
    contact,
    hashed_email,
    hashed_phone,
    post_json,
    required,
    setting,
    sha256_hex,
    unix_seconds,
)
from linksvc.forwarding.rules import REVERSAL_REFUSED
from linksvc.forwarding.verdicts import DELIVERED, FAILED, RETRY, Verdict, by_status, json_body
from linksvc.jsoncodec import loads
from linksvc.loyalty.models import PURCHASE

DEFAULT_BASE = "https://business-api.tiktok.com"
PATH = "/open_api/v1.3/event/track/"
RATE_LIMITED = frozenset({40100})
CREDENTIAL_CODES = frozenset({40001, 40105})
PERSON_MUST_FIX = ("a person must replace the connection's access_token (or grant it the permission), "
                   "then retry the delivery")


def verdict(code: int, message: Any, request_id: Any) -> Verdict:
    """What TikTok's ``code`` means (the table in the module docstring)."""
    said = f"TikTok code {code}" + (f": {message}" if message else "") + (
        f" (request_id {request_id})" if request_id else "")
    if code == 0:
        return Verdict(DELIVERED)
    if code in RATE_LIMITED or 50000 <= code < 60000:
        return Verdict(RETRY, said)
    if code in CREDENTIAL_CODES:
        return Verdict(FAILED, f"{said}; {PERSON_MUST_FIX}")
    return Verdict(FAILED, said)


def user(event: dict[str, Any], customer: dict[str, Any] | None) -> dict[str, Any]:
    email, phone = contact(event, customer)
    return compact({
        "email": hashed_email(email),
        "phone": hashed_phone(phone),
        "external_id": sha256_hex(event["customer_id"]) if event.get("customer_id") else None,
        "ttclid": click_id(event, "ttclid"),
    })


def properties(body: dict[str, Any]) -> dict[str, Any]:
    contents = [compact({"content_id": p.get("sku"), "content_name": p.get("name"), "quantity": p.get("quantity"),
                         "price": p.get("price")})
                for p in body.get("products") or []]
    return compact({
        "currency": body.get("currency"), "value": body.get("value"), "order_id": body.get("order_id"),
        "contents": contents, "content_type": "product" if contents else None,
    })


def track_event(event: dict[str, Any], customer: dict[str, Any] | None) -> dict[str, Any]:
    body = event.get("body") or {}
    is_purchase = event["type"] == PURCHASE
    return compact({
        "event": "CompletePayment" if is_purchase else event["type"],
        "event_time": unix_seconds(event.get("issued_at") or body["issued_at"]),
        "event_id": ads_event_id(event),
        "user": user(event, customer),
        "properties": properties(body) if is_purchase else None,
    })


def build(kind: str, event: dict[str, Any], customer: dict[str, Any] | None, connection: dict[str, Any],
          delivery_id: str, now: datetime) -> Outgoing | Filtered:
    if kind == REVERSAL:
        return Filtered(REVERSAL_REFUSED["tiktok"])
    if kind != EVENT:
        raise ValueError(f"tiktok has no delivery kind {kind!r}")
    found = required(connection, "pixel_code", "access_token")
    if isinstance(found, Filtered):
        return found
    pixel_code, token = found
    payload: dict[str, Any] = {"event_source": "web", "event_source_id": pixel_code,
                               "data": [track_event(event, customer)]}
    # config.test_event_code is for the connection's test only: on a real delivery it would make the vendor
    # show the event as a test and count it nowhere.
    return post_json(base_url(connection, DEFAULT_BASE) + PATH, payload, {"Access-Token": token})


def build_test(connection: dict[str, Any], now: datetime) -> Outgoing | Filtered:
    """A synthetic ``CompletePayment`` with the connection's ``test_event_code``: TikTok shows it under Test
    Events and does not count it. Without a code nothing is sent (it would count as a real payment)."""
    test_code = setting(connection, "test_event_code")
    if test_code is None:
        return Filtered("the connection's config has no test_event_code (TikTok Events Manager > Test events)")
    moment = now.isoformat()
    event = {"id": f"connection-test-{unix_seconds(now)}", "type": PURCHASE, "customer_id": None,
             "issued_at": moment, "body": {"issued_at": moment, "currency": "USD", "value": 1,
                                           "products": [{"sku": "connection-test", "quantity": 1, "price": 1}]}}
    request = build(EVENT, event, None, connection, "connection-test", now)
    if isinstance(request, Filtered):
        return request
    payload = {**loads(request.body), "test_event_code": test_code}
    return post_json(request.url, payload, {"Access-Token": request.headers["Access-Token"]})


def judge(status: int, body: bytes, sent: Outgoing) -> Verdict:
    """TikTok's ``code`` decides whatever the status (it answers 200 to a refused event): see :func:`verdict`."""
    answer = json_body(body)
    code = answer.get("code") if isinstance(answer, dict) else None
    if isinstance(code, bool) or not isinstance(code, int):
        if 200 <= status < 300:  # TikTok always says its code: this answer is someone else's (a proxy, a portal)
            return Verdict(RETRY, f"HTTP {status} without TikTok's code: not an answer of the Events API")
        text = answer.get("message") if isinstance(answer, dict) else None
        return by_status(status, f"{code}: {text}" if code is not None and text else None)
    return verdict(code, answer.get("message"), answer.get("request_id"))
