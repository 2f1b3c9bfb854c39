"""The admin/seed shape of every resource: the specification's response fields plus the stored fields of
the product decisions. The same models validate admin API bodies and seed files and describe both in the
OpenAPI documents. Unknown fields are refused, so a typo names itself instead of being dropped.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from linksvc.links.link_urls import Deeplink, HttpsUrl, WebUrl
from linksvc.resources.types import Name, Number, ShortText, Text, UtcDateTime, Uuid, new_id


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


CONDITION_TYPES = ("Order Value", "Total Order Value", "Purchase Count", "Points Balance")
# The specification spells one operator `grater than`; it is accepted as `greater than`.
OPERATORS = (
    "greater than",
    "grater than",
    "greater than or equal",
    "less than",
    "less than or equal",
    "equal",
)
# Closed sets of values, each written once: an unknown value is refused (400, rule ``enum``, naming them).
CampaignType = Literal["BEHAVIOR", "COUPONS", "PUNCH_CARDS", "REFERRALS", "SCORE_STREAKS"]
# The computed status of a campaign; NOT FINISHED is only a filter (every status but FINISHED).
CampaignStatus = Literal["RUNNING", "PAUSED", "SCHEDULED", "FINISHED", "NOT FINISHED"]
LinkKind = Literal["campaign", "email", "push", "whatsapp", "in_app", "news_feed", "external"]
Destination = Literal["messaging", "meta", "tiktok", "ga4", "google_ads", "webhook", "s3_export"]
# The specification shows ACTIVE as an example status and leaves the sets open; these are the service's.
Status = Literal["ACTIVE", "INACTIVE"]  # brands, tiers, rewards
PersonStatus = Literal["ACTIVE", "INACTIVE", "BLOCKED", "DELETED"]  # contacts, customers
Environment = Literal["production", "sandbox"]
KeyKind = Literal["SERVER", "CLIENT"]
CAMPAIGN_TYPES: tuple[str, ...] = get_args(CampaignType)
LINK_KINDS: tuple[str, ...] = get_args(LinkKind)
DESTINATIONS: tuple[str, ...] = get_args(Destination)


class Condition(Strict):
    type: Literal["Order Value", "Total Order Value", "Purchase Count", "Points Balance"]
    operator: Literal[
        "greater than", "grater than", "greater than or equal", "less than", "less than or equal", "equal"
    ]
    primitive: Literal["number"] = "number"
    value: Number


Conditions = list[list[Condition]]


class Account(Strict):
    id: Uuid = Field(default_factory=new_id)
    name: Name
    environment: Environment = "sandbox"


class ApiKeyIn(Strict):
    kind: KeyKind
    name: ShortText = ""
    # Only seed files carry a key; the admin API generates one and shows it once.
    key: str | None = Field(default=None, min_length=20, max_length=200, pattern=r"^[A-Za-z0-9_\-]+$")


class Brand(Strict):
    id: Uuid = Field(default_factory=new_id)
    name: Name
    status: Status = "ACTIVE"


class Tier(Strict):
    id: Uuid = Field(default_factory=new_id)
    name: Name
    description: Text = ""
    status: Status = "ACTIVE"
    level: Number
    entry_conditions: Conditions = Field(default_factory=list)
    exit_conditions: Conditions = Field(default_factory=list)


class RewardAttributes(BaseModel):
    model_config = ConfigDict(extra="allow")
    conversion_factor: Number = Field(default=Decimal(1), ge=0)


class Reward(Strict):
    id: Uuid = Field(default_factory=new_id)
    template_id: Uuid | None = None
    brand_id: str | None = None
    status: Status = "ACTIVE"
    team_ids: list[str] = Field(default_factory=list)
    platforms: list[str] = Field(default_factory=list)
    labels: list[str] = Field(default_factory=list)
    stores: list[str] = Field(default_factory=list)
    channels: list[str] = Field(default_factory=list)
    products: list[str] = Field(default_factory=list)
    tiers: list[Uuid] = Field(default_factory=list)
    content: dict[str, Any] = Field(default_factory=dict)
    name: Name
    description: Text = ""
    type: str = Field(default="POINTS", pattern=r"^[A-Z][A-Z_]{0,39}$")
    conditions: Conditions = Field(default_factory=list)
    attributes: RewardAttributes = Field(default_factory=RewardAttributes)


class CouponCode(Strict):
    code: str = Field(min_length=1, max_length=100)
    status: Literal["AVAILABLE", "RESERVED", "REDEEMED"] = "AVAILABLE"
    expires_at: UtcDateTime | None = None


class BehaviorAttributes(BaseModel):
    """What a BEHAVIOR campaign's ``attributes`` must hold to earn (product decisions, section 9)."""

    model_config = ConfigDict(extra="allow")
    event_type: str | None = Field(default=None, min_length=1, max_length=64)
    reward_id: Uuid | None = None
    amount: Number = Field(default=Decimal(0), ge=0)
    per_currency_unit: Number = Field(default=Decimal(0), ge=0)
    expires_in_days: int | None = Field(default=None, ge=1, le=36500)
    max_per_day: int | None = Field(default=None, ge=1, le=1000, description="issues per customer per UTC day")
    conditions: Conditions = Field(default_factory=list)


class Campaign(Strict):
    id: Uuid = Field(default_factory=new_id)
    name: Name
    type: CampaignType
    brand_id: Uuid | None = None
    attributes: dict[str, Any] = Field(default_factory=dict)
    stores: list[str] | None = None
    channels: list[str] | None = None
    products: list[str] | None = None
    content: dict[str, Any] = Field(default_factory=dict)
    template_id: Uuid | None = None
    labels: list[str] = Field(default_factory=list)
    platforms: list[str] = Field(default_factory=list)
    funded_by: str | None = Field(default=None, max_length=100)
    starts_at: UtcDateTime | None = None
    ends_at: UtcDateTime | None = None
    paused: bool = False
    finished_at: UtcDateTime | None = None
    order: Number = Decimal(0)
    tier_ids: list[Uuid] | None = None
    codes: list[CouponCode] | None = None

    @field_validator("codes")
    @classmethod
    def _unique_codes(cls, codes: list[CouponCode] | None) -> list[CouponCode] | None:
        seen: set[str] = set()
        for code in codes or []:
            if code.code in seen:
                raise PydanticCustomError("duplicate", f"code {code.code!r} appears more than once")
            seen.add(code.code)
        return codes

    # The rules that tie fields to the type (codes only on COUPONS; BEHAVIOR attributes) are checked by
    # CampaignKind.prepare, which can name the exact field that breaks them.


class CustomEventType(Strict):
    id: Uuid = Field(default_factory=new_id)
    name: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_.\-]{0,63}$")
    description: Text = ""
    active: bool = True

    @field_validator("name")
    @classmethod
    def _not_purchase(cls, name: str) -> str:
        if name.upper() == "PURCHASE":
            raise PydanticCustomError("reserved", "PURCHASE is built in and cannot be a custom event type")
        return name


# A connection's event_types that forwards every type (custom type names begin with a letter: never "*").
ALL_EVENT_TYPES = "*"
PURCHASE = "PURCHASE"  # the one built-in event type (linksvc.loyalty.models.PURCHASE); the others are custom


class Connection(Strict):
    id: Uuid = Field(default_factory=new_id)
    name: ShortText = ""
    destination: Destination
    enabled: bool = True
    forward_events: bool = True
    forward_purchases: bool = True
    # Required, the choice explicit: an allow-list of event types (PURCHASE or custom names), or ["*"] for
    # every type. A connection stored before it was required may hold none (or []): it forwards none.
    event_types: list[Annotated[str, Field(max_length=64)]] = Field(min_length=1, max_length=500, description=(
        'the event types the connection forwards: PURCHASE and names of the account\'s custom event types, each '
        'once, or ["*"] for every type (required; a type left out is filtered, with the reason)'))
    config: dict[str, Any] = Field(default_factory=dict)

    @field_validator("event_types")
    @classmethod
    def _every_type_alone(cls, types: list[str]) -> list[str]:
        if ALL_EVENT_TYPES in types and len(types) > 1:
            raise PydanticCustomError("not_allowed", '"*" (every type) stands alone: ["*"], or a list of types')
        if any(not name.strip() for name in types):
            raise PydanticCustomError("string_too_short", "an event type is a name: PURCHASE or a custom type")
        return types


# A link's URLs are checked by their types (linksvc.links.link_urls): the one place for admin bodies, the
# preview and seed files alike.
class AndroidApp(Strict):
    package: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$", max_length=200)
    fallback_url: WebUrl | None = None
    sha256_cert_fingerprints: list[str] = Field(default_factory=list)


class IosApp(Strict):
    app_store_id: str | None = Field(default=None, pattern=r"^[0-9]{1,15}$")
    bundle_id: str | None = Field(default=None, max_length=155, pattern=r"^[A-Za-z0-9\-]+(\.[A-Za-z0-9\-]+)+$")
    team_id: str | None = Field(default=None, pattern=r"^[A-Z0-9]{10}$")
    fallback_url: WebUrl | None = None
    landing_page: bool = Field(default=False, description=(
        "iOS people get a page whose 'Open in the app' button copies the click's token for the app to claim "
        "(deferred deep link), then opens the App Store; needs app_store_id"))


class LinkPreviewFields(Strict):
    """What link-preview fetchers show of a link (the preview page, docs/decisions.md "Link previews"); a field
    left out takes the account's default."""

    title: str | None = Field(default=None, min_length=1, max_length=200)
    description: str | None = Field(default=None, min_length=1, max_length=500)
    image_url: HttpsUrl | None = None


LINK_CODE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_\-]{2,63}$"


class Link(Strict):
    id: Uuid = Field(default_factory=new_id)
    code: str | None = Field(default=None, pattern=LINK_CODE_PATTERN)
    kind: LinkKind
    campaign_id: Uuid | None = None
    template_id: Uuid | None = None
    destination_url: HttpsUrl
    deeplink: Deeplink | None = None
    android: AndroidApp | None = None
    ios: IosApp | None = None
    fallback_url: WebUrl | None = None
    expires_at: UtcDateTime | None = None
    disabled: bool = False
    # Lifecycle (docs/decisions.md, "Link lifecycle and passwords (issue 34)"): before valid_since the link leads
    # to pending_url (else a small page); once expired or once max_clicks clicks by people are counted, to
    # expired_url (else the 410 page).
    valid_since: UtcDateTime | None = None
    pending_url: WebUrl | None = Field(default=None, description="where the link leads before valid_since")
    expired_url: WebUrl | None = Field(default=None, description=(
        "where the link leads once expires_at has passed or max_clicks clicks by people are counted"))
    max_clicks: int | None = Field(default=None, ge=1, le=1_000_000_000, description=(
        "clicks by people (not bots) after which the link leads to expired_url, else answers 410"))
    # Write-only: sent in clear, stored as an argon2id hash (linksvc.links.passwords), never shown; reads say
    # password_protected. null removes it.
    password: str | None = Field(default=None, min_length=1, max_length=128, description=(
        "write-only: people are asked for it before the link opens; null removes it"))
    # A custom domain of the link's account (linksvc.domains): the link then resolves only there.
    domain: str | None = Field(default=None, min_length=1, max_length=253,
                               description="a host of one of the account's domains; the link resolves only there")

    @field_validator("domain")
    @classmethod
    def _lower_domain(cls, domain: str | None) -> str | None:
        return None if domain is None else domain.strip().lower().rstrip(".")
    preview: LinkPreviewFields | None = None
