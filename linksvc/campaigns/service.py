"""``GET /campaigns`` (specification and product decisions, section 4): filters, paging, status."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Any

from linksvc.campaigns.status import campaign_status
from linksvc.clock import iso, parse_iso, utcnow
from linksvc.errors import InvalidField, NotFound
from linksvc.store import Store
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


def range_problem(start: int, end: int) -> str | None:
    """What is wrong with the inclusive range ``start..end`` of campaigns, or None."""
    if end < start:
        return "to must not be less than from"
    if end - start + 1 > MAX_RANGE:
        return f"a range holds at most {MAX_RANGE} campaigns"
    return None


def page_bounds(start: int, end: int) -> tuple[int, int]:
    """Offset and limit of the inclusive range ``start..end``."""
    problem = range_problem(start, end)
    if problem is not None:
        raise InvalidField("to", problem, "Invalid query", rule="range")
    return start, end - start + 1


async def with_customer(conn: Conn, query: repo.CampaignQuery, customer_id: str) -> repo.CampaignQuery:
    found = await customer_repo.customer_by(conn, query.account_id, "id", customer_id)
    if found is None:
        raise NotFound("Customer not found", f"no customer with id {customer_id}")
    customer = found.body
    purposes = customer.get("consent", {}).get("purposes", {})
    refused = tuple(t for t, purpose in PURPOSE_OF_TYPE.items() if purposes.get(purpose) is False)
    return replace(query, for_customer=True, customer_tier=customer.get("tier_id"), refused_types=refused)


def status_of(body: dict[str, Any], now: Any) -> str:
    """The computed status of a stored campaign document at ``now``."""
    def when(key: str) -> Any:
        return None if body.get(key) is None else parse_iso(body[key])

    return campaign_status(now, when("starts_at"), when("ends_at"), body["paused"], when("finished_at"))


def response_campaign(body: dict[str, Any], now: Any) -> dict[str, Any]:
    out = {key: body.get(key) for key in RESPONSE_FIELDS}
    out["status"] = status_of(body, now)
    return out


@dataclass
class _Counted:
    version: int
    valid_until: str | None  # None: until the version changes
    count: int


class CampaignCounts:
    """``count`` of ``GET /campaigns`` by filter, remembered while it cannot have changed.

    Counting visits every matching campaign, while a page visits about one page of them. A remembered
    count is used only while the account's campaign version (bumped by database triggers on every
    campaign write) is the one it was counted at, and, when the filter involves status, until the next
    moment a campaign of the account starts or ends. So the answer is always the count a fresh query
    would give.
    """

    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._entries: OrderedDict[repo.CampaignQuery, _Counted] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    async def count(self, conn: Conn, query: repo.CampaignQuery, counting: Conn | None = None) -> int:
        """``conn`` reads the version; ``counting`` (default ``conn``) runs the count itself, which
        visits every matching campaign: pass a connection that does not block the event loop."""
        key = replace(query, now="")
        version = await repo.campaign_version(conn, query.account_id)
        hit = self._entries.get(key)
        if hit is not None and hit.version == version and (hit.valid_until is None or query.now < hit.valid_until):
            self._entries.move_to_end(key)
            return hit.count
        count = await repo.count_campaigns(counting or conn, query)
        valid_until = await repo.next_transition(conn, query.account_id, query.now) if query.status else None
        self._entries[key] = _Counted(version, valid_until, count)
        self._entries.move_to_end(key)
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)
        return count


async def list_campaigns(
    conn: Conn, counting: Conn, counts: CampaignCounts, query: repo.CampaignQuery, start: int, end: int,
    customer_id: str | None, codes_summary: bool,
) -> tuple[list[dict[str, Any]], int]:
    offset, limit = page_bounds(start, end)
    moment = utcnow()
    query = replace(query, now=iso(moment))
    if customer_id is not None:
        query = await with_customer(conn, query, customer_id)
    page = await repo.campaign_page(conn, query, offset, limit)
    total = await counts.count(conn, query, counting)
    campaigns = [response_campaign(campaign.body, moment) for campaign in page]
    if codes_summary:
        coupons = [c["id"] for c in campaigns if c["type"] == "COUPONS"]
        summaries = await repo.codes_summaries(conn, coupons, query.now)
        for campaign in campaigns:
            if campaign["id"] in summaries:
                campaign["attributes"] = {**campaign["attributes"], "codes_summary": summaries[campaign["id"]]}
    return campaigns, total


async def campaigns_of_account(
    db: Store, counts: CampaignCounts, account_id: str, start: int, end: int, customer_id: str | None,
    codes_summary: bool, *, type: str | None = None, brand_id: str | None = None, funded_by: str | None = None,
    status: str | None = None, labels: tuple[str, ...] = (), platform: str | None = None,
    store_id: str | None = None, channel_id: str | None = None, product_id: str | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """``GET /campaigns`` for the account: the filters, the inclusive range ``start..end``; the page and
    the total (counted off the event loop)."""
    query = repo.CampaignQuery(
        account_id=account_id, now="", type=type, brand_id=brand_id, funded_by=funded_by, status=status,
        labels=labels, platform=platform, store_id=store_id, channel_id=channel_id, product_id=product_id,
    )
    return await list_campaigns(db.reader, db.background, counts, query, start, end, customer_id, codes_summary)
