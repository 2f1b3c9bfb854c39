"""The admin/seed shape of every resource: the specification's response fields plus the stored fields of
the product decisions. The same models validate admin API bodies and seed files and describe both in the
OpenAPI documents. Unknown fields are refused, so a typo names itself instead of being dropped.
"""

from __future__ import annotations

import ipaddress
from decimal import Decimal
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError

from linksvc.errors import Issue
from linksvc.forwarding.configs import CONFIGS
from linksvc.links.link_urls import Deeplink, HttpsUrl, WebUrl
from linksvc.resources.types import Name, Number, ShortText, Text, UtcDateTime, Uuid, new_id
from linksvc.rules.zones import known_time_zone


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
    config: dict[str, Any] = Field(default_factory=dict, description=(
        "the destination's settings, by `destination`: MetaConfig, TikTokConfig, Ga4Config, GoogleAdsConfig, "
        "MessagingConfig, WebhookConfig or S3ExportConfig; secrets are shown masked"))

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        """``config`` described with its destination's model (``linksvc.forwarding.configs``, which the admin API
        also checks it with): any of them, and, for each ``destination``, that one (``if``/``then``)."""
        json_schema = handler(schema)
        target = handler.resolve_ref_schema(json_schema)
        refs = {name: handler(model.__pydantic_core_schema__) for name, model in CONFIGS.items()}
        config = target["properties"]["config"]
        target["properties"]["config"] = {"description": config.get("description", ""),
                                          "anyOf": list(refs.values())}
        target["allOf"] = [{"if": {"properties": {"destination": {"const": name}}, "required": ["destination"]},
                            "then": {"properties": {"config": ref}}} for name, ref in refs.items()]
        return json_schema

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


# Smart links (issue 34): the rules of a link, evaluated in order on each click by linksvc.rules.
MAX_RULES = 50
MAX_CONDITION_ITEMS = 200
RULE_PLATFORMS = ("android", "ios", "desktop", "unknown")
RULE_OS = ("android", "ios", "windows", "macos", "linux", "chromeos", "other")
RULE_BROWSERS = ("chrome", "safari", "firefox", "edge", "opera", "samsung", "silk", "webview", "other")
RULE_DEVICES = ("mobile", "tablet", "desktop", "tv", "other")
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_LANGUAGE_TAG = r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$"
_HOST_LABELS = r"(\*\.)?([A-Za-z0-9]([A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9]([A-Za-z0-9\-]{0,61}[A-Za-z0-9])?"


def _items() -> Any:
    return Field(default=None, min_length=1, max_length=MAX_CONDITION_ITEMS)


class Sparse(Strict):
    """A rule's parts are written without the keys they leave out (no ``null`` for each absent condition)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, serialize_by_alias=True)

    # No return annotation: pydantic would take it as the serialized schema (an untyped object), and the OpenAPI
    # documents would describe a rule's conditions and target as anything. Without one, they read the fields.
    @model_serializer(mode="wrap")
    def _without_nulls(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        return {key: value for key, value in handler(self).items() if value is not None}


CountryCode = Annotated[str, Field(pattern=r"^[A-Za-z]{2}$")]
RegionCode = Annotated[str, Field(pattern=r"^[A-Za-z]{2}-[A-Za-z0-9]{1,3}$")]
LanguageTag = Annotated[str, Field(pattern=_LANGUAGE_TAG, max_length=35)]
ReferrerHost = Annotated[str, Field(pattern=f"^{_HOST_LABELS}$", max_length=253)]


def _network(text: str) -> str:
    try:
        return str(ipaddress.ip_network(text.strip(), strict=False))
    except ValueError:
        raise PydanticCustomError("format", f"{text!r} is not an IPv4 or IPv6 address or CIDR network") from None


Network = Annotated[str, Field(max_length=64), AfterValidator(_network)]
ClockTime = Annotated[str, Field(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$")]


class TimeWindow(Sparse):
    """Days and hours in an IANA time zone; ``from`` after ``to`` runs past midnight (22:00 to 06:00)."""

    timezone: str = Field(min_length=1, max_length=64)
    days: list[Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]] | None = Field(default=None, min_length=1,
                                                                                         max_length=7)
    from_: ClockTime | None = Field(default=None, alias="from")
    to: ClockTime | None = None

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, zone: str) -> str:
        if not known_time_zone(zone):
            raise PydanticCustomError("enum", f"{zone!r} is not an IANA time zone (like Europe/Paris)")
        return zone

    @model_validator(mode="after")
    def _window(self) -> TimeWindow:
        if (self.from_ is None) != (self.to is None):
            raise PydanticCustomError("missing", "from and to go together")
        if self.from_ is not None and self.from_ == self.to:
            raise PydanticCustomError("range", "from and to are the same time: leave both out for the whole day")
        if self.days is None and self.from_ is None:
            raise PydanticCustomError("one_of_required", "a time window needs days, or from and to")
        return self


class QueryCondition(Sparse):
    """A query parameter of the click: present (or not), equal to a value, or one of values."""

    param: str = Field(min_length=1, max_length=100)
    present: bool | None = None
    equals: str | None = Field(default=None, max_length=1000)
    one_of: list[Annotated[str, Field(max_length=1000)]] | None = Field(default=None, min_length=1,
                                                                         max_length=MAX_CONDITION_ITEMS)

    @model_validator(mode="after")
    def _one_test(self) -> QueryCondition:
        given = [name for name in ("present", "equals", "one_of") if getattr(self, name) is not None]
        if len(given) != 1:
            raise PydanticCustomError("one_of_required", "exactly one of present, equals or one_of is required")
        return self


class RuleConditions(Sparse):
    """What a click must be for its rule to pick the target: every condition given holds (at least one)."""

    countries: list[CountryCode] | None = _items()
    regions: list[RegionCode] | None = _items()
    languages: list[LanguageTag] | None = _items()
    platforms: list[Literal["android", "ios", "desktop", "unknown"]] | None = _items()
    os: list[Literal["android", "ios", "windows", "macos", "linux", "chromeos", "other"]] | None = _items()
    browsers: list[Literal["chrome", "safari", "firefox", "edge", "opera", "samsung", "silk", "webview",
                           "other"]] | None = _items()
    devices: list[Literal["mobile", "tablet", "desktop", "tv", "other"]] | None = _items()
    bot: bool | None = None
    time: TimeWindow | None = None
    query: list[QueryCondition] | None = Field(default=None, min_length=1, max_length=20)
    networks: list[Network] | None = _items()
    referrer_hosts: list[ReferrerHost] | None = _items()

    @field_validator("countries", "regions")
    @classmethod
    def _upper(cls, codes: list[str] | None) -> list[str] | None:
        return None if codes is None else [code.upper() for code in codes]

    @field_validator("referrer_hosts")
    @classmethod
    def _lower(cls, hosts: list[str] | None) -> list[str] | None:
        return None if hosts is None else [host.lower() for host in hosts]

    @model_validator(mode="after")
    def _some(self) -> RuleConditions:
        if not self.model_fields_set or all(getattr(self, name) is None for name in self.model_fields_set):
            raise PydanticCustomError("one_of_required", "a rule needs at least one condition")
        return self


class Target(Sparse):
    """Where a rule sends a click: URLs with the same rules as the link's own, or another link of the account
    (``{"link": CODE}``: its destination, deeplink and apps, one hop)."""

    link: str | None = Field(default=None, pattern=LINK_CODE_PATTERN)
    destination_url: HttpsUrl | None = None
    deeplink: Deeplink | None = None
    android: AndroidApp | None = None
    ios: IosApp | None = None
    fallback_url: WebUrl | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> Target:
        if self.link is None and self.destination_url is None:
            raise PydanticCustomError("one_of_required", "a target needs destination_url, or link (a code)")
        if self.link is not None and any(getattr(self, name) is not None for name in TARGET_FIELDS):
            raise PydanticCustomError("not_allowed", "a target is either link (a code) or URLs, not both")
        return self


TARGET_FIELDS = ("destination_url", "deeplink", "android", "ios", "fallback_url")


class Rule(Strict):
    name: str = Field(min_length=1, max_length=64)
    conditions: RuleConditions
    target: Target


MAX_VARIANTS = 20


class Variant(Strict):
    """One arm of a link's A/B split (docs/decisions.md, "A/B split (issue 34)"): its share of the people whom no
    rule routed is ``weight`` over the sum of the weights; without ``target`` it is the link's own target."""

    name: str = Field(min_length=1, max_length=64, pattern=r"^[^\x00-\x1f\x7f]+$")
    weight: int = Field(ge=0, le=1_000_000)
    target: Target | None = None


def variant_issues(data: dict[str, Any]) -> list[Issue]:
    """The split's rules over several fields: unique names and a positive sum of the weights (a target is
    checked by :class:`Target`)."""
    variants = data.get("variants")
    if not isinstance(variants, list):
        return []
    found: list[Issue] = []
    seen: set[str] = set()
    total = 0
    for index, variant in enumerate(variants):
        if not isinstance(variant, dict):
            continue
        name = variant.get("name")
        if isinstance(name, str):
            if name in seen:
                found.append(Issue(f"variants[{index}].name", f"another variant is named {name!r}", "duplicate"))
            seen.add(name)
        weight = variant.get("weight")
        if isinstance(weight, int) and not isinstance(weight, bool) and weight > 0:
            total += weight
    if variants and total == 0 and not found:
        found.append(Issue("variants", "the weights must add up to more than 0", "range"))
    return found


MAX_TAGS = 20
TAG_NAME = r"^[^\x00-\x1f\x7f,]+$"
FOLDER_NAME = r"^[^\x00-\x1f\x7f]+$"
TagName = Annotated[str, Field(min_length=1, max_length=50, pattern=TAG_NAME)]
FolderName = Annotated[str, Field(min_length=1, max_length=100, pattern=FOLDER_NAME)]


def tag_names(tags: list[str]) -> list[str]:
    """A link's tags as kept: each name without the spaces around it, once (the first spelling, in the order
    sent), none empty."""
    kept: dict[str, str] = {}
    for tag in tags:
        name = tag.strip()
        if name:
            kept.setdefault(name, name)
    return list(kept)


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
    password: str | None = Field(default=None, min_length=1, max_length=128, json_schema_extra={"writeOnly": True},
                                 description="write-only: people are asked for it before the link opens; null "
                                             "removes it; reads show password_protected")
    # A custom domain of the link's account (linksvc.domains): the link then resolves only there.
    domain: str | None = Field(default=None, min_length=1, max_length=253,
                               description="a host of one of the account's domains; the link resolves only there")

    @field_validator("domain")
    @classmethod
    def _lower_domain(cls, domain: str | None) -> str | None:
        return None if domain is None else domain.strip().lower().rstrip(".")
    preview: LinkPreviewFields | None = None
    rules: list[Rule] | None = Field(default=None, max_length=MAX_RULES, description=(
        "ordered: the first rule whose conditions all hold picks the click's target; none: the link's own"))
    # The A/B split of the link's own target, used when no rule matched (issue 34); the first is the control.
    variants: list[Variant] | None = Field(default=None, min_length=1, max_length=MAX_VARIANTS)
    # Organising (issue 36, docs/decisions.md "Tags and folders"): any number of tag names (up to 20), one folder.
    tags: list[TagName] = Field(default_factory=list, max_length=MAX_TAGS, description=(
        "tag names (a link may have several; names are trimmed, a repeated name is kept once)"))
    folder: FolderName | None = Field(default=None, description="the folder the link is in (one; none: no folder)")

    @field_validator("tags")
    @classmethod
    def _kept_tags(cls, tags: list[str]) -> list[str]:
        return tag_names(tags)

    @field_validator("folder")
    @classmethod
    def _trimmed_folder(cls, folder: str | None) -> str | None:
        return None if folder is None else folder.strip() or None

    @classmethod
    def cross_field_issues(cls, data: dict[str, Any]) -> list[Issue]:
        return variant_issues(data)
