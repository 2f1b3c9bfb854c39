"""Admin handlers of customers beyond their documents: the back office's search (by name, e-mail, phone, document
number or external id)."""

from __future__ import annotations

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from api.appkeys import DB
from api.routing import Endpoint, data
from api.schemas import Envelope
from linksvc.customers import service as customers


class CustomerSearch(BaseModel):
    model_config = ConfigDict(extra="forbid")
    q: str = Field(min_length=1, max_length=200, description="part of a name or e-mail, a phone's digits (four or "
                                                             "more), a document number or an external id")
    limit: int = Field(default=20, ge=1, le=customers.MAX_FOUND)


class FoundCustomer(BaseModel):
    id: str
    name: str | None
    email: str | None
    phone: str | None
    document_type: str | None
    document_number: str | None
    external_id: str | None
    tier_id: str | None


async def search_customers(request: web.Request, query: CustomerSearch) -> web.Response:
    return data(await customers.search_customers(request.app[DB], request.match_info["account_id"], query.q,
                                                 query.limit))


ENDPOINTS = [
    Endpoint("GET", "/accounts/{account_id}/customer-search", search_customers,
             "Customers that a text names, by name: part of their name or e-mail (any case), part of their phone's "
             "digits, their document number or external id", "customers", query=CustomerSearch,
             response=Envelope[list[FoundCustomer]], security="admin", permission="customers:read",
             errors=(400, 401, 404)),
]
