"""Query, body and response models of the storefront API, from the specification's field tables."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from api.schemas import Wallet
from linksvc.campaigns.service import range_problem
from linksvc.customers.people import Address, BillingRecord, Consent, PaymentMethod
from linksvc.customers.service import IDENTIFYING
from linksvc.errors import Issue
from linksvc.resources.models import CampaignStatus, CampaignType
from linksvc.resources.types import Uuid, phone_digits
from linksvc.resources.validation import one_of_required

Status = CampaignStatus
Text200 = Annotated[str, Field(min_length=1, max_length=200)]


def _empty_is_none(value: Any) -> Any:
    return None if value == "" else value


# What a phone may hold besides digits: the spec's spaces, dashes and +, and the dots and brackets stored phones
# are often written with ("+57 (300) 123.4567"), all ignored when comparing.
_PHONE_CHARACTERS = frozenset("0123456789+- .()")


def _phone(value: str) -> str:
    if any(ch not in _PHONE_CHARACTERS for ch in value):
        raise PydanticCustomError("pattern", "may hold only digits, spaces, dashes, dots, brackets and +")
    digits = phone_digits(value) or ""
    if not 10 <= len(digits) <= 15:
        raise PydanticCustomError("range", f"must have 10 to 15 digits, has {len(digits)}")
    return value


Phone = Annotated[str, Field(max_length=40), AfterValidator(_phone)]


class Query(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class CampaignsQuery(Query):
    from_: int = Field(alias="from", ge=0, le=1_000_000_000, description="first index, from 0 (inclusive)")
    to: int = Field(ge=0, le=1_000_000_000, description="last index (inclusive); at most 100 campaigns a page")
    type: CampaignType | None = None
    brand_id: Annotated[Uuid | None, BeforeValidator(_empty_is_none)] = None
    customer_id: Text200 | None = None
    status: Status | None = None
    labels: Annotated[str | None, Field(max_length=1000, description="comma-separated; all must be carried")] = None
    platform: Text200 | None = None
    store_id: Text200 | None = None
    channel_id: Text200 | None = None
    product_id: Text200 | None = None
    funded_by: Text200 | None = None
    includes: Literal["CODES_SUMMARY"] | None = None

    @classmethod
    def cross_field_issues(cls, data: dict[str, Any]) -> list[Issue]:
        try:
            start, end = int(data["from"]), int(data["to"])
        except (KeyError, TypeError, ValueError):
            return []  # a missing or unreadable index is the field's own issue
        problem = range_problem(start, end)
        return [] if problem is None else [Issue("to", problem, "range")]

    def label_list(self) -> tuple[str, ...]:
        return tuple(label.strip() for label in (self.labels or "").split(",") if label.strip())


class CodesSummary(BaseModel):
    total: int
    available: int
    reserved: int
    redeemed: int
    expired: int


class CampaignOut(BaseModel):
    """A campaign as the storefront shows it."""

    model_config = ConfigDict(extra="allow", title="Campaign")
    id: str
    name: str
    type: CampaignType
    status: Status
    attributes: dict[str, Any]
    stores: list[str] | None
    channels: list[str] | None
    products: list[str] | None
    content: dict[str, Any]
    template_id: str | None


class CampaignPage(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    data: list[CampaignOut]
    from_: int = Field(alias="from")
    to: int
    count: int


class ContactsQuery(Query):
    @model_validator(mode="before")
    @classmethod
    def _empty_is_absent(cls, data: Any) -> Any:
        # `email=` searches for nothing: it counts as not given.
        return {k: v for k, v in data.items() if v != ""} if isinstance(data, dict) else data

    @classmethod
    def cross_field_issues(cls, data: dict[str, Any]) -> list[Issue]:
        return one_of_required(data, IDENTIFYING)

    id: Text200 | None = None
    external_id: Text200 | None = None
    email: Annotated[str | None, Field(min_length=1, max_length=320)] = None
    document_number: Annotated[str | None, Field(min_length=1, max_length=50)] = None
    document_type: Text200 | None = None
    first_name: Text200 | None = None
    last_name: Text200 | None = None
    second_last_name: Text200 | None = None
    dob: date | None = Field(default=None, description="YYYY-MM-DD")
    persona_id: Text200 | None = None
    phone: Annotated[str | None, Field(min_length=1, max_length=40)] = None
    gender: Text200 | None = None
    country: Text200 | None = None
    city: Text200 | None = None
    source: Text200 | None = None
    channel: Text200 | None = None

    def criteria(self) -> dict[str, str]:
        return {k: (v.isoformat() if isinstance(v, date) else v) for k, v in self.model_dump().items() if v is not None}


class ContactOut(BaseModel):
    """A contact: a person the account knows, customer or not."""

    model_config = ConfigDict(title="Contact")
    id: str
    persona_id: str | None
    email: str | None
    document_type: str | None
    document_number: str | None
    created_at: str
    updated_at: str
    deleted_at: str | None
    external_id: str | None
    first_name: str | None
    second_name: str | None
    last_name: str | None
    second_last_name: str | None
    email_verified: bool
    phone_verified: bool
    is_anonymous: bool
    dob: str | None
    gender: str | None
    country: str | None
    city: str | None
    phone: str | None
    source: str | None
    channel: str | None
    status: str
    tags: dict[str, Any]
    addresses: list[Address]
    billing_info: list[BillingRecord]
    payments: list[PaymentMethod]
    data: dict[str, Any]


class CustomersQuery(Query):
    document_number: Annotated[str | None, Field(min_length=1, max_length=50)] = None
    phone: Phone | None = Field(
        default=None, description="10 to 15 digits; spaces, dashes, dots, brackets and + are ignored"
    )

    @classmethod
    def cross_field_issues(cls, data: dict[str, Any]) -> list[Issue]:
        return one_of_required(data, ("document_number", "phone"))


class CustomerOut(BaseModel):
    """A customer of the loyalty programme."""

    model_config = ConfigDict(title="Customer")
    id: str
    name: str | None
    email: str | None
    registration_date: str | None
    status: str
    is_anonymous: bool
    phone_verified: bool
    gender: str | None
    dob: str | None
    document_type: str | None
    document_number: str | None
    country: str | None
    phone: str | None
    tier_id: str | None
    tags: dict[str, Any]
    metrics: dict[str, Any]
    metadata: dict[str, Any]
    consent: Consent


class CustomerLookup(BaseModel):
    customer_id: str
    customer: CustomerOut
    wallet: Wallet


class AccessToken(BaseModel):
    """The answer of ``GET /auth/authorize``."""

    data: str = Field(description="the access token: send it as `Authorization: Bearer <token>`; it expires after "
                                  "LINKSVC_TOKEN_TTL_SECONDS", examples=["at_3q2+7w..."])


class TotpRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    customer_id: Text200 | None = None
    document_number: Annotated[str | None, Field(min_length=1, max_length=50)] = None
    phone: Phone | None = None

    @classmethod
    def cross_field_issues(cls, data: dict[str, Any]) -> list[Issue]:
        return one_of_required(data, ("customer_id", "document_number", "phone"))


class TotpCode(BaseModel):
    code: str
    expired_at: str = Field(json_schema_extra={"format": "date-time"})
    seconds_left: int


class TotpVerify(BaseModel):
    model_config = ConfigDict(extra="forbid")
    customer_id: Text200
    code: str = Field(pattern=r"^[0-9]{6}$")


class TotpVerdict(BaseModel):
    valid: bool


class MigrateBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # Any item: each one is judged on its own, so one bad customer fails alone.
    customers: list[Any] = Field(
        min_length=1, max_length=500,
        description="customers with the admin API's customer fields and an optional wallet.lines; "
        "matched by external_id, else document_number",
    )


class MigrateIssue(BaseModel):
    path: str = Field(description="the field, as customers[2].email")
    message: str
    type: str = Field(description="the rule code (docs/decisions.md)")
    accepted: list[str] | None = Field(default=None, description="the accepted values or fields, for closed sets")


class MigrateFailure(BaseModel):
    index: int
    error: str = Field(description="every problem of the customer, \"path: message\" joined by \"; \"")
    issues: list[MigrateIssue] | None = Field(default=None, description="the same problems one by one, when the "
                                                                       "customer's fields were refused")


class MigrateResult(BaseModel):
    created: int
    updated: int
    unchanged: int
    failed: list[MigrateFailure]
