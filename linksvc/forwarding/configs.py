"""Each destination's ``config``: the members its module reads (``outgoing.setting`` and ``required``), typed and
described. The admin API checks a connection's config against its destination's model, and the OpenAPI document
describes ``Connection.config`` with the same models, so the two cannot disagree.

The models stay open (``extra="allow"``): a connection stored before them may hold other members, which are
kept and never read. What a delivery needs but the config lacks (Meta's ``pixel_id`` ...) is not refused on save:
the delivery is filtered with the reason, as before, so that a connection can be saved before its credentials
are known. A webhook's ``endpoint_url`` is the exception: it is required.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

_ENDPOINT = Field(default=None, description="send here instead of the vendor's own API (a proxy or a test "
                                            "server): an http(s) URL", examples=["https://proxy.example.com"])
_VERSION = Field(default=None, description="the vendor API version to call (null: the service's current "
                                           "default, see docs/operations.md)", examples=["v21.0"])
_ACCESS_TOKEN = Field(default=None, description="the vendor's access token (write it; reads show it masked)")
_TEST_CODE = Field(default=None, description="the vendor's test event code: events go to its test view")


class DestinationConfig(BaseModel):
    model_config = ConfigDict(extra="allow")


class MetaConfig(DestinationConfig):
    """``destination: meta``: Meta's Conversions API."""

    pixel_id: str | None = Field(default=None, description="the Meta pixel (dataset) id; required to deliver",
                                 examples=["123456789012345"])
    access_token: str | None = _ACCESS_TOKEN
    test_event_code: str | None = _TEST_CODE
    action_source: str | None = Field(default=None, description="Meta's action_source (website, app, "
                                                                "physical_store, ...); null: chosen per event")
    default_country_code: str | None = Field(default=None, description="the calling code put before a phone "
                                                                        "number without one", examples=["57"])
    api_version: str | None = _VERSION
    endpoint_url: str | None = _ENDPOINT


class TikTokConfig(DestinationConfig):
    """``destination: tiktok``: TikTok's Events API."""

    pixel_code: str | None = Field(default=None, description="the TikTok pixel code; required to deliver")
    access_token: str | None = _ACCESS_TOKEN
    test_event_code: str | None = _TEST_CODE
    api_version: str | None = _VERSION
    endpoint_url: str | None = _ENDPOINT


class Ga4Config(DestinationConfig):
    """``destination: ga4``: the GA4 Measurement Protocol."""

    api_secret: str | None = Field(default=None, description="the Measurement Protocol API secret; required")
    measurement_id: str | None = Field(default=None, description="the web stream's measurement id (G-...)",
                                       examples=["G-ABC123"])
    firebase_app_id: str | None = Field(default=None, description="the app stream's Firebase app id")
    endpoint_url: str | None = _ENDPOINT


class GoogleAdsConfig(DestinationConfig):
    """``destination: google_ads``: click conversions uploaded to Google Ads."""

    customer_id: str | None = Field(default=None, description="the Google Ads customer id; required")
    conversion_action_id: str | None = Field(default=None, description="the conversion action; required")
    access_token: str | None = Field(default=None, description="an OAuth access token, or leave it out and give "
                                                               "client_id, client_secret and refresh_token")
    client_id: str | None = Field(default=None, description="the OAuth client id (with client_secret and "
                                                            "refresh_token)")
    client_secret: str | None = Field(default=None, description="the OAuth client secret")
    refresh_token: str | None = Field(default=None, description="the OAuth refresh token")
    token_url: str | None = Field(default=None, description="where tokens are refreshed (null: Google's)")
    login_customer_id: str | None = Field(default=None, description="a manager account to call as")
    developer_token: str | None = Field(default=None, description="sent when set")
    api_version: str | None = _VERSION
    endpoint_url: str | None = _ENDPOINT


class MessagingConfig(DestinationConfig):
    """``destination: messaging``: a messaging platform's JSON endpoint."""

    endpoint_url: str | None = Field(default=None, description="where the JSON POST goes; required to deliver")
    api_key: str | None = Field(default=None, description="sent as Authorization: Bearer when set")


class ClickWebhookSettings(BaseModel):
    """The ``link.clicked`` webhook: which clicks the connection is sent, one per delivery or a batch at a time
    (docs/decisions.md, "The link.clicked webhook")."""

    model_config = ConfigDict(extra="forbid")

    link_ids: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(default_factory=list, max_length=500,
                                description="only the clicks of these links (ids of links of the account); with "
                                            "tags, the clicks of these links and of the links carrying one of "
                                            "the tags; neither: every link", examples=[["9c1f0d2e-..."]])
    tags: list[Annotated[str, Field(min_length=1, max_length=50)]] = Field(default_factory=list, max_length=100,
                            description="only the clicks of links carrying one of these tags (see link_ids)",
                            examples=[["spring"]])
    bots: Literal["exclude", "include", "only"] = Field(
        default="exclude", description="clicks by bots (the click's bot flag): left out (exclude, the default, as "
                                       "reports count people), sent with the people's (include), or alone (only)")
    batch_size: int = Field(default=1, ge=1, le=100,
                            description="clicks per delivery: 1 sends one webhook per click; more sends them "
                                        "together in data.clicks, up to this many")
    batch_seconds: float = Field(default=10, ge=0, le=300,
                                 description="with batch_size over 1: how long the first click of a batch that is "
                                             "not full waits for others before it is sent anyway")


class WebhookConfig(DestinationConfig):
    """``destination: webhook``: the account's own endpoint, signed with Standard Webhooks."""

    endpoint_url: str = Field(description="where the webhooks go (https)", examples=["https://hooks.example.com/in"])
    secret: str | None = Field(default=None, description="whsec_ and the base64 of 24 to 64 random bytes; left out, "
                                                         "one is generated and shown once")
    previous_secret: str | None = Field(default=None, description="the secret a rotation replaced; it also signs "
                                                                  "until previous_secret_expires_at")
    previous_secret_expires_at: str | None = Field(default=None, description="until when previous_secret signs, "
                                                                             "ISO 8601")
    clicks: ClickWebhookSettings | None = Field(default=None, description="subscribes the connection to the "
                                                "link.clicked webhook with these settings; null or left out: no "
                                                "click is sent")


class S3ExportConfig(DestinationConfig):
    """``destination: s3_export``: the export job's events (its bucket and credentials are the service's settings,
    LINKSVC_EXPORT_*; nothing here is read)."""


CONFIGS: dict[str, type[DestinationConfig]] = {
    "meta": MetaConfig, "tiktok": TikTokConfig, "ga4": Ga4Config, "google_ads": GoogleAdsConfig,
    "messaging": MessagingConfig, "webhook": WebhookConfig, "s3_export": S3ExportConfig,
}
