"""Google Ads click-conversion upload for an accepted event (product decisions, section 10; the
specification's Behavior events, rules 4, 5 and 8).

POST ``{endpoint_url or https://googleads.googleapis.com}/{api_version or v17}/customers/{customer_id}
:uploadClickConversions`` with the OAuth token and developer token, one conversion of the configured
conversion action with the native ``gclid`` the client sent. Without a ``gclid`` (even with ``gbraid`` or
``wbraid``) the conversion is skipped: nothing is synthesised. Custom variables are never sent; reversals
are not sent either.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from linksvc.clock import parse_iso
from linksvc.forwarding.outgoing import (
    EVENT,
    REVERSAL,
    Filtered,
    Outgoing,
    base_url,
    click_id,
    compact,
    post_json,
    required,
    setting,
)
from linksvc.forwarding.rules import REVERSAL_REFUSED
from linksvc.forwarding.verdicts import RETRY, Verdict, by_status

DEFAULT_BASE = "https://googleads.googleapis.com"
DEFAULT_VERSION = "v17"
NO_GCLID = "no native gclid: Google Ads click conversions need one"


def _account(value: str) -> str:
    """Google Ads account ids are written 123-456-7890 in the UI and sent as digits."""
    return value.replace("-", "")


def conversion_time(moment: str) -> str:
    """``yyyy-mm-dd hh:mm:ss+00:00``, the format the API requires."""
    return parse_iso(moment).astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S+00:00")


def build(kind: str, event: dict[str, Any], customer: dict[str, Any] | None, connection: dict[str, Any],
          delivery_id: str, now: datetime) -> Outgoing | Filtered:
    if kind == REVERSAL:
        return Filtered(REVERSAL_REFUSED["google_ads"])
    if kind != EVENT:
        raise ValueError(f"google_ads has no delivery kind {kind!r}")
    gclid = click_id(event, "gclid")
    if gclid is None:
        return Filtered(NO_GCLID)
    found = required(connection, "customer_id", "conversion_action_id", "access_token", "developer_token")
    if isinstance(found, Filtered):
        return found
    customer_id, action_id, token, developer_token = found
    customer_id = _account(customer_id)
    body = event.get("body") or {}
    conversion = compact({
        "gclid": gclid,
        "conversionAction": f"customers/{customer_id}/conversionActions/{action_id}",
        "conversionDateTime": conversion_time(event.get("issued_at") or body["issued_at"]),
        "conversionValue": body.get("value"),
        "currencyCode": body.get("currency"),
        "orderId": body.get("order_id"),
    })
    headers = {"Authorization": f"Bearer {token}", "developer-token": developer_token}
    login = setting(connection, "login_customer_id")
    if login:
        headers["login-customer-id"] = _account(login)
    version = setting(connection, "api_version") or DEFAULT_VERSION
    url = f"{base_url(connection, DEFAULT_BASE)}/{version}/customers/{customer_id}:uploadClickConversions"
    return post_json(url, {"conversions": [conversion], "partialFailure": True}, headers)


def judge(status: int, body: bytes, sent: Outgoing) -> Verdict:
    """401: the access token expired (or was revoked): a fresh one, then the upload again."""
    if status == 401:
        return Verdict(RETRY, "HTTP 401: the access token was refused", token_expired=True)
    return by_status(status)
