"""The dashboard's list of campaigns: filtered by type, status and brand, with the status computed now.

Filtering and paging run in SQL (``storage.campaigns``, the same status rule the storefront's
``GET /campaigns`` uses), so a page and its ``count`` are right however many campaigns an account has;
each campaign's status is then computed by :func:`linksvc.campaigns.status.campaign_status` at the same
moment the filter used.
"""

from __future__ import annotations

from typing import Any

from linksvc.accounts.service import get_account
from linksvc.campaigns.service import status_of
from linksvc.clock import iso, utcnow
from linksvc.sorting import order_of
from linksvc.store import Store
from storage import campaigns as repo

SUMMARY_FIELDS = ("id", "name", "type", "brand_id", "labels", "platforms", "funded_by", "starts_at", "ends_at",
                  "paused", "finished_at", "order")


def campaign_summary(body: dict[str, Any], now: Any) -> dict[str, Any]:
    summary = {key: body.get(key) for key in SUMMARY_FIELDS}
    summary["status"] = status_of(body, now)
    return summary


async def campaign_overview(db: Store, account_id: str, type_: str | None, status: str | None,
                            brand_id: str | None, limit: int, offset: int,
                            sort: str = "order") -> tuple[list[dict[str, Any]], int]:
    """One page of the account's campaigns in the order ``sort`` names (:mod:`linksvc.sorting`; the list order
    unless told: ``order``, ``name``, ``created``, ``starts``, ``ends``, ``status``), and the number of all that
    match."""
    conn = db.reader
    await get_account(conn, account_id)
    moment = utcnow()
    query = repo.CampaignQuery(account_id=account_id, now=iso(moment), type=type_, status=status, brand_id=brand_id)
    key, descending = order_of(sort)
    page = await repo.campaign_page(conn, query, offset, limit, key, descending)
    total = await repo.count_campaigns(conn, query)
    return [campaign_summary(campaign.body, moment) for campaign in page], total
