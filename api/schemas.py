"""Response shapes shared by both APIs: the envelopes, the error body and the wallet."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from linksvc.links.organise import LinkSearch
from linksvc.links.utm import UTM_FIELDS
from linksvc.resources.models import Reward
from linksvc.resources.types import Number

T = TypeVar("T")


class Error(BaseModel):
    error: str
    details: str | dict[str, Any] | list[Any]


def _noun(param: Any) -> str:
    """The name a type reads as in a schema name: ``LinkView`` → ``Link``, ``list[Brand]`` → ``BrandList``."""
    args = getattr(param, "__args__", ())
    if getattr(param, "__origin__", None) is list and args:
        return _noun(args[0]) + "List"
    config = getattr(param, "model_config", {})
    name = str(config.get("title") or getattr(param, "__name__", param))
    return name.removesuffix("View") if name.endswith("View") and name != "View" else name


class Envelope(BaseModel, Generic[T]):
    """The success body: ``{"data": ...}``."""

    data: T = Field(description="the answer")

    @classmethod
    def model_parametrized_name(cls, params: tuple[Any, ...]) -> str:
        # A schema (and a generated client's class) named after what it holds: LinkEnvelope, BrandListEnvelope.
        return f"{_noun(params[0])}Envelope"


class Page(BaseModel, Generic[T]):
    """One page of a list: the items from ``offset``, at most ``limit`` of them, and how many there are."""

    data: list[T] = Field(description="the items of this page")
    count: int = Field(description="total number of items", examples=[1])
    limit: int = Field(description="the most items a page holds, as asked", examples=[50])
    offset: int = Field(description="how many items come before this page, as asked", examples=[0])

    @classmethod
    def model_parametrized_name(cls, params: tuple[Any, ...]) -> str:
        return f"{_noun(params[0])}Page"


class Paging(BaseModel):
    limit: int = Field(default=50, ge=1, le=500)
    offset: int = Field(default=0, ge=0, le=1_000_000_000)


class LinkSearchQuery(Paging):
    """The admin API's lists of links (``GET .../links`` and ``.../links/overview``): every filter given must hold."""

    q: str | None = Field(default=None, max_length=200, description=(
        "text looked for, whatever the case, in the code, the destination URL (its UTM values too), the folder "
        "and the tags"))
    tag: str | None = Field(default=None, max_length=50, description="only links with this tag")
    folder: str | None = Field(default=None, max_length=100, description="only links in this folder")
    utm_source: str | None = Field(default=None, max_length=200, description="only links whose destination has "
                                                                             "this utm_source (whatever the case)")
    utm_medium: str | None = Field(default=None, max_length=200)
    utm_campaign: str | None = Field(default=None, max_length=200)
    utm_term: str | None = Field(default=None, max_length=200)
    utm_content: str | None = Field(default=None, max_length=200)

    def search(self) -> LinkSearch:
        utm = {name: value for name in UTM_FIELDS if (value := getattr(self, name))}
        return LinkSearch(self.q, self.tag, self.folder, utm)


class WalletReward(Reward):
    """The reward a wallet total counts."""

    account_id: str


class WalletLine(BaseModel):
    amount: Number
    reward_id: str
    campaign_id: str | None
    brand_id: str | None
    issued_at: str
    expiration_date: str | None
    reservation_expires_at: str | None


class WalletTotal(BaseModel):
    total: Number
    reward_id: str
    expiration_date: str | None
    reward: WalletReward | None


class Wallet(BaseModel):
    id: str
    owner_id: str
    lines: list[WalletLine]
    totals: list[WalletTotal]


class UtmEdit(BaseModel):
    """UTM changes to a link's destination: a value sets the field, null or "" removes it, absent leaves it."""

    model_config = ConfigDict(extra="forbid")
    utm_source: str | None = Field(default=None, max_length=200)
    utm_medium: str | None = Field(default=None, max_length=200)
    utm_campaign: str | None = Field(default=None, max_length=200)
    utm_term: str | None = Field(default=None, max_length=200)
    utm_content: str | None = Field(default=None, max_length=200)
