"""Storefront handlers of campaigns and the catalog: ``GET /campaigns``, ``GET /tiers``, ``GET /brands``."""

from __future__ import annotations

from aiohttp import web

from api.appkeys import CAMPAIGN_COUNTS, DB
from api.auth import principal
from api.routing import data, json_response
from api.storefront.schemas import CampaignsQuery
from linksvc.campaigns import catalog
from linksvc.campaigns import service as campaigns


async def list_brands(request: web.Request) -> web.Response:
    return data(await catalog.brands(request.app[DB], principal(request).account_id))


async def list_tiers(request: web.Request) -> web.Response:
    return data(await catalog.tiers(request.app[DB], principal(request).account_id))


async def list_campaigns(request: web.Request, query: CampaignsQuery) -> web.Response:
    items, total = await campaigns.campaigns_of_account(
        request.app[DB], request.app[CAMPAIGN_COUNTS], principal(request).account_id, query.from_, query.to,
        query.customer_id, codes_summary=query.includes == "CODES_SUMMARY", type=query.type,
        brand_id=query.brand_id, funded_by=query.funded_by, status=query.status, labels=query.label_list(),
        platform=query.platform, store_id=query.store_id, channel_id=query.channel_id, product_id=query.product_id,
    )
    return json_response({"data": items, "from": query.from_, "to": query.to, "count": total})
