"""The storefront API, ``/api/storefront/v1``: the interface specification, endpoint by endpoint."""

from __future__ import annotations

from aiohttp import web

from api.accounts import storefront as accounts
from api.campaigns import storefront as campaigns
from api.customers import storefront as customers
from api.customers.lane import FastLookups
from api.loyalty import storefront as h
from api.openapi import openapi_document
from api.routing import Endpoint, Header, add_endpoints, json_response
from api.schemas import Envelope
from api.server import add_fast_lane
from api.storefront.deferred import DeferredClaim, DeferredClaimIn, claim_deferred_link
from api.storefront.schemas import (
    AccessToken,
    CampaignPage,
    CampaignsQuery,
    ContactOut,
    ContactsQuery,
    CustomerLookup,
    CustomersQuery,
    MigrateBody,
    MigrateResult,
    TotpCode,
    TotpRequest,
    TotpVerdict,
    TotpVerify,
)
from linksvc.customers.service import search_refused
from linksvc.loyalty.models import Accepted, BulkIn, BulkResult, EventIn, Reversed, ReverseIn
from linksvc.resources.models import Brand, Tier

PREFIX = "/api/storefront/v1"
ACCOUNT_HEADER = Header("x-account-id", "the account id; must be the token's account", required=True)


async def openapi(request: web.Request) -> web.Response:
    # Written on the first request for it, not when the app is made: pydantic takes a few tenths of a second
    # to write the schemas, which every start of every worker paid, whether or not a client asked.
    return json_response(openapi_document("linksvc storefront API", "1.0.0", PREFIX, ENDPOINTS))


ENDPOINTS = [
    Endpoint(
        "GET", "/auth/authorize", accounts.authorize, "Exchange an API key for an access token", "auth",
        response=AccessToken, security="api_key",
        headers=(Header("x-api-key", "the integration's API key", required=True),), errors=(401,),
    ),
    Endpoint("GET", "/campaigns", campaigns.list_campaigns, "List campaigns with filters and index-range paging",
             "campaigns", query=CampaignsQuery, response=CampaignPage, errors=(401, 403, 404)),
    Endpoint("GET", "/tiers", campaigns.list_tiers, "List tiers, lowest level first", "catalog",
             response=Envelope[list[Tier]], errors=(401, 403)),
    Endpoint("GET", "/brands", campaigns.list_brands, "List brands", "catalog", response=Envelope[list[Brand]],
             errors=(401, 403)),
    Endpoint("GET", "/contacts", customers.search_contacts, "Search contacts (id, email or document_number required)",
             "contacts", query=ContactsQuery, response=Envelope[list[ContactOut]], headers=(ACCOUNT_HEADER,),
             errors=(401, 403, 404), string_details=True, on_invalid=search_refused),
    Endpoint("GET", "/customers", customers.lookup_customer, "Look up one customer by document number and/or phone",
             "customers", query=CustomersQuery, response=Envelope[CustomerLookup], require_kind="SERVER",
             errors=(401, 403, 404, 409), string_details=True),
    Endpoint("POST", "/auth/totp", customers.request_totp, "Issue a one-time code for a customer", "auth",
             body=TotpRequest, response=Envelope[TotpCode], errors=(401, 403, 404, 409)),
    Endpoint("POST", "/auth/totp/verify", customers.verify_totp, "Check a customer's one-time code (accepted once)",
             "auth", body=TotpVerify, response=Envelope[TotpVerdict], errors=(401, 403, 404, 429)),
    Endpoint("POST", "/customers/migrate", customers.migrate_customers, "Create or update customers in bulk",
             "customers", body=MigrateBody, response=Envelope[MigrateResult], require_kind="SERVER",
             guard=customers.migrate_rate_limit, max_body="max_bulk_body_bytes", errors=(401, 403, 429),
             string_details=True, max_depth=None),
    Endpoint("POST", "/behavior/events", h.post_event, "Send one behavior event (PURCHASE needs a SERVER key)",
             "events", body=EventIn, response=Envelope[Accepted], status=202, raw_body=True,
             errors=(401, 403, 409)),
    Endpoint("POST", "/behavior/events/bulk", h.post_events_bulk, "Send up to 1,000 events; a result per event",
             "events", body=BulkIn, response=Envelope[BulkResult], raw_body=True, max_body="max_bulk_body_bytes",
             errors=(401, 403), max_depth=None),
    Endpoint("POST", "/behavior/events/{event_id}/reverse", h.reverse_event, "Reverse a purchase", "events",
             body=ReverseIn, response=Envelope[Reversed], require_kind="SERVER", errors=(401, 403, 404, 409)),
    Endpoint("POST", "/deferred-links/claim", claim_deferred_link,
             "Claim the click behind an app's install (Play install referrer or iOS pasteboard token), once",
             "deferred links", body=DeferredClaimIn, response=Envelope[DeferredClaim], errors=(401, 403, 404, 409)),
    Endpoint("GET", "/openapi.json", openapi, "This document", "meta", security=None),
]


def add_storefront_routes(app: web.Application) -> None:
    add_endpoints(app, PREFIX, ENDPOINTS)
    # GET /customers of a held token, on the server's fast lane (see api.customers.lane).
    add_fast_lane(app, f"{PREFIX}/customers", FastLookups(app, f"{PREFIX}/customers"))
