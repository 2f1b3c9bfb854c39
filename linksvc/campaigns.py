"""``GET /campaigns`` (specification and product decisions, section 4): filters, paging, status."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from linksvc.clock import iso, parse_iso, utcnow
from linksvc.errors import BadRequest, NotFound
from linksvc.jsoncodec import loads
from linksvc.loyalty.status import campaign_status
from storage import campaigns as repo
from storage import customers as customer_repo
from storage.db import Conn

MAX_RANGE = 100
# Consent purpose a customer refuses to take part in campaigns of each type (section 4).
PURPOSE_OF_TYPE = {
    "BEHAVIOR": "behavioral_campaigns",
    "COUPONS": "coupon_campaigns",
    "PUNCH_CARDS": "punchcard_campaigns",
}
# The campaign fields of the specification's response; stored fields beyond these stay inside.
RESPONSE_FIELDS = ("id", "name", "type", "attributes", "stores", "channels", "products", "content", "template_id")


def page_bounds(start: int, end: int) -> tuple[int, int]:
    """Offset and limit of the inclusive range ``start..end``."""
    if end < start:
        raise BadRequest("Invalid query", {"field": "to", "message": "to must not be less than from"})
    if end - start + 1 > MAX_RANGE:
        raise BadRequest("Invalid query", {"field": "to", "message": f"a range holds at most {MAX_RANGE} campaigns"})
    return start, end - start + 1


async def with_customer(conn: Conn, query: repo.CampaignQuery, customer_id: str) -> repo.CampaignQuery:
    row = await customer_repo.customer_by(conn, query.account_id, "id", customer_id)
    if row is None:
        raise NotFound("Customer not found", f"no customer with id {customer_id}")
    customer = loads(row["body"])
    purposes = customer.get("consent", {}).get("purposes", {})
    refused = tuple(t for t, purpose in PURPOSE_OF_TYPE.items() if purposes.get(purpose) is False)
    return replace(query, for_customer=True, customer_tier=customer.get("tier_id"), refused_types=refused)


def response_campaign(body: dict[str, Any], now: Any) -> dict[str, Any]:
    def when(key: str) -> Any:
        return None if body.get(key) is None else parse_iso(body[key])

    out = {key: body.get(key) for key in RESPONSE_FIELDS}
    out["status"] = campaign_status(now, when("starts_at"), when("ends_at"), body["paused"], when("finished_at"))
    return out


async def list_campaigns(
    conn: Conn, query: repo.CampaignQuery, start: int, end: int, customer_id: str | None, codes_summary: bool
) -> tuple[list[dict[str, Any]], int]:
    offset, limit = page_bounds(start, end)
    moment = utcnow()
    query = replace(query, now=iso(moment))
    if customer_id is not None:
        query = await with_customer(conn, query, customer_id)
    rows, total = await repo.list_campaigns(conn, query, offset, limit)
    campaigns = [response_campaign(loads(row["body"]), moment) for row in rows]
    if codes_summary:
        coupons = [c["id"] for c in campaigns if c["type"] == "COUPONS"]
        summaries = await repo.codes_summaries(conn, coupons, query.now)
        for campaign in campaigns:
            if campaign["id"] in summaries:
                campaign["attributes"] = {**campaign["attributes"], "codes_summary": summaries[campaign["id"]]}
    return campaigns, total
