"""Google Ads click-conversion upload for an accepted event, the connection test, and what Google's answer
means (product decisions, section 10; the specification's Behavior events, rules 4, 5 and 8).

POST ``{endpoint_url or https://googleads.googleapis.com}/{version}/customers/{customer_id}
:uploadClickConversions``, ``version`` from :func:`linksvc.forwarding.versions.version_of` (the connection's
``api_version``, else the current default), with the OAuth access token, one conversion of the configured
conversion action with the native ``gclid`` the client sent, and ``partialFailure`` on (Google says it should
always be). Without a ``gclid`` (even with ``gbraid`` or ``wbraid``) the conversion is skipped: nothing is
synthesised. Custom variables are never sent; reversals are not sent either.

Config: ``customer_id`` and ``conversion_action_id``; an ``access_token``, or ``client_id``, ``client_secret``
and ``refresh_token`` (with ``token_url``, Google's by default) from which :mod:`linksvc.forwarding.oauth`
gets one; optional ``login_customer_id`` (a manager account) and ``developer_token`` (sent when set: Google
ignores the header since developer tokens were sunset on 2026-09-09).

What Google's answer means (:func:`judge`; only the error codes count, never the message texts):

    200, no ``partialFailureError``                    delivered
    200, the conversion refused for good               failed, with each error's code, place and message
    200, only "too recent, try again in 6 hours"       retry (``TOO_RECENT_EVENT``, ``TOO_RECENT_CONVERSION_ACTION``)
    200, only "already recorded" (a resend)            delivered (the order id or click was recorded before)
    401 / UNAUTHENTICATED                              retry at once with a fresh access token
    429 / RESOURCE_EXHAUSTED, 5xx / UNAVAILABLE ...    retry
    400, 403 and any other error                       failed, with Google's codes (403: the OAuth user or the
                                                       Cloud project may not use this customer)
    a body that is not JSON                            by the status alone

Google's ``requestId`` ends the message when the answer has one.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from linksvc.clock import parse_iso
from linksvc.forwarding.oauth import CREDENTIALS
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
from linksvc.forwarding.verdicts import DELIVERED, FAILED, RETRY, Verdict, by_status, excerpt, json_body
from linksvc.forwarding.versions import version_of

DEFAULT_BASE = "https://googleads.googleapis.com"
NO_GCLID = "no native gclid: Google Ads click conversions need one"
TEST_GCLID = "linksvc-connection-test"  # made up: Google cannot decode it, which the test expects


def _account(value: str) -> str:
    """Google Ads account ids are written 123-456-7890 in the UI and sent as digits."""
    return value.replace("-", "")


def conversion_time(moment: str | datetime) -> str:
    """``yyyy-mm-dd hh:mm:ss+00:00``, the format the API requires."""
    when = parse_iso(moment) if isinstance(moment, str) else moment
    return when.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S+00:00")


def api_version(connection: dict[str, Any]) -> str:
    """The connection's ``api_version`` (``26`` is read as ``v26``), else the current Google Ads version."""
    version = version_of({**connection, "destination": "google_ads"})
    if version is None:  # versions.KNOWN always names a google_ads default
        raise LookupError("no Google Ads API version is known")
    return f"v{version}" if version.isdigit() else version


def missing_token(connection: dict[str, Any]) -> str | None:
    """Why no access token can be had, naming what to configure; None when there is one."""
    if setting(connection, "access_token"):
        return None
    absent = [name for name in CREDENTIALS if not setting(connection, name)]
    if len(absent) == len(CREDENTIALS):
        return "the connection's config has no access_token, nor client_id, client_secret and refresh_token"
    if absent:
        return f"the connection's config has no access_token, and its refresh token set lacks {', '.join(absent)}"
    return "the connection's config has no access_token: the refresh token was not exchanged for one"


def _upload(connection: dict[str, Any], gclid: str, moment: str | datetime, body: dict[str, Any],
            validate_only: bool) -> Outgoing | Filtered:
    found = required(connection, "customer_id", "conversion_action_id")
    if isinstance(found, Filtered):
        return found
    reason = missing_token(connection)
    if reason is not None:
        return Filtered(reason)
    customer_id, action_id = _account(found[0]), found[1]
    conversion = compact({
        "gclid": gclid,
        "conversionAction": f"customers/{customer_id}/conversionActions/{action_id}",
        "conversionDateTime": conversion_time(moment),
        "conversionValue": body.get("value"),
        "currencyCode": body.get("currency"),
        "orderId": body.get("order_id"),
    })
    headers = {"Authorization": f"Bearer {setting(connection, 'access_token')}"}
    developer_token = setting(connection, "developer_token")
    if developer_token:
        headers["developer-token"] = developer_token
    login = setting(connection, "login_customer_id")
    if login:
        headers["login-customer-id"] = _account(login)
    url = f"{base_url(connection, DEFAULT_BASE)}/{api_version(connection)}/customers/{customer_id}" \
          ":uploadClickConversions"
    payload: dict[str, Any] = {"conversions": [conversion], "partialFailure": True}
    if validate_only:
        payload["validateOnly"] = True
    return post_json(url, payload, headers)


def build(kind: str, event: dict[str, Any], customer: dict[str, Any] | None, connection: dict[str, Any],
          delivery_id: str, now: datetime) -> Outgoing | Filtered:
    if kind == REVERSAL:
        return Filtered(REVERSAL_REFUSED["google_ads"])
    if kind != EVENT:
        raise ValueError(f"google_ads has no delivery kind {kind!r}")
    gclid = click_id(event, "gclid")
    if gclid is None:
        return Filtered(NO_GCLID)
    body = event.get("body") or {}
    return _upload(connection, gclid, event.get("issued_at") or body["issued_at"], body, validate_only=False)


def build_test(connection: dict[str, Any], now: datetime) -> Outgoing | Filtered:
    """The same upload of one synthetic conversion of the configured action, with a made-up gclid and
    ``validateOnly``: Google validates the request without uploading anything (nothing is counted). What the
    test checks is the access token, the customer (and manager account), the API version and the conversion
    action; Google's refusal of the made-up click itself is expected, and :func:`judge` calls it delivered."""
    return _upload(connection, TEST_GCLID, now, {}, validate_only=True)




# -- what Google's answer means ---------------------------------------------------------------------------

# ConversionUploadError codes whose text says to import again in 6 hours: nothing is wrong with the data.
TRY_LATER = frozenset({"TOO_RECENT_EVENT", "TOO_RECENT_CONVERSION_ACTION", "TOO_RECENT_CALL"})
# A resend of a conversion Google already recorded (at-least-once delivery: the first answer was lost).
ALREADY_RECORDED = frozenset({"ORDER_ID_ALREADY_IN_USE", "CLICK_CONVERSION_ALREADY_EXISTS"})
# About the click alone: what a connection test's made-up gclid gets once everything else was accepted.
ABOUT_THE_CLICK = frozenset({"UNPARSEABLE_GCLID", "EVENT_NOT_FOUND", "CLICK_NOT_FOUND", "EXPIRED_EVENT",
                             "TOO_RECENT_EVENT", "CONVERSION_PRECEDES_EVENT", "INVALID_CUSTOMER_FOR_CLICK"})
# google.rpc codes worth another try: DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED, INTERNAL, UNAVAILABLE.
TRANSIENT = frozenset({"DEADLINE_EXCEEDED", "RESOURCE_EXHAUSTED", "ABORTED", "INTERNAL", "UNAVAILABLE"})
TRANSIENT_CODES = frozenset({4, 8, 10, 13, 14})
MESSAGE_CHARS = 480  # under the verdict's own cut, so that the request id is never lost
ERROR_CHARS = 160
TEST_PASSED = "validated by Google (validateOnly): nothing was uploaded"


def _text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _place(error: dict[str, Any]) -> str:
    """``conversions[0].gclid`` from the error's ``location.fieldPathElements``."""
    path = []
    for element in (error.get("location") or {}).get("fieldPathElements") or []:
        if isinstance(element, dict) and _text(element.get("fieldName")):
            index = element.get("index")
            path.append(f"{element['fieldName']}[{index}]" if isinstance(index, int) else element["fieldName"])
    return ".".join(path)


def google_ads_errors(status: dict[str, Any]) -> tuple[list[tuple[str, str]], str | None]:
    """``(code, description)`` of each error of the ``GoogleAdsFailure`` in a google.rpc ``Status`` (an
    ``error`` or a ``partialFailureError``), as ``conversionUploadError: EVENT_NOT_FOUND at conversions[0]:
    message``, and Google's request id."""
    found: list[tuple[str, str]] = []
    request_id = None
    for detail in status.get("details") or []:
        if not isinstance(detail, dict) or not str(detail.get("@type", "")).endswith("GoogleAdsFailure"):
            continue
        request_id = request_id or _text(detail.get("requestId"))
        for error in detail.get("errors") or []:
            if not isinstance(error, dict):
                continue
            codes = error.get("errorCode")
            kind, code = next(iter(codes.items())) if isinstance(codes, dict) and codes else ("unknown", "UNKNOWN")
            code = str(code)
            place = _place(error)
            message = (_text(error.get("message")) or "")[:ERROR_CHARS]
            found.append((code, f"{kind}: {code}" + (f" at {place}" if place else "") +
                          (f": {message}" if message else "")))
    return found, request_id


def _message(head: str, detail: str | None, request_id: str | None) -> str:
    tail = f" (request id {request_id})" if request_id else ""
    text = head + (f": {detail}" if detail else "")
    return text[:MESSAGE_CHARS - len(tail)] + tail


def _is_test(sent: bytes) -> bool:
    request = json_body(sent)
    return isinstance(request, dict) and request.get("validateOnly") is True


def _refusal(status: int, error: dict[str, Any]) -> Verdict:
    """An RPC-level error: nothing of the request was done."""
    errors, request_id = google_ads_errors(error)
    rpc = _text(error.get("status"))
    detail = "; ".join(text for _, text in errors) or _text(error.get("message"))
    message = _message(f"HTTP {status}" + (f" {rpc}" if rpc else ""), detail, request_id)
    if status == 401 or rpc == "UNAUTHENTICATED":
        return Verdict(RETRY, message, token_expired=True)
    if status in (408, 429) or status >= 500 or rpc in TRANSIENT:
        return Verdict(RETRY, message)
    return Verdict(FAILED, message)


def _uploaded(answer: dict[str, Any], test: bool) -> Verdict:
    """A 200: delivered unless the ``partialFailureError`` refused the conversion."""
    failure = answer.get("partialFailureError")
    if not isinstance(failure, dict) or not failure:
        return Verdict(DELIVERED, TEST_PASSED if test else None)
    errors, request_id = google_ads_errors(failure)
    codes = {code for code, _ in errors}
    detail = "; ".join(text for _, text in errors) or _text(failure.get("message"))
    if test and codes and codes <= ABOUT_THE_CLICK:
        return Verdict(DELIVERED, _message(f"{TEST_PASSED}; the made-up click was refused, as expected", detail,
                                           request_id))
    if codes and codes <= ALREADY_RECORDED:
        return Verdict(DELIVERED, _message("already recorded by Google", detail, request_id))
    if (codes and codes <= TRY_LATER) or (not codes and failure.get("code") in TRANSIENT_CODES):
        return Verdict(RETRY, _message("partial failure, to be tried again later", detail, request_id))
    return Verdict(FAILED, _message("partial failure", detail or "no error details", request_id))


def judge(status: int, body: bytes, sent: Outgoing) -> Verdict:
    """What Google's answer to an upload or a connection test means (the table in the module docstring)."""
    answer = json_body(body)
    if not isinstance(answer, dict):
        if status == 401:
            return Verdict(RETRY, "HTTP 401: the access token was refused", token_expired=True)
        return by_status(status, excerpt(body) if body and not 200 <= status < 300 else None)
    error = answer.get("error")
    if isinstance(error, dict):
        return _refusal(status, error)
    if 200 <= status < 300:
        return _uploaded(answer, _is_test(sent.body))
    return by_status(status, excerpt(body))
