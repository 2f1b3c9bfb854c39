"""The admin/seed shape of the people resources: contacts (search) and customers (consent, opening
wallet). Same conventions as :mod:`linksvc.resources.models`."""

from __future__ import annotations

from datetime import date
from typing import Any

from pydantic import Field

from linksvc.resources.models import PersonStatus, Strict
from linksvc.resources.types import Email, Number, UtcDateTime, Uuid, new_id


class Address(Strict):
    street_1: str | None = None
    street_2: str | None = None
    street_number: str | None = None
    reference: str | None = None
    alias: str | None = None
    zip_code: str | None = None
    city: str | None = None
    state: str | None = None
    country: str | None = None


class BillingRecord(Strict):
    document_number: str | None = None
    document_type: str | None = None
    legal_name: str | None = None
    alias: str | None = None
    street_1: str | None = None
    street_2: str | None = None
    street_number: str | None = None
    city: str | None = None
    state: str | None = None
    country: str | None = None
    zip_code: str | None = None
    phone: str | None = None
    email: str | None = None


class PaymentMethod(Strict):
    method: str | None = None
    last_four: str | None = None
    card_holder: str | None = None
    card_brand: str | None = None
    alias: str | None = None
    expiry_month: int | None = Field(default=None, ge=1, le=12)
    expiry_year: int | None = Field(default=None, ge=1900, le=2200)


class Contact(Strict):
    id: Uuid = Field(default_factory=new_id)
    persona_id: Uuid | None = None
    email: Email | None = None
    document_type: str | None = Field(default=None, max_length=40)
    document_number: str | None = Field(default=None, max_length=50)
    deleted_at: UtcDateTime | None = None
    external_id: str | None = Field(default=None, max_length=200)
    first_name: str | None = Field(default=None, max_length=200)
    second_name: str | None = Field(default=None, max_length=200)
    last_name: str | None = Field(default=None, max_length=200)
    second_last_name: str | None = Field(default=None, max_length=200)
    email_verified: bool = False
    phone_verified: bool = False
    is_anonymous: bool = False
    dob: date | None = None
    gender: str | None = Field(default=None, max_length=40)
    country: str | None = Field(default=None, max_length=100)
    city: str | None = Field(default=None, max_length=100)
    phone: str | None = Field(default=None, max_length=40)
    source: str | None = Field(default=None, max_length=100)
    channel: str | None = Field(default=None, max_length=100)
    status: PersonStatus = "ACTIVE"
    tags: dict[str, Any] = Field(default_factory=dict)
    addresses: list[Address] = Field(default_factory=list)
    billing_info: list[BillingRecord] = Field(default_factory=list)
    payments: list[PaymentMethod] = Field(default_factory=list)
    data: dict[str, Any] = Field(default_factory=dict)


PURPOSES = (
    "behavioral_campaigns",
    "coupon_campaigns",
    "punchcard_campaigns",
    "email_marketing",
    "push_notifications",
    "whatsapp_marketing",
    "audience_marketing",
    "inapp_messages",
    "news_feed",
    "link_tracking",
)


class Purposes(Strict):
    behavioral_campaigns: bool | None = None
    coupon_campaigns: bool | None = None
    punchcard_campaigns: bool | None = None
    email_marketing: bool | None = None
    push_notifications: bool | None = None
    whatsapp_marketing: bool | None = None
    audience_marketing: bool | None = None
    inapp_messages: bool | None = None
    news_feed: bool | None = None
    link_tracking: bool | None = None


class Consent(Strict):
    consent_string: str | None = Field(default=None, max_length=5000)
    version: str | None = Field(default=None, max_length=40)
    consent_timestamp: UtcDateTime | None = None
    customer_id: str | None = None
    purposes: Purposes = Field(default_factory=Purposes)
    vendors: dict[str, bool] = Field(default_factory=dict)


class WalletLineIn(Strict):
    """An opening wallet line of a customer (seed files, the admin API, migration)."""

    amount: Number = Field(gt=0)
    reward_id: Uuid
    campaign_id: Uuid | None = None
    brand_id: Uuid | None = None
    issued_at: UtcDateTime | None = None
    expiration_date: UtcDateTime | None = None
    reservation_expires_at: UtcDateTime | None = None


class WalletIn(Strict):
    lines: list[WalletLineIn] = Field(default_factory=list, max_length=1000)


class Customer(Strict):
    id: str = Field(default_factory=new_id, min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.:\-]+$")
    external_id: str | None = Field(default=None, max_length=200)
    name: str | None = Field(default=None, max_length=300)
    email: Email | None = None
    registration_date: UtcDateTime | None = None
    status: PersonStatus = "ACTIVE"
    is_anonymous: bool = False
    phone_verified: bool = False
    gender: str | None = Field(default=None, max_length=40)
    dob: UtcDateTime | None = None
    document_type: str | None = Field(default=None, max_length=40)
    document_number: str | None = Field(default=None, min_length=1, max_length=50)
    country: str | None = Field(default=None, max_length=100)
    phone: str | None = Field(default=None, max_length=40)
    tier_id: Uuid | None = None
    tags: dict[str, Any] = Field(default_factory=dict)
    metrics: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)
    consent: Consent = Field(default_factory=Consent)
    wallet: WalletIn | None = None
