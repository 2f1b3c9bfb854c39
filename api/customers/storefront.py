"""Storefront handlers of customers: contact search, customer lookup, one-time codes, migration."""

from __future__ import annotations

import time

from aiohttp import web

from api.appkeys import DB
from api.auth import principal
from api.routing import data
from api.storefront.schemas import ContactsQuery, CustomersQuery, MigrateBody, TotpRequest, TotpVerify
from linksvc.customers import migration, totp
from linksvc.customers import service as customers


async def search_contacts(request: web.Request, query: ContactsQuery) -> web.Response:
    return data(await customers.search_contacts(request.app[DB], principal(request).account_id, query.criteria()))


async def lookup_customer(request: web.Request, query: CustomersQuery) -> web.Response:
    found = await customers.lookup_customer(request.app[DB], principal(request).account_id, query.document_number,
                                            query.phone)
    return data(found)


async def request_totp(request: web.Request, body: TotpRequest) -> web.Response:
    code = await totp.request_code(request.app[DB], principal(request).account_id, body.customer_id,
                                   body.document_number, body.phone, time.time())
    return data(code)


async def verify_totp(request: web.Request, body: TotpVerify) -> web.Response:
    valid = await totp.check_code(request.app[DB], principal(request).account_id, body.customer_id, body.code,
                                  time.time())
    return data({"valid": valid})


async def migrate_rate_limit(request: web.Request) -> None:
    """Production accounts: 15 requests in any 5 seconds and 10,000 an hour (refusals are not counted)."""
    await migration.admit_migration(request.app[DB], principal(request).account_id)


async def migrate_customers(request: web.Request, body: MigrateBody) -> web.Response:
    return data(await migration.migrate(request.app[DB], principal(request).account_id, body.customers))
