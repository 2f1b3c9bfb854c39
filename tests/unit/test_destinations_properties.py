"""Properties of the ads and analytics mappings (product decisions, section 10; the specification's Behavior
events, rules 3 to 5): Meta, TikTok, GA4 and Google Ads get no field the client did not send (no click id,
cookie or analytics identity made up from UTM, a tracking id or anything else), never an event's free-form
properties, and the same person always hashes the same way."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from linksvc.forwarding import ga4, google_ads, meta, tiktok
from linksvc.forwarding.outgoing import Filtered, Outgoing, Skipped, hashed_email, hashed_phone

FAST = settings(max_examples=50, deadline=None)
NOW = datetime(2024, 5, 2, 8, 0, tzinfo=UTC)
ISSUED = "2024-05-01T12:30:45.123456Z"
CONFIG = {
    "meta": {"pixel_id": "42", "access_token": "t"},
    "tiktok": {"pixel_code": "P", "access_token": "a"},
    "ga4": {"measurement_id": "G-1", "firebase_app_id": "1:2:android:a", "api_secret": "s"},
    "google_ads": {"customer_id": "1", "conversion_action_id": "2", "access_token": "a", "developer_token": "d"},
}
BUILDERS = {"meta": meta.build, "tiktok": tiktok.build, "ga4": ga4.build, "google_ads": google_ads.build}
UTM = ("utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content")
CLICK_IDS = ("fbc", "fbp", "fbclid", "ttclid", "gclid", "gbraid", "wbraid")

# Marked values, so that a value that shows up in a request can be traced to where it came from.
BLANK = st.sampled_from(["", " "])


def marked(prefix: str) -> st.SearchStrategy[str]:
    return st.text("abcXYZ019.-_", min_size=1, max_size=8).map(lambda s: f"{prefix}{s}")


def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A value half the time; otherwise blank or null, which count as not sent."""
    return st.one_of(strategy, strategy, BLANK, st.none())


PRODUCTS = st.lists(st.fixed_dictionaries({"sku": st.sampled_from(["SKU-1", "SKU-2"])}, optional={
    "name": st.just("Shoe"), "quantity": st.integers(1, 3), "price": st.integers(1, 100)}), min_size=1, max_size=2)


@st.composite
def events(draw: st.DrawFn) -> dict[str, Any]:
    """A stored event as the dispatcher hands it to a builder: some members sent, some blank, some absent."""
    type_ = draw(st.sampled_from(["PURCHASE", "ADD_TO_CART"]))
    customer_id = draw(st.sampled_from([None, "cust-1"]))
    body: dict[str, Any] = {"id": "e-1", "type": type_, "customer_id": customer_id, "issued_at": ISSUED}
    if type_ == "PURCHASE":
        body.update(order_id="A-1", currency="COP", products=draw(PRODUCTS),
                    **draw(st.fixed_dictionaries({}, optional={"value": st.integers(0, 10**6)})))
    body.update(draw(st.fixed_dictionaries({
        "click_ids": st.fixed_dictionaries({}, optional={name: maybe(marked("CLK-")) for name in CLICK_IDS}),
        "analytics": st.fixed_dictionaries({}, optional={
            "client_id": maybe(marked("CID-")), "app_instance_id": maybe(marked("AID-")),
            "session_id": marked("SID-"), "session_number": st.integers(1, 9)}),
        "attribution": st.fixed_dictionaries({}, optional={
            **{field: maybe(marked("UTM-")) for field in UTM}, "tracking_id": marked("TRK-"),
            "revenue": st.integers(0, 9)}),
        "properties": st.dictionaries(st.sampled_from(["email", "fbc", "gclid", "coupon", "client_id"]),
                                      marked("PROP-"), min_size=1, max_size=3),
    }, optional={"email": maybe(st.just("ana@example.com")), "phone": maybe(st.just("+57 300 123 4567"))})))
    return {"id": "e-1", "type": type_, "customer_id": customer_id, "order_id": body.get("order_id"),
            "issued_at": ISSUED, "body": body, "reversal": None}


CUSTOMERS = st.one_of(st.none(), st.fixed_dictionaries({"id": st.just("cust-1")}, optional={
    "email": maybe(st.just("Bob@Example.org ")), "phone": maybe(st.just("(300) 765-4321"))}))


def sent_text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def request_of(destination: str, event: dict[str, Any], customer: dict[str, Any] | None) -> Outgoing | Filtered:
    return BUILDERS[destination]("event", event, customer, {"config": CONFIG[destination]}, "d-1", NOW)


@FAST
@given(events(), CUSTOMERS)
def test_no_request_carries_properties_tracking_ids_or_unsent_values(event: dict[str, Any],
                                                                    customer: dict[str, Any] | None) -> None:
    body = event["body"]
    sent = {v for group in ("click_ids", "analytics", "attribution") for v in (body.get(group) or {}).values()
            if sent_text(v)}
    for destination in BUILDERS:
        request = request_of(destination, event, customer)
        if isinstance(request, Filtered):
            continue
        text = request.body.decode() + request.url
        assert "PROP-" not in text  # free-form properties are never forwarded to an ads or analytics service
        assert "TRK-" not in text  # a tracking id identifies nobody to them
        if destination != "ga4":
            assert "UTM-" not in text  # no click id or cookie made from UTM
        # Every click id, identity or UTM value in the request is one the client sent, exactly and not blank.
        for value in _strings(json.loads(request.body)):
            if value.startswith(("CLK-", "CID-", "AID-", "SID-", "UTM-")):
                assert value in sent, (destination, value)


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


@FAST
@given(events(), CUSTOMERS)
def test_meta_and_tiktok_get_a_click_id_exactly_when_the_client_sent_it(event: dict[str, Any],
                                                                        customer: dict[str, Any] | None) -> None:
    clicks = event["body"].get("click_ids") or {}
    meta_request, tiktok_request = request_of("meta", event, customer), request_of("tiktok", event, customer)
    assert isinstance(tiktok_request, Outgoing)
    if isinstance(meta_request, Skipped):  # nothing for Meta's user_data, which Meta refuses empty
        assert "no customer information" in meta_request.reason and event["customer_id"] is None
        user_data: dict[str, Any] = {}
    else:
        assert isinstance(meta_request, Outgoing)
        user_data = json.loads(meta_request.body)["data"][0]["user_data"]
        assert user_data
    # Nothing known of the person: no user member at all (compact leaves empty objects out).
    user = json.loads(tiktok_request.body)["data"][0].get("user", {})
    for name in ("fbc", "fbp"):
        assert user_data.get(name) == sent_text(clicks.get(name))  # never made from fbclid, UTM or the time
    assert user.get("ttclid") == sent_text(clicks.get("ttclid"))
    assert set(user_data) <= {"em", "ph", "external_id", "fbc", "fbp"}
    assert set(user) <= {"email", "phone", "external_id", "ttclid"}
    assert ("external_id" in user_data) == ("external_id" in user) == (event["customer_id"] is not None)


@FAST
@given(events(), CUSTOMERS)
def test_google_ads_gets_the_native_gclid_or_nothing(event: dict[str, Any], customer: dict[str, Any] | None) -> None:
    clicks = event["body"].get("click_ids") or {}
    # Whatever else the client sent (gbraid, wbraid, another platform's click id), without a gclid nothing goes.
    others = {k: v for k, v in clicks.items() if k != "gclid"}
    for name in ("gbraid", "wbraid", "fbclid", "ttclid"):
        without = {**event, "body": {**event["body"], "click_ids": {**others, name: "CLK-" + name}}}
        assert isinstance(request_of("google_ads", without, customer), Filtered)
    gclid = sent_text(clicks.get("gclid"))
    request = request_of("google_ads", event, customer)
    if gclid is None:
        assert isinstance(request, Filtered)  # gbraid or wbraid alone: skipped, nothing synthesised
        return
    assert isinstance(request, Outgoing)
    (conversion,) = json.loads(request.body)["conversions"]
    assert conversion["gclid"] == gclid
    assert not set(conversion) & {"gbraid", "wbraid", "customVariables"}


@FAST
@given(events(), CUSTOMERS)
def test_ga4_uses_the_identity_and_session_sent_and_only_them(event: dict[str, Any],
                                                              customer: dict[str, Any] | None) -> None:
    body = event["body"]
    analytics, attribution = body.get("analytics") or {}, body.get("attribution") or {}
    client_id, app_instance_id = sent_text(analytics.get("client_id")), sent_text(analytics.get("app_instance_id"))
    reversed_ = {**event, "reversal": {"reason": "r", "reversed_at": "2024-05-03T00:00:00Z"}}
    for kind, stored in (("event", event), ("reversal", reversed_)):
        request = ga4.build(kind, stored, customer, {"config": CONFIG["ga4"]}, "d-1", NOW)
        if client_id is None and app_instance_id is None:
            assert isinstance(request, Filtered)  # never an identity made up from a tracking id
            continue
        assert isinstance(request, Outgoing)
        payload = json.loads(request.body)
        identity = {"client_id": client_id} if client_id is not None else {"app_instance_id": app_instance_id}
        assert {k: payload[k] for k in ("client_id", "app_instance_id") if k in payload} == identity
        params = payload["events"][0]["params"]
        # A session goes only as sent, and only with the event of that session (a refund comes later).
        for name in ("session_id", "session_number"):
            assert params.get(name) == (analytics.get(name) if kind == "event" else None)
        campaign = {k: v for k, v in params.items() if k.startswith("campaign_")}
        assert sorted(campaign.values()) == sorted(v for f in UTM if (v := sent_text(attribution.get(f))))


def variants(text: str) -> st.SearchStrategy[str]:
    """``text`` as people type it: any letters upper- or lower-case, spaces or tabs around it."""
    return st.builds(lambda flips, before, after: before + "".join(c.upper() if f else c.lower()
                                                                   for c, f in zip(text, flips, strict=False)) + after,
                     st.lists(st.booleans(), min_size=len(text), max_size=len(text)),
                     st.sampled_from(["", " ", "\t", "  \n"]), st.sampled_from(["", " ", "\r\n"]))


EMAILS = st.builds(lambda user, host: f"{user}@{host}.example", st.text("abcxyz019._+-", min_size=1, max_size=10),
                   st.text("abcxyz-", min_size=1, max_size=8))


@FAST
@given(EMAILS.flatmap(lambda e: st.tuples(st.just(e), variants(e), variants(e))),
       # A leading 00 is an international prefix to Meta (tests/unit/test_meta_rules.py): not generated here.
       st.text("0123456789", min_size=7, max_size=12).filter(lambda d: not d.startswith("00")),
       st.lists(st.sampled_from(" -.()+"), max_size=4))
def test_the_same_person_hashes_the_same_everywhere(emails: tuple[str, str, str], digits: str,
                                                    noise: list[str]) -> None:
    canonical, one, other = emails
    expected = hashlib.sha256(canonical.lower().encode()).hexdigest()
    assert hashed_email(one) == hashed_email(other) == expected
    phone = "".join(noise) + " ".join(digits[i:i + 3] for i in range(0, len(digits), 3))
    assert hashed_phone(phone) == hashed_phone(digits) == hashlib.sha256(digits.encode()).hexdigest()
    # Through the builders: the stored customer's address as typed in, the same hash for Meta and TikTok.
    event: dict[str, Any] = {"id": "e-1", "type": "ADD_TO_CART", "customer_id": None, "issued_at": ISSUED, "body": {}}
    for customer in ({"email": one, "phone": phone}, {"email": other, "phone": digits}):
        meta_request = request_of("meta", event, customer)
        tiktok_request = request_of("tiktok", event, customer)
        assert isinstance(meta_request, Outgoing) and isinstance(tiktok_request, Outgoing)
        user_data = json.loads(meta_request.body)["data"][0]["user_data"]
        user = json.loads(tiktok_request.body)["data"][0]["user"]
        assert user_data["em"] == [expected] and user["email"] == expected
        assert user_data["ph"] == [hashed_phone(digits)] and user["phone"] == hashed_phone(digits)
