"""Meta's Conversions API request for an accepted event (product decisions, section 10; the specification's
Behavior events, rules 4 and 8), its connection test, and what Meta's answer means.

POST ``{endpoint_url or https://graph.facebook.com}/{version}/{pixel_id}/events?access_token=...`` with one
server event per request (Meta takes up to 1,000; one keeps a refusal to the event that caused it), the
version being ``config.api_version`` or the default of :mod:`linksvc.forwarding.versions`:

- ``Purchase`` (or a custom event's type), its ``event_id`` derived from the order id so that the browser
  pixel's event of the same order is deduplicated;
- ``user_data`` (Meta requires it, with at least one customer information parameter): the customer's
  email, phone (E.164 digits with the connection's ``default_country_code``:
  :func:`linksvc.forwarding.meta_rules.e164_digits`) and id hashed, ``fbc``/``fbp`` only as the client sent
  them (never made from ``fbclid``, UTM or the time), and for a website event the attributing click's
  ``client_user_agent``; the click's landing page is the ``event_source_url``. An event with none of these
  (no known customer, no contact on the event, no click ids, no website click) is skipped with the reason:
  Meta refuses an event whose ``user_data`` is empty;
- ``action_source``: the connection's (``website`` by default); a website event without a usable click is
  sent as ``physical_store`` when a store recorded it, else ``other`` (:func:`~.meta_rules.action_source`).

An event more than 7 days old is skipped with the reason (Meta would refuse the whole request). Reversals are
never sent (Meta would count one more purchase). Custom events' properties are not forwarded: Meta refuses
unhashed personal data in ``custom_data``, and properties are free-form.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import quote, urlencode

from linksvc.clock import iso
from linksvc.forwarding.meta_rules import action_source, browser_of, e164_digits, judge, too_old
from linksvc.forwarding.outgoing import (
    EVENT,
    REVERSAL,
    Filtered,
    Outgoing,
    Skipped,
    ads_event_id,
    base_url,
    click_id,
    compact,
    contact,
    hashed_email,
    post_json,
    required,
    setting,
    sha256_hex,
    unix_seconds,
)
from linksvc.forwarding.rules import REVERSAL_REFUSED
from linksvc.forwarding.versions import version_of
from linksvc.loyalty.models import PURCHASE

__all__ = ["build", "build_test", "judge"]

DEFAULT_BASE = "https://graph.facebook.com"
TEST_CUSTOMER = "linksvc-connection-test"
NO_CUSTOMER_INFORMATION = (
    "no customer information to send (no known customer, email, phone, fbc, fbp or website click): Meta refuses "
    "an event whose user_data holds none of its customer information parameters")


def user_data(event: dict[str, Any], customer: dict[str, Any] | None, connection: dict[str, Any],
              browser: tuple[str, str] | None) -> dict[str, Any]:
    email, phone = contact(event, customer)
    phone_number = e164_digits(phone, setting(connection, "default_country_code"))
    hashed = {"em": hashed_email(email), "ph": sha256_hex(phone_number) if phone_number else None,
              "external_id": sha256_hex(event["customer_id"]) if event.get("customer_id") else None}
    return {
        **{key: [value] for key, value in hashed.items() if value},
        **compact({"fbc": click_id(event, "fbc"), "fbp": click_id(event, "fbp"),
                   "client_user_agent": browser[0] if browser else None}),
    }


def custom_data(body: dict[str, Any]) -> dict[str, Any]:
    contents = [compact({"id": p.get("sku"), "quantity": p.get("quantity"), "item_price": p.get("price")})
                for p in body.get("products") or []]
    return compact({
        "currency": body.get("currency"), "value": body.get("value"), "order_id": body.get("order_id"),
        "contents": contents, "content_type": "product" if contents else None,
    })


def server_event(event: dict[str, Any], customer: dict[str, Any] | None,
                 connection: dict[str, Any]) -> dict[str, Any]:
    body = event.get("body") or {}
    is_purchase = event["type"] == PURCHASE
    clicked = browser_of(event.get("click"))
    source = action_source(setting(connection, "action_source"), clicked, body.get("store_id"))
    browser = clicked if source == "website" else None  # only a website event says which browser
    return {
        **compact({
            "event_name": "Purchase" if is_purchase else event["type"],
            "event_time": unix_seconds(event.get("issued_at") or body["issued_at"]),
            "event_id": ads_event_id(event),
            "action_source": source,
            "event_source_url": browser[1] if browser else None,
        }),
        "user_data": user_data(event, customer, connection, browser),  # required: build() skips it empty
        **compact({"custom_data": custom_data(body) if is_purchase else None}),
    }


def events_url(connection: dict[str, Any], pixel_id: str, token: str) -> str:
    base = base_url(connection, DEFAULT_BASE)
    return f"{base}/{version_of({**connection, 'destination': 'meta'})}/{quote(pixel_id, safe='')}/events?" + (
        urlencode({"access_token": token}))


def build(kind: str, event: dict[str, Any], customer: dict[str, Any] | None, connection: dict[str, Any],
          delivery_id: str, now: datetime) -> Outgoing | Filtered:
    if kind == REVERSAL:
        return Filtered(REVERSAL_REFUSED["meta"])
    if kind != EVENT:
        raise ValueError(f"meta has no delivery kind {kind!r}")
    found = required(connection, "pixel_id", "access_token")
    if isinstance(found, Filtered):
        return found
    pixel_id, token = found
    issued = event.get("issued_at") or (event.get("body") or {})["issued_at"]
    if too_old(issued, now):
        return Skipped(f"the event happened more than 7 days ago ({issued}): Meta refuses such events")
    server = server_event(event, customer, connection)
    if not server["user_data"]:
        return Skipped(NO_CUSTOMER_INFORMATION)
    payload: dict[str, Any] = {"data": [server]}
    # config.test_event_code is for the connection's test only: on a real delivery it would make the vendor
    # show the event as a test and count it nowhere.
    return post_json(events_url(connection, pixel_id, token), payload)


def build_test(connection: dict[str, Any], now: datetime) -> Outgoing | Filtered:
    """One synthetic Purchase with the connection's ``test_event_code``: Meta shows it in Events Manager's
    Test Events and does not count it. ``system_generated``: no person's browser made it."""
    found = required(connection, "pixel_id", "access_token", "test_event_code")
    if isinstance(found, Filtered):
        return Filtered(f"{found.reason}: without one Meta would count the test as a real purchase")
    pixel_id, token, test_code = found
    event = {"event_name": "Purchase", "event_time": unix_seconds(now), "event_id": f"test-{iso(now)}",
             "action_source": "system_generated", "user_data": {"external_id": [sha256_hex(TEST_CUSTOMER)]},
             "custom_data": {"currency": "USD", "value": 1}}
    return post_json(events_url(connection, pixel_id, token), {"data": [event], "test_event_code": test_code})
