"""Link previews: what a chat app or social network shows when someone pastes a short link.

Their fetchers (named in :data:`PREVIEW_FETCHERS` by the bot names :mod:`linksvc.links.bots` gives) read the
Open Graph and Twitter card tags of the page they get. Without this module they follow the resolver's 302 and
show the destination's own tags; with it, a link (its ``preview`` fields) or its account (the defaults of
``PUT /api/admin/v1/accounts/{id}/link-preview``) can say what the card shows, field by field: the link's
value wins, else the account's. Search crawlers (Googlebot, bingbot, Applebot...) are not preview fetchers and
keep the 302: they must index the destination, not a card.

Decisions (docs/decisions.md, "Link previews"):

- A link for which neither it nor its account sets a title, description or image keeps the 302: the fetcher
  then shows the destination's own card, which is better than a page we would have to make up from its host.
- The account's defaults are read from the store on preview requests only (a primary-key read; fetchers are a
  small share of clicks), never on a person's click, so no read model and no invalidation are needed.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from pydantic import Field

from linksvc.accounts.service import get_account
from linksvc.clock import iso, utcnow
from linksvc.links.devices import Device
from linksvc.links.link_urls import HttpsUrl
from linksvc.resources.models import Strict
from linksvc.store import Store, StoreError, in_one_unit
from storage import link_previews as repo
from storage.db import Conn, Tx, WouldWait

PREVIEW_FETCHERS: frozenset[str] = frozenset({
    # Meta: Facebook, Messenger, Instagram; iMessage and LINE send facebookexternalhit too
    "facebookexternalhit", "facebot",
    "twitterbot",  # X; Telegram and iMessage also name it
    "slackbot",  # Slackbot-LinkExpanding (unfurls) and Slackbot: one name
    "linkedinbot",
    "whatsapp",  # WhatsApp, and Signal, whose previews send "WhatsApp/2"
    "telegrambot",
    "discordbot",
    "skypeuripreview",  # Skype and Microsoft Teams
    "microsoftpreview",  # Teams and Outlook's newer fetcher
    "pinterestbot",
    "redditbot",
    "mastodon", "http.rb", "misskey", "pleroma", "akkoma",  # the fediverse's servers (GoToSocial: http.rb)
    "bluesky cardyb", "blueskypreviewbot", "bluesky",
    "embedly", "iframely",  # the embedding services behind many sites' cards (Medium, Notion, Confluence...)
    "vkshare",
    "snap url preview service", "snapurlpreview",  # Snapchat
    "viber",
    "yahoo link preview",
    "bufferlinkpreviewbot",
    "chatwork linkpreview",
})
"""Bots that get the preview page; every other bot (search crawlers among them) keeps the 302."""


def is_preview_fetcher(device: Device) -> bool:
    """One set lookup, and only for bots: the resolver's fast lane asks it on every bot's click."""
    return device.bot and device.browser in PREVIEW_FETCHERS


class AccountPreviewDefaults(Strict):
    """An account's defaults for its links' preview cards; a field left out or null has none."""

    title: str | None = Field(default=None, min_length=1, max_length=200)
    description: str | None = Field(default=None, min_length=1, max_length=500)
    image_url: HttpsUrl | None = None
    site_name: str | None = Field(default=None, min_length=1, max_length=100,
                                  description="og:site_name; the destination's host when none")


@dataclass(frozen=True, slots=True)
class PreviewCard:
    title: str
    description: str | None
    image_url: str | None
    site_name: str


def defaults_view(account_id: str, row: repo.PreviewDefaults | None) -> dict[str, Any]:
    return {"account_id": account_id, "title": row.title if row else None,
            "description": row.description if row else None, "image_url": row.image_url if row else None,
            "site_name": row.site_name if row else None, "updated_at": row.updated_at if row else None}


async def read_defaults(db: Store, account_id: str) -> dict[str, Any]:
    """The account's defaults (every field null until set); NotFound for an unknown account."""
    await get_account(db.reader, account_id)
    return defaults_view(account_id, await repo.get_defaults(db.reader, account_id))


async def put_defaults(db: Store, account_id: str, defaults: AccountPreviewDefaults) -> dict[str, Any]:
    """Replaces the account's defaults (a field left out has none afterwards)."""
    async def unit(tx: Tx) -> repo.PreviewDefaults | None:
        await get_account(tx, account_id)
        await repo.put_defaults(tx, repo.PreviewDefaults(account_id, defaults.title, defaults.description,
                                                         defaults.image_url, defaults.site_name, iso(utcnow())))
        return await repo.get_defaults(tx, account_id)

    return defaults_view(account_id, await in_one_unit(db, unit))


async def card_of(db: Store, account_id: str, link: Mapping[str, Any]) -> PreviewCard | None:
    """What the preview page shows of ``link``: per field the link's value, else the account's default; None
    when neither sets a title, description or image (the fetcher then gets the 302)."""
    return await card_on(db.reader, account_id, link)


def plain_redirect_now(db: Store, account_id: str, own: Mapping[str, Any] | None) -> bool:
    """Whether a preview fetcher's click on a link of ``account_id`` (its own ``preview`` settings: ``own``) gets
    the plain 302 any bot gets, because neither the link nor the account sets a card to show: read at once, for
    the resolver's fast lane. False when there is a card, and when the store answers only by awaiting
    (PostgreSQL) or fails: the handler then answers."""
    if own and shows_card(own, None):
        return False
    try:
        defaults = repo.get_defaults_now(db.reader, account_id)
    except (WouldWait, *StoreError):
        return False
    return not shows_card(own or {}, defaults)


def shows_card(own: Mapping[str, Any], defaults: repo.PreviewDefaults | None) -> bool:
    """Whether the link's own preview fields and the account's defaults give a card a title, a description or
    an image: :func:`merge_card` makes a card exactly then."""
    return bool(own.get("title") or own.get("description") or own.get("image_url")
                or (defaults is not None and (defaults.title or defaults.description or defaults.image_url)))


async def card_on(conn: Conn, account_id: str, link: Mapping[str, Any]) -> PreviewCard | None:
    """:func:`card_of` read on ``conn`` (``linksvc route`` holds a connection, not the service's store)."""
    own = link.get("preview") or {}
    defaults = await repo.get_defaults(conn, account_id)
    return merge_card(own, defaults, link["destination_url"])


def merge_card(own: dict[str, Any], defaults: repo.PreviewDefaults | None, destination_url: str) -> PreviewCard | None:
    title = own.get("title") or (defaults.title if defaults else None)
    description = own.get("description") or (defaults.description if defaults else None)
    image_url = own.get("image_url") or (defaults.image_url if defaults else None)
    if not (title or description or image_url):
        return None
    host = urlsplit(destination_url).hostname or destination_url
    return PreviewCard(title or host, description, image_url, (defaults.site_name if defaults else None) or host)


def preview_page(card: PreviewCard, short_url: str, destination: str) -> str:
    """The page: ``<title>``, Open Graph and Twitter card tags, and a visible link to ``destination``. Every
    value is escaped for both text and attributes, so no title can close a tag or an attribute."""

    def esc(value: str) -> str:
        return html.escape(value, quote=True)

    tags = [("og:type", "website"), ("og:site_name", card.site_name), ("og:title", card.title),
            ("og:url", short_url)]
    if card.description:
        tags.append(("og:description", card.description))
    if card.image_url:
        tags.append(("og:image", card.image_url))
    twitter = [("twitter:card", "summary_large_image" if card.image_url else "summary"),
               ("twitter:title", card.title)]
    if card.description:
        twitter.append(("twitter:description", card.description))
    if card.image_url:
        twitter.append(("twitter:image", card.image_url))
    head = "".join(f'<meta property="{name}" content="{esc(value)}">' for name, value in tags)
    head += "".join(f'<meta name="{name}" content="{esc(value)}">' for name, value in twitter)
    if card.description:
        head += f'<meta name="description" content="{esc(card.description)}">'
    text = f"<p>{esc(card.description)}</p>" if card.description else ""
    return (f'<!doctype html><html lang=en><head><meta charset=utf-8>'
            f"<meta name=viewport content='width=device-width'><meta name=robots content=noindex>"
            f"<title>{esc(card.title)}</title>{head}</head>"
            f"<body style='font-family:sans-serif;margin:3em auto;max-width:30em'><h1>{esc(card.title)}</h1>{text}"
            f'<p><a href="{esc(destination)}">Continue to {esc(urlsplit(destination).hostname or destination)}</a>'
            f"</p></body></html>")
