"""Storefront handlers: parse (done by the endpoint), call one service, shape the ``data`` envelope."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from aiohttp import web

from api.appkeys import CAMPAIGN_COUNTS, DB, DISPATCHER, SETTINGS
from api.auth import principal
from api.auth_throttle import attempt
from api.routing import data, json_response
from api.storefront.schemas import (
    CampaignsQuery,
    ContactsQuery,
    CustomersQuery,
    MigrateBody,
    TotpRequest,
    TotpVerify,
)
from linksvc import accounts, campaigns, catalog, customers, migration, totp
from linksvc.behavior import service as events
from linksvc.behavior.models import BulkIn, ReverseIn
from linksvc.clock import utcnow
from linksvc.errors import ServiceError
from linksvc.resources.validation import validate


async def authorize(request: web.Request) -> web.Response:
    settings = request.app[SETTINGS]
    async with attempt(request, "api_key"):  # the endpoint has refused a request without a key already
        token, _ = await accounts.issue_token(
            request.app[DB], request.headers["x-api-key"].strip(), settings.token_ttl_seconds
        )
    response = data(token)
    response.headers["Cache-Control"] = "no-store"
    return response


async def list_brands(request: web.Request) -> web.Response:
    return data(await catalog.brands(request.app[DB].reader, principal(request).account_id))


async def list_tiers(request: web.Request) -> web.Response:
    return data(await catalog.tiers(request.app[DB].reader, principal(request).account_id))


async def list_campaigns(request: web.Request, query: CampaignsQuery) -> web.Response:
    items, total = await campaigns.campaigns_of_account(
        request.app[DB], request.app[CAMPAIGN_COUNTS], principal(request).account_id, query.from_, query.to,
        query.customer_id, codes_summary=query.includes == "CODES_SUMMARY", type=query.type,
        brand_id=query.brand_id, funded_by=query.funded_by, status=query.status, labels=query.label_list(),
        platform=query.platform, store_id=query.store_id, channel_id=query.channel_id, product_id=query.product_id,
    )
    return json_response({"data": items, "from": query.from_, "to": query.to, "count": total})


async def search_contacts(request: web.Request, query: ContactsQuery) -> web.Response:
    found = await customers.search_contacts(
        request.app[DB].reader, principal(request).account_id, query.criteria()
    )
    return data(found)


async def lookup_customer(request: web.Request, query: CustomersQuery) -> web.Response:
    db = request.app[DB]
    found = await customers.lookup_customer(
        db.reader, db.background, principal(request).account_id, query.document_number, query.phone
    )
    return data(found)


async def request_totp(request: web.Request, body: TotpRequest) -> web.Response:
    db = request.app[DB]
    account_id = principal(request).account_id
    customer_id = await customers.resolve_customer_id(
        db.reader, account_id, body.customer_id, body.document_number, body.phone
    )
    return data(await totp.issue_code(db, account_id, customer_id, time.time()))


async def verify_totp(request: web.Request, body: TotpVerify) -> web.Response:
    db = request.app[DB]
    customer_id = await customers.resolve_customer_id(db.reader, principal(request).account_id, body.customer_id,
                                                      None, None)
    return data({"valid": await totp.verify_code(db, customer_id, body.code, time.time())})


async def migrate_rate_limit(request: web.Request) -> None:
    """Production accounts: 15 requests in any 5 seconds and 10,000 an hour (refusals are not counted)."""
    await migration.admit_migration(request.app[DB], principal(request).account_id)


async def migrate_customers(request: web.Request, body: MigrateBody) -> web.Response:
    result = await migration.migrate(request.app[DB], principal(request).account_id, body.customers)
    return data(result)


# Behavior events ------------------------------------------------------------------------------------------


async def post_event(request: web.Request, body: Any) -> web.Response:
    who = principal(request)
    now = utcnow()
    prepared = await events.check(request.app[DB].reader, who.account_id, body, who.kind, now)
    event_id, _ = await request.app[DB].write(lambda tx: events.apply(tx, who.account_id, prepared, now))
    request.app[DISPATCHER].wake()
    return data({"id": event_id, "status": "accepted"}, status=202)


async def post_events_bulk(request: web.Request, body: Any) -> web.Response:
    """Each event checked and written alone (one bad event does not fail the others), all of them in the
    same group commit; the answer lists each event's result in order."""
    who = principal(request)
    now = utcnow()
    bulk = validate(BulkIn, body)
    store = request.app[DB]

    async def one(index: int, raw: Any) -> dict[str, Any]:
        try:
            prepared = await events.check(request.app[DB].reader, who.account_id, raw, who.kind, now,
                                          prefix=f"events[{index}]")
            event_id, _ = await store.write(lambda tx: events.apply(tx, who.account_id, prepared, now))
        except ServiceError as exc:
            return {"index": index, "status": exc.status, "error": exc.error, "details": exc.details}
        return {"index": index, "status": 202, "id": event_id}

    results = await asyncio.gather(*(one(i, raw) for i, raw in enumerate(bulk.events)))
    request.app[DISPATCHER].wake()
    accepted = sum(1 for r in results if r["status"] == 202)
    return data({"accepted": accepted, "rejected": len(results) - accepted, "results": results})


async def reverse_event(request: web.Request, body: ReverseIn) -> web.Response:
    who = principal(request)
    event_id = request.match_info["event_id"]
    now = utcnow()
    result = await request.app[DB].write(lambda tx: events.reverse(tx, who.account_id, event_id, body.reason, now))
    request.app[DISPATCHER].wake()
    return data(result)
