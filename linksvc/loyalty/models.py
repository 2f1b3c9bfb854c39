"""The shape of a behavior event as clients send it (product decisions, section 8).

Unknown top-level fields are refused (a clear 400 beats a field silently dropped); ``properties``,
``attribution`` and ``analytics`` are open objects whose extra members are kept as sent.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, WithJsonSchema
from pydantic_core import PydanticCustomError

from linksvc.errors import Issue
from linksvc.resources.models import Strict
from linksvc.resources.types import Number, UtcDateTime, Uuid

Id = Field(default=None, min_length=1, max_length=200)
Label = Field(default=None, max_length=500)
MAX_BULK_EVENTS = 1000
PURCHASE = "PURCHASE"
PURCHASE_ONLY = ("order_id", "currency", "value", "products", "redeem")


class Attribution(BaseModel):
    """The specification's attribution context; revenue and cost members (and any other) are kept."""

    model_config = ConfigDict(extra="allow")
    tracking_id: str | None = Label
    utm_source: str | None = Label
    utm_medium: str | None = Label
    utm_campaign: str | None = Label
    utm_term: str | None = Label
    utm_content: str | None = Label
    revenue: Number | None = None
    cost: Number | None = None
    currency: str | None = Field(default=None, pattern=r"^[A-Z]{3}$")


def _session_id(value: Any) -> str | int:
    # One rule instead of a union of str and int: a union reports a problem once per member.
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise PydanticCustomError("type", "must be a string or an integer")
    if isinstance(value, str) and len(value) > 200:
        raise PydanticCustomError("string_too_long", "must have at most 200 characters")
    return value


SessionId = Annotated[str | int, PlainValidator(_session_id), WithJsonSchema({"type": ["string", "integer"]})]


class Analytics(BaseModel):
    """The analytics service's own identity and session, passed on as sent."""

    model_config = ConfigDict(extra="allow")
    client_id: str | None = Field(default=None, max_length=200)
    app_instance_id: str | None = Field(default=None, max_length=200)
    session_id: SessionId | None = None
    session_number: int | None = Field(default=None, ge=0)


class ClickIds(Strict):
    """Click identifiers the client captured; passed on, never invented."""

    fbc: str | None = Field(default=None, max_length=500)
    fbp: str | None = Field(default=None, max_length=500)
    fbclid: str | None = Field(default=None, max_length=500)
    ttclid: str | None = Field(default=None, max_length=500)
    gclid: str | None = Field(default=None, max_length=500)
    gbraid: str | None = Field(default=None, max_length=500)
    wbraid: str | None = Field(default=None, max_length=500)


class Product(BaseModel):
    model_config = ConfigDict(extra="allow")
    sku: str = Field(min_length=1, max_length=200)
    id: str | None = Id
    name: str | None = Field(default=None, max_length=500)
    quantity: Number | None = Field(default=None, ge=0)
    price: Number | None = Field(default=None, ge=0)


class Redeem(Strict):
    id: Uuid = Field(description="the reward to spend")
    amount: Number = Field(gt=0)


class EventIn(Strict):
    type: str = Field(min_length=1, max_length=64, description="PURCHASE or an active custom event type")
    customer_id: str | None = Id
    document_number: str | None = Field(default=None, min_length=1, max_length=50)
    phone: str | None = Field(default=None, max_length=40)
    email: str | None = Field(default=None, max_length=320)
    external_id: str | None = Id
    issued_at: UtcDateTime | None = None
    properties: dict[str, Any] = Field(default_factory=dict)
    attribution: Attribution | None = None
    tracking_id: str | None = Label
    utm_source: str | None = Label
    utm_medium: str | None = Label
    utm_campaign: str | None = Label
    utm_term: str | None = Label
    utm_content: str | None = Label
    analytics: Analytics | None = None
    click_ids: ClickIds | None = None
    order_id: str | None = Id
    currency: str | None = Field(default=None, pattern=r"^[A-Z]{3}$", description="ISO 4217")
    value: Number | None = Field(default=None, ge=0)
    products: list[Product] | None = Field(default=None, max_length=1000)
    store_id: str | None = Id
    channel_id: str | None = Id
    brand_id: str | None = Id
    redeem: list[Redeem] | None = Field(default=None, max_length=100)

    @classmethod
    def cross_field_issues(cls, data: dict[str, Any]) -> list[Issue]:
        """The rules tying fields to the event's type: what a PURCHASE needs, what only a PURCHASE carries."""
        kind = data.get("type")
        if kind == PURCHASE:
            found = [Issue(name, "is required for a PURCHASE event", "missing")
                     for name in ("order_id", "currency", "products") if data.get(name) is None]
            if data.get("products") == []:
                found.append(Issue("products", "a PURCHASE event needs at least one product with a sku",
                                   "too_few_items"))
            return found
        if not isinstance(kind, str):
            return []
        return [Issue(name, "only PURCHASE events carry this field", "not_allowed")
                for name in PURCHASE_ONLY if data.get(name) is not None]


class BulkIn(Strict):
    events: list[Any] = Field(min_length=1, max_length=MAX_BULK_EVENTS)


class ReverseIn(Strict):
    reason: str = Field(min_length=1, max_length=1000)


class Accepted(Strict):
    id: str
    status: str = "accepted"


class BulkItem(BaseModel):
    index: int
    status: int = Field(description="202 accepted, or the status the event alone would have had")
    id: str | None = None
    error: str | None = None
    details: Any = None


class BulkResult(Strict):
    accepted: int
    rejected: int
    results: list[BulkItem]


class Reversed(Strict):
    id: str
    reversed_at: UtcDateTime
    reason: str
