"""Attribution lineage: where each of an event's attribution fields came from, beside the click behind its
tracking_id (docs/decisions.md, "Conversion report and attribution lineage").

:func:`lineage_of` explains, it never changes: the event's values are what :mod:`linksvc.loyalty.attribution`
resolved. It is computed once, when the event is written, and stored with it (the link may change later).
:func:`rollup_key` is the event's key in the fine conversion rollups (its own UTM), from the same click, and
:func:`click_utm` the click's UTM that keys it in the report's coarse level. :func:`event_detail` and
:func:`customer_path` are what the admin API reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

from linksvc.errors import NotFound
from linksvc.links.utm import UTM_FIELDS
from linksvc.loyalty.attribution import FIELDS
from linksvc.store import Store
from storage import campaigns as campaign_repo
from storage import customers as customer_repo
from storage import events as event_repo
from storage.clicks import AttributedClick

RULES = {
    "event.top_level": "the event's top level wins over its attribution object and its properties",
    "event.attribution": "the event's attribution object is taken because its top level has no value; it wins "
                         "over its properties",
    "event.properties": "the event's legacy properties are taken because neither its top level nor its "
                        "attribution object has a value",
    None: "none of the event's top level, attribution object or properties has a value",
}
CLICK_RULES = {
    "query": "the click's incoming query wins over the link's stored destination, the fallback URL and the "
             "channel defaults",
    "destination": "the link's stored destination is taken because the click's query has none",
    "fallback": "the selected fallback URL is taken because neither the click's query nor the stored "
                "destination has one",
    "defaults": "the channel defaults are taken because neither the click's query, the stored destination nor "
                "the fallback URL has one",
    "unknown": "the click was stored before clicks recorded where each field came from",
    None: "none of the click's query, the stored destination, the fallback URL or the channel defaults has one",
}
TRACKING_RULE = "a click keeps the tracking_id its request carried, else gets a new random one"


def _click_side(field: str, click: AttributedClick) -> dict[str, Any]:
    if field == "tracking_id":  # the click row does not say whether its request carried it
        return {"value": click.tracking_id, "origin": None, "rule": TRACKING_RULE}
    value = click.utm.get(field) or None
    origin = None if value is None else "unknown" if click.utm_origin is None else click.utm_origin.get(field,
                                                                                                        "unknown")
    return {"value": value, "origin": origin, "rule": CLICK_RULES.get(origin, CLICK_RULES["unknown"])}


def lineage_of(resolved: Mapping[str, Any], sources: Mapping[str, str],
               click: AttributedClick | None) -> dict[str, Any]:
    """The lineage stored with an event: per field its value and source with the rule that chose it, the
    click's value with where the click got it, and whether the two agree (null when neither has a value or
    there is no click); plus the click itself."""
    lineage: dict[str, Any] = {"click": None if click is None else {
        "tracking_id": click.tracking_id, "link_id": click.link_id, "link_code": click.code,
        "campaign_id": click.campaign_id, "clicked_at": click.clicked_at, "platform": click.platform,
        "answer": click.answer}}
    if click is not None:  # issue 34: the variant of the link's A/B split, where the client was, the rule that
        for name in PLACE:  # matched, the Referer's host; each only when the click has it
            value = getattr(click, name)
            if value is not None:
                lineage["click"][name] = value
    for field in FIELDS:
        value = resolved.get(field)
        source = sources.get(field)
        side = None if click is None else _click_side(field, click)
        agrees = None
        if side is not None and (value is not None or side["value"] is not None):
            agrees = value == side["value"]
        lineage[field] = {"value": value, "source": source, "rule": RULES[source], "click": side,
                          "agrees": agrees}
    return lineage


ROLLUP_UTM = ("utm_source", "utm_medium", "utm_campaign")
PLACE = ("variant", "country", "rule", "referrer_host")
"""What of the click behind an event its lineage holds for the report's click dimensions (issue 34)."""


def rollup_key(account_id: str, issued_at: str, resolved: Mapping[str, Any],
               click: Mapping[str, Any] | None) -> tuple[str, str, str, str, str, str, str]:
    """(account, day, link, utm_source, utm_medium, utm_campaign, platform): the day of ``issued_at``, the
    click's link and platform ('' without a click), the event's own UTM ('' when none)."""
    return (account_id, issued_at[:10], click["link_id"] if click else "",
            *(resolved.get(f) or "" for f in ROLLUP_UTM), click["platform"] if click else "")  # type: ignore[return-value]


def click_utm(lineage: Mapping[str, Any] | None) -> tuple[str, str, str] | None:
    """The UTM of the click behind an event, from its stored lineage ('' when the click had none): the key the
    report groups the event by unless asked for the event's own (docs/decisions.md, "Reports and bounded
    answers"). None without a click (the event is unattributed either way)."""
    if not lineage or not lineage.get("click"):
        return None
    return tuple(str(((lineage.get(f) or {}).get("click") or {}).get("value") or "")  # type: ignore[return-value]
                 for f in ROLLUP_UTM)


def click_dims(lineage: Mapping[str, Any] | None) -> tuple[str, str, str, str] | None:
    """The country, referrer host, rule and variant of the click behind an event, from its stored lineage (''
    where the click had none): its key in the report's click dimensions (``storage.conversions.CLICK_DIMENSIONS``).
    None without a click."""
    click = (lineage or {}).get("click")
    if not click:
        return None
    return (str(click.get("country") or ""), str(click.get("referrer_host") or ""), str(click.get("rule") or ""),
            str(click.get("variant") or ""))


def delay_of(issued_at: datetime, click: Mapping[str, Any] | None) -> int | None:
    """Whole seconds from the click to ``issued_at`` (None without a click)."""
    if click is None:
        return None
    return int((issued_at - datetime.fromisoformat(click["clicked_at"])).total_seconds())


def money(value: Any) -> Decimal:
    return Decimal(str(value)) if value is not None else Decimal(0)


# Reads of the admin API --------------------------------------------------------------------------------


async def event_detail(db: Store, account_id: str, event_id: str) -> dict[str, Any]:
    """An event with its attribution and lineage (null for events stored before lineage was recorded)."""
    event = await event_repo.by_id(db.reader, account_id, event_id)
    if event is None:
        raise NotFound("Event not found", f"no event with id {event_id} in this account")
    body = event.body
    return {"id": event.id, "type": event.type, "customer_id": event.customer_id, "order_id": event.order_id,
            "issued_at": event.issued_at, "received_at": event.received_at,
            "value": body.get("value"), "currency": body.get("currency"),
            "attribution": body.get("attribution") or {}, "reversed_at": event.reversed_at,
            "lineage": event.lineage}


async def customer_path(db: Store, account_id: str, customer_id: str, limit: int,
                        offset: int = 0) -> tuple[list[dict[str, Any]], int]:
    """A page of the customer's events, newest first, each with the click that led to it (as stored in its
    lineage), and how many events the customer has: a storefront client adds events without end, so the path
    is paged like the other lists. Read on the background reader (the count walks the customer's events)."""
    if await customer_repo.customer_by(db.reader, account_id, "id", customer_id) is None:
        raise NotFound("Customer not found", f"no customer with id {customer_id} in this account")
    conn = db.background
    events = await event_repo.of_customer(conn, account_id, customer_id, limit, offset)
    total = await event_repo.count_of_customer(conn, account_id, customer_id)
    clicks = [(event.lineage or {}).get("click") for event in events]
    names = await campaign_repo.names_of(db.reader, account_id,
                                         {c["campaign_id"] for c in clicks if c and c.get("campaign_id")})
    path = []
    for event, click in zip(events, clicks, strict=True):
        seen = None
        if click is not None:
            lineage = event.lineage or {}
            utm = {f: ((lineage.get(f) or {}).get("click") or {}).get("value") for f in UTM_FIELDS}
            seen = {"tracking_id": click["tracking_id"], "link_id": click["link_id"],
                    "link_code": click["link_code"], "campaign_id": click["campaign_id"],
                    "campaign_name": names.get(click["campaign_id"]), "clicked_at": click["clicked_at"],
                    "platform": click["platform"], "utm": {f: v for f, v in utm.items() if v is not None}}
        path.append({"event": {"id": event.id, "type": event.type, "issued_at": event.issued_at,
                               "value": event.body.get("value"), "currency": event.body.get("currency"),
                               "reversed_at": event.reversed_at}, "click": seen})
    return path, total
