"""The outgoing webhooks as the admin API's OpenAPI document describes them (its top-level ``webhooks``): each
kind's body, ``{"type", "timestamp", "data"}``, built by ``linksvc.forwarding.webhook.data_of``, and the Standard
Webhooks headers that sign it. Real deliveries are checked against these models
(``tests/http/test_webhook_payloads.py``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from api.routing import Header
from linksvc.loyalty.models import Analytics, Attribution, ClickIds, Product
from linksvc.resources.types import Number

_EVENT_ID = Field(description="the event's id, as the storefront answered it", examples=["9b2f4c1e-..."])
_CUSTOMER_ID = Field(description="the customer the event is about (null: none known)", examples=["cust-1042"])
_TIMESTAMP = Field(description="when the delivery was built, ISO 8601 in UTC", examples=["2026-11-28T09:15:02Z"])


class Payload(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EventAcceptedData(Payload):
    """The accepted event as it was sent, with the attribution the service resolved for it."""

    id: str = _EVENT_ID
    type: str = Field(description="PURCHASE or the name of a custom event type", examples=["PURCHASE"])
    customer_id: str | None = _CUSTOMER_ID
    issued_at: str | None = Field(description="when the event happened, as sent (ISO 8601)")
    order_id: str | None = Field(description="a purchase's order id", examples=["o-1001"])
    value: Number | None = Field(description="a purchase's value", examples=[50])
    currency: str | None = Field(description="a purchase's currency, ISO 4217", examples=["COP"])
    products: list[Product] | None = Field(description="a purchase's products")
    properties: dict[str, Any] | None = Field(description="a custom event's free-form properties")
    attribution: Attribution | None = Field(description="the resolved attribution: the click behind tracking_id "
                                                        "fills the UTM keys the event left out")
    attribution_original: Attribution | None = Field(description="the attribution exactly as the event sent it")
    analytics: Analytics | None = Field(description="the analytics service's identity and session, as sent")
    click_ids: ClickIds | None = Field(description="click identifiers the client captured, as sent")


class RewardLine(Payload):
    """An amount of a reward put in (or taken from) a customer's wallet."""

    line_id: str = Field(description="the wallet line")
    reward_id: str = Field(description="the reward")
    campaign_id: str | None = Field(default=None, description="the campaign that issued it")
    amount: Number = Field(description="how much of the reward", examples=[10])
    expiration_date: str | None = Field(default=None, description="when the line lapses (null: never)")


class RewardIssuedData(Payload):
    """The rewards an event put in the customer's wallet (sent only when it issued some)."""

    event_id: str = _EVENT_ID
    customer_id: str | None = _CUSTOMER_ID
    rewards: list[RewardLine] = Field(description="the wallet lines issued")


class PurchaseReversedData(Payload):
    """A reversed purchase, with its original attribution (UTM kept)."""

    event_id: str = _EVENT_ID
    customer_id: str | None = _CUSTOMER_ID
    order_id: str | None = Field(description="the purchase's order id")
    reason: str | None = Field(description="why it was reversed, as the storefront said", examples=["returned"])
    reversed_at: str | None = Field(description="when it was reversed, ISO 8601 in UTC")
    value: Number | None = Field(description="the purchase's value")
    currency: str | None = Field(description="the purchase's currency, ISO 4217")
    attribution: Attribution = Field(description="the purchase's resolved attribution")
    attribution_original: Attribution | None = Field(description="the purchase's attribution as it was sent")


class RewardReversedData(Payload):
    """What a reversal took back from the wallet, and what it could not (already spent or lapsed)."""

    event_id: str = _EVENT_ID
    customer_id: str | None = _CUSTOMER_ID
    taken_back: list[RewardLine] = Field(description="the amounts taken back")
    shortfall: list[RewardLine] = Field(description="the amounts that could not be taken back")


class TierChangedData(Payload):
    """A customer's tier moved (sent only when it did)."""

    event_id: str = _EVENT_ID
    customer_id: str | None = _CUSTOMER_ID
    from_: str | None = Field(alias="from", description="the tier before (null: none)")
    to: str | None = Field(description="the tier after (null: none)")
    cause: Literal["purchase", "reversal"] = Field(description="the change behind it")


class WebhookClick(Payload):
    """A stored click, as the clicks export writes it: never the client's address nor its user agent."""

    clicked_at: str = Field(description="when the click was answered, ISO 8601 in UTC",
                            examples=["2026-11-28T09:15:01.250Z"])
    account_id: str = Field(description="the account of the link")
    link_id: str = Field(description="the link clicked")
    code: str | None = Field(description="the link's short code (null: the link was deleted since)",
                             examples=["spring"])
    campaign_id: str | None = Field(description="the link's campaign (null: none)")
    tracking_id: str = Field(description="the click's tracking id, which an app or a purchase names it by")
    platform: str = Field(description="android, ios, desktop or unknown", examples=["ios"])
    os: str | None = Field(description="the operating system's family, from the user agent", examples=["iOS"])
    os_version: str | None = Field(description="the operating system's version")
    browser: str | None = Field(description="the browser's family", examples=["Mobile Safari"])
    browser_version: str | None = Field(description="the browser's version")
    device_brand: str | None = Field(description="the device's brand", examples=["Apple"])
    device_model: str | None = Field(description="the device's model", examples=["iPhone"])
    bot: bool = Field(description="whether the click was a bot's (crawler, preview, monitor)")
    country: str | None = Field(description="the client's country, ISO 3166-1 alpha-2", examples=["CO"])
    region: str | None = Field(description="the client's region (with a city database)")
    city: str | None = Field(description="the client's city (with a city database)")
    referrer_host: str | None = Field(description="the host of the Referer header (never its path or query)")
    utm_source: str | None = Field(description="the utm_source the link sent (null: none)")
    utm_medium: str | None = Field(description="the utm_medium the link sent")
    utm_campaign: str | None = Field(description="the utm_campaign the link sent")
    utm_term: str | None = Field(description="the utm_term the link sent")
    utm_content: str | None = Field(description="the utm_content the link sent")
    rule: str | None = Field(description="the link's rule that matched (null: none)")
    variant: str | None = Field(description="the A/B split's variant the visitor was given (null: none)")
    answer: str = Field(description="what the resolver answered: the destination, the app, the store, ...")
    route: Literal["web", "app", "store"] | None = Field(description="where the answer sent the visitor")


class LinkClickedData(Payload):
    """Clicks of the account's links: one per webhook, or a batch (the connection's config.clicks.batch_size)."""

    clicks: list[WebhookClick] = Field(description="the clicks, oldest first", min_length=1)


def _body(kind: str, data: type[Payload], doc: str) -> type[BaseModel]:
    name = "".join(part.capitalize() for part in kind.split(".")) + "Webhook"
    fields: dict[str, Any] = {
        "type": (Literal[kind], Field(description="the webhook's kind", examples=[kind])),  # type: ignore[valid-type]
        "timestamp": (str, _TIMESTAMP),
        "data": (data, Field(description=data.__doc__ or "")),
    }
    return create_model(name, __config__=ConfigDict(extra="forbid"), __doc__=doc, **fields)


WEBHOOKS: dict[str, type[BaseModel]] = {
    "event.accepted": _body("event.accepted", EventAcceptedData, "Every event the storefront accepted."),
    "reward.issued": _body("reward.issued", RewardIssuedData, "An event issued rewards."),
    "purchase.reversed": _body("purchase.reversed", PurchaseReversedData, "A purchase was reversed."),
    "reward.reversed": _body("reward.reversed", RewardReversedData, "A reversal took rewards back."),
    "tier.changed": _body("tier.changed", TierChangedData, "An event or a reversal moved the customer's tier."),
    "link.clicked": _body("link.clicked", LinkClickedData, "Links were clicked (a connection subscribes with "
                                                           "config.clicks: which links, tags and bots, one or a "
                                                           "batch per webhook)."),
}

# Standard Webhooks (https://www.standardwebhooks.com): what a receiver checks before it trusts the body.
HEADERS = (
    Header("webhook-id", "the delivery's id: the same on every retry, so a receiver drops duplicates", True),
    Header("webhook-timestamp", "when the delivery was signed, Unix seconds; refuse one far from now", True),
    Header("webhook-signature", "v1,<base64 HMAC-SHA256 of '{webhook-id}.{webhook-timestamp}.{body}'> keyed by the "
           "base64 part of the connection's whsec_ secret; for 24 hours after a rotation two signatures, "
           "space-separated, the new secret's first", True),
)
