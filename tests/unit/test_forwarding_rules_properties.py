"""Properties of which deliveries go out (product decisions, section 10; the specification's Behavior events,
rules 7 and 8): a delivery is sent exactly when the connection is on, forwarding of the event's type is on,
the type is allowed, no reversal goes to an ads platform, and the customer did not explicitly refuse."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from linksvc.forwarding.rules import consent_reason, filter_reason

FAST = settings(max_examples=150, deadline=None)
DESTINATIONS = ("messaging", "meta", "tiktok", "ga4", "google_ads", "webhook")
ADS = ("meta", "tiktok", "google_ads")
TYPES = ("PURCHASE", "ADD_TO_CART", "WISHLIST")
ANSWERS = st.sampled_from([True, False, None])  # consent given, refused, never answered (null)



def mostly(usual: Any, *others: Any) -> st.SearchStrategy[Any]:
    """``usual`` four times in five, so that a delivery often passes every rule but the one that matters."""
    return st.sampled_from([usual] * 4 + list(others))


SWITCH = mostly(True, False)
CONNECTIONS = st.builds(
    lambda destination, flags, types: {"id": "conn-1", "destination": destination, **flags, "event_types": types},
    st.sampled_from(DESTINATIONS),
    st.fixed_dictionaries({}, optional={"enabled": SWITCH, "forward_events": SWITCH, "forward_purchases": SWITCH}),
    mostly(list(TYPES), None, [], ["PURCHASE"], ["ADD_TO_CART", "WISHLIST"]),
)
CUSTOMERS = st.one_of(st.none(), st.builds(
    lambda vendors, purposes: {"id": "c-1", "consent": {"vendors": vendors, "purposes": purposes}},
    st.dictionaries(st.sampled_from(DESTINATIONS), ANSWERS, max_size=3),
    st.dictionaries(st.sampled_from(["audience_marketing", "behavioral_campaigns"]), ANSWERS, max_size=2),
))


def kinds(destination: str) -> st.SearchStrategy[str]:
    if destination == "webhook":
        return st.sampled_from(["event.accepted", "purchase.reversed", "reward.issued", "tier.changed"])
    return st.sampled_from(["event", "reversal"])


@FAST
@given(CONNECTIONS, st.data(), st.sampled_from(TYPES), st.booleans(), CUSTOMERS)
def test_a_delivery_goes_out_exactly_when_every_rule_lets_it(connection: dict[str, Any], data: st.DataObject,
                                                             event_type: str, typed_in_body_only: bool,
                                                             customer: dict[str, Any] | None) -> None:
    destination = connection["destination"]
    kind = data.draw(kinds(destination))
    # The type is read from the stored row, or from the body when the row has none.
    event = {"id": "e-1", "body": {"type": event_type}} if typed_in_body_only else \
        {"id": "e-1", "type": event_type, "body": {}}
    consent = (customer or {}).get("consent", {})
    flag = "forward_purchases" if event_type == "PURCHASE" else "forward_events"
    goes = (
        connection.get("enabled", True)
        and not (kind == "reversal" and destination in ADS)  # an ads platform would count another purchase
        and connection.get(flag, True)
        and event_type in (connection["event_types"] or [])  # an empty allow-list allows none
        and consent.get("vendors", {}).get(destination) is not False  # only an explicit refusal filters
        and not (destination in ADS and consent.get("purposes", {}).get("audience_marketing") is False)
    )
    reason = filter_reason(connection, kind, event, customer)
    assert (reason is None) == bool(goes), reason
    if not connection.get("enabled", True):
        assert reason == "connection disabled"  # checked first: the admin sees the switch, not a detail


@FAST
@given(st.sampled_from(DESTINATIONS), CUSTOMERS, st.sampled_from(DESTINATIONS), ANSWERS)
def test_only_an_explicit_refusal_of_this_destination_filters(destination: str, customer: dict[str, Any] | None,
                                                              other: str, answer: bool | None) -> None:
    before = consent_reason(destination, customer)
    if customer is None or other == destination:
        return
    # Whatever the customer answered for another vendor changes nothing for this one.
    changed = {**customer, "consent": {**customer["consent"],
                                       "vendors": {**customer["consent"]["vendors"], other: answer}}}
    assert consent_reason(destination, changed) == before
    # A purpose never answered, or accepted, does not filter.
    for unanswered in (None, True):
        vendors = {k: v for k, v in customer["consent"]["vendors"].items() if k != destination}
        assert consent_reason(destination, {"id": "c-1", "consent": {
            "vendors": {**vendors, destination: unanswered},
            "purposes": {"audience_marketing": unanswered}}}) is None
