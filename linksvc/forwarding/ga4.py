"""Google Analytics 4 Measurement Protocol request: ``purchase`` (a custom event: its type) for an accepted
event, ``refund`` for a reversed purchase (product decisions, section 10; the specification's attribution
context and Behavior events, rule 8).

POST ``{endpoint_url or https://www.google-analytics.com}/mp/collect`` with ``measurement_id`` and
``api_secret`` for a web stream (identity ``analytics.client_id``), or ``firebase_app_id`` and ``api_secret``
for an app stream (``analytics.app_instance_id``). The identity is the analytics service's own, as the
client sent it: without one the delivery is filtered, never made up from a tracking id. ``session_id`` and
``session_number`` go only as sent, and only with the event of that session (a refund comes later).

``/mp/collect`` never reports an error: it answers 2xx to whatever it receives, malformed, refused or not
processed, and a wrong ``api_secret`` too
(https://developers.google.com/analytics/devguides/collection/protocol/ga4/reference). So a 2xx is all a
delivery can learn (``delivered`` means "GA4 received it", nothing more), 429 and 5xx are retried, and what
GA4 would drop is checked here before sending:

- an event more than 72 hours old (``timestamp_micros`` can backdate that far, no further) is ``skipped``
  with its age as the reason, never sent to vanish; the age is taken at send time, so a retry can skip it;
- the event's name and its parameters go through :mod:`linksvc.forwarding.ga4_names` (the naming rule,
  reserved names and prefixes, 25 parameters, 100-character values); one event per request (the limit is 25).

The connection test (:func:`build_test`) posts a synthetic purchase, built like the real ones, to the
validation server ``/debug/mp/collect``, which does answer: no ``validationMessages`` is ``delivered``, any
message is ``failed`` with its ``validationCode``, ``fieldPath`` and ``description``
(https://developers.google.com/analytics/devguides/collection/protocol/ga4/validating-events). The
validation server does not check ``api_secret``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode, urlsplit

from linksvc.clock import parse_iso
from linksvc.forwarding.ga4_names import fit_params, ga4_name
from linksvc.forwarding.outgoing import (
    EVENT,
    REVERSAL,
    Filtered,
    Outgoing,
    Skipped,
    base_url,
    compact,
    post_json,
    setting,
    unix_micros,
)
from linksvc.forwarding.verdicts import DELIVERED, FAILED, Verdict, by_status, excerpt, json_body
from linksvc.loyalty.models import PURCHASE

DEFAULT_BASE = "https://www.google-analytics.com"
COLLECT = "/mp/collect"
DEBUG_COLLECT = "/debug/mp/collect"
MAX_AGE = timedelta(hours=72)
NO_IDENTITY = "no analytics identity (client_id or app_instance_id) was sent"
CAMPAIGN = (("utm_source", "campaign_source"), ("utm_medium", "campaign_medium"), ("utm_campaign", "campaign_name"),
            ("utm_term", "campaign_term"), ("utm_content", "campaign_content"))
# GA4 lists these as reserved, yet the Measurement Protocol asks for them: they are sent under their own names.
SESSION_PARAMS = frozenset({"session_id", "session_number"})
TEST_IDENTITY = {"client_id": "1000000000.1000000000", "app_instance_id": "0123456789abcdef0123456789abcdef"}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def stream(connection: dict[str, Any], analytics: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]] | Filtered:
    """(query, identity): the web stream when a client_id was sent and a measurement_id is configured, else
    the app stream when an app_instance_id was sent and a firebase_app_id is configured."""
    client_id, app_instance_id = _text(analytics.get("client_id")), _text(analytics.get("app_instance_id"))
    if client_id is None and app_instance_id is None:
        return Filtered(NO_IDENTITY)
    secret = setting(connection, "api_secret")
    if secret is None:
        return Filtered("the connection's config has no api_secret")
    measurement_id, firebase_app_id = setting(connection, "measurement_id"), setting(connection, "firebase_app_id")
    if client_id is not None and measurement_id is not None:
        return {"measurement_id": measurement_id, "api_secret": secret}, {"client_id": client_id}
    if app_instance_id is not None and firebase_app_id is not None:
        return {"firebase_app_id": firebase_app_id, "api_secret": secret}, {"app_instance_id": app_instance_id}
    return Filtered("the connection's config has no measurement_id" if client_id is not None
                    else "the connection's config has no firebase_app_id")


def params(body: dict[str, Any], with_session: bool) -> dict[str, Any]:
    """The event's parameters, the ones GA4's reports use first (the order :func:`fit_params` keeps)."""
    analytics = body.get("analytics") or {}
    attribution = body.get("attribution") or {}
    items = [compact({"item_id": p.get("sku"), "item_name": p.get("name"), "quantity": p.get("quantity"),
                      "price": p.get("price")})
             for p in body.get("products") or []]
    return compact({
        "transaction_id": body.get("order_id"),
        "currency": body.get("currency"),
        "value": body.get("value"),
        "items": items,
        "session_id": analytics.get("session_id") if with_session else None,
        "session_number": analytics.get("session_number") if with_session else None,
        **{name: _text(attribution.get(utm)) for utm, name in CAMPAIGN},
    })


def too_old(moment: str | datetime, now: datetime) -> str | None:
    """Why GA4 would drop an event of that time sent now (older than 72 hours), or None."""
    when = parse_iso(moment) if isinstance(moment, str) else moment
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    age = now - when
    if age < MAX_AGE:
        return None
    return (f"the event is {age // timedelta(hours=1)} hours old: GA4 drops events older than 72 hours "
            "without a word")


def ga4_event(name: str, event_params: dict[str, Any]) -> dict[str, Any]:
    fitted, _dropped = fit_params(event_params, own=SESSION_PARAMS)
    return {"name": ga4_name(name), "params": fitted}


def build(kind: str, event: dict[str, Any], customer: dict[str, Any] | None, connection: dict[str, Any],
          delivery_id: str, now: datetime) -> Outgoing | Filtered:
    body = event.get("body") or {}
    found = stream(connection, body.get("analytics") or {})
    if isinstance(found, Filtered):
        return found
    query, identity = found
    if kind == EVENT:
        name = "purchase" if event["type"] == PURCHASE else event["type"]
        moment = event.get("issued_at") or body["issued_at"]
    elif kind == REVERSAL:
        if not event.get("reversal"):
            return Filtered("the event has not been reversed")
        name, moment = "refund", event["reversal"]["reversed_at"]
    else:
        raise ValueError(f"ga4 has no delivery kind {kind!r}")
    old = too_old(moment, now)
    if old is not None:
        return Skipped(old)
    payload = {**identity, "timestamp_micros": unix_micros(moment),
               "events": [ga4_event(name, params(body, with_session=kind == EVENT))]}
    return post_json(f"{base_url(connection, DEFAULT_BASE)}{COLLECT}?{urlencode(query)}", payload)


def build_test(connection: dict[str, Any], now: datetime) -> Outgoing | Filtered:
    """A synthetic purchase, mapped as real ones are, for the validation server (never counted in reports)."""
    found = stream(connection, TEST_IDENTITY)
    if isinstance(found, Filtered):
        if setting(connection, "api_secret") is not None:
            return Filtered("the connection's config has no measurement_id or firebase_app_id")
        return found
    query, identity = found
    body = {"order_id": f"connection-test-{unix_micros(now) // 1_000_000}", "currency": "USD", "value": 1,
            "products": [{"sku": "connection-test", "name": "Connection test", "quantity": 1, "price": 1}]}
    payload = {**identity, "timestamp_micros": unix_micros(now), "validation_behavior": "ENFORCE_RECOMMENDATIONS",
               "events": [ga4_event("purchase", params(body, with_session=False))]}
    return post_json(f"{base_url(connection, DEFAULT_BASE)}{DEBUG_COLLECT}?{urlencode(query)}", payload)


def validation_problem(message: Any) -> str:
    """One validation message as ``CODE at fieldPath: description``."""
    if not isinstance(message, dict):
        return str(message)
    code, field, text = (message.get(k) for k in ("validationCode", "fieldPath", "description"))
    return f"{code or 'UNKNOWN'}" + (f" at {field}" if field else "") + (f": {text}" if text else "")


def judge(status: int, body: bytes, sent: Outgoing) -> Verdict:
    """``/mp/collect``: the status alone (2xx is all GA4 ever says). The validation server: its messages."""
    if not urlsplit(sent.url).path.endswith(DEBUG_COLLECT) or not 200 <= status < 300:
        return by_status(status)
    answer = json_body(body)
    messages = answer.get("validationMessages") if isinstance(answer, dict) else None
    if not isinstance(messages, list):
        return Verdict(FAILED, f"GA4's validation server answered without validationMessages: {excerpt(body)}")
    if not messages:
        return Verdict(DELIVERED, "GA4's validation server found nothing wrong")
    return Verdict(FAILED, "GA4 validation: " + "; ".join(validation_problem(m) for m in messages))
