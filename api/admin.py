"""The admin API, ``/api/admin/v1``, behind the admin token: the endpoints of each domain put together in one
document. Accounts and keys (``api.accounts.admin``), the link and campaign pages the dashboard needs
(``api.links.admin``), every account resource (``api.resources``), forwarding (``api.forwarding.admin``),
imports of other link services' exports (``api.imports.admin``), events with their lineage and customers' paths
(``api.loyalty.admin``), the back office's customer search (``api.customers.admin``), people, members, personal
tokens and the audit log (``api.people.admin``).
"""

from __future__ import annotations

from aiohttp import web

from api.accounts.admin import ENDPOINTS as ACCOUNT_ENDPOINTS
from api.campaigns.admin import overview_endpoints as campaign_overview_endpoints
from api.customers.admin import ENDPOINTS as CUSTOMER_ENDPOINTS
from api.domains import ENDPOINTS as DOMAIN_ENDPOINTS
from api.feed.admin import ENDPOINTS as FEED_ENDPOINTS
from api.forwarding.admin import ENDPOINTS as FORWARDING_ENDPOINTS
from api.forwarding.webhooks import HEADERS as WEBHOOK_HEADERS
from api.forwarding.webhooks import WEBHOOKS as WEBHOOK_BODIES
from api.imports.admin import ENDPOINTS as IMPORT_ENDPOINTS
from api.links.admin import link_endpoints
from api.links.admin import overview_endpoints as link_overview_endpoints
from api.links.fdl import ENDPOINTS as FDL_ENDPOINTS
from api.links.organise import organise_endpoints
from api.links.previews import ENDPOINTS as LINK_PREVIEW_ENDPOINTS
from api.loyalty.admin import ENDPOINTS as EVENT_ENDPOINTS
from api.openapi import Webhooks, openapi_document
from api.people.admin import ENDPOINTS as PEOPLE_ENDPOINTS
from api.reports import ENDPOINTS as REPORT_ENDPOINTS
from api.resources import resource_endpoints
from api.routing import Endpoint, add_endpoints, json_response
from linksvc.resources.kinds import KINDS

PREFIX = "/api/admin/v1"
# The requests a webhook connection receives (docs/decisions.md, "Forwarding"), in the document's ``webhooks``.
WEBHOOKS = Webhooks(WEBHOOK_BODIES, WEBHOOK_HEADERS, description=(
    "Sent to the `endpoint_url` of each enabled webhook connection whose `event_types` allow the event "
    "(`link.clicked`: whose `config.clicks` subscribes it to the clicks), as a JSON "
    "POST signed with Standard Webhooks (https://www.standardwebhooks.com): check `webhook-signature` with the "
    "connection's secret before trusting the body. Delivery is at least once: drop a `webhook-id` seen before."))


async def openapi(request: web.Request) -> web.Response:
    # Written on the first request for it, not when the app is made: pydantic takes a few tenths of a second
    # to write the schemas, which every start of every worker paid, whether or not a client asked.
    return json_response(openapi_document("linksvc admin API", "1.0.0", PREFIX, ENDPOINTS, WEBHOOKS))


ENDPOINTS = [
    *ACCOUNT_ENDPOINTS,
    *DOMAIN_ENDPOINTS,
    # before the resource endpoints: /links/overview is not /links/{id}
    *link_overview_endpoints(),
    *organise_endpoints(),
    *campaign_overview_endpoints(),
    *(endpoint for kind in KINDS.values() for endpoint in resource_endpoints(kind)),
    *link_endpoints(),
    *LINK_PREVIEW_ENDPOINTS,
    *FDL_ENDPOINTS,
    *IMPORT_ENDPOINTS,
    *FORWARDING_ENDPOINTS,
    *REPORT_ENDPOINTS,
    *EVENT_ENDPOINTS,
    *CUSTOMER_ENDPOINTS,
    *FEED_ENDPOINTS,
    *PEOPLE_ENDPOINTS,
    Endpoint("GET", "/openapi.json", openapi, "This document", "meta", security=None),
]


def add_admin_routes(app: web.Application) -> None:
    undeclared = [f"{e.method} {e.path}" for e in ENDPOINTS if e.security == "admin" and not e.permission]
    if undeclared:  # every admin route declares what it needs (linksvc.people.roles)
        raise RuntimeError(f"admin routes without a permission: {', '.join(undeclared)}")
    add_endpoints(app, PREFIX, ENDPOINTS)
