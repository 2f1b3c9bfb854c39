"""Shlink: the short URLs as its REST API lists them (``GET /rest/v3/short-urls``: ``shortUrls.data``, each with
``shortCode``, ``shortUrl``, ``longUrl``, ``title``, ``tags``, ``dateCreated``, ``domain``: null for the default
domain). The code is the short code."""

from __future__ import annotations

from typing import Any

from linksvc.imports.rows import ImportRow, items_at, json_document, not_a_record, row_of, short_parts

NAME = "shlink"
LABEL = "Shlink"
SOURCE = "https://api-spec.shlink.io/#/Short%20URLs/listShortUrls"


def _row(number: int, item: dict[str, Any]) -> ImportRow:
    short_host, _ = short_parts(item.get("shortUrl"))
    return row_of(number, item.get("shortCode"), item.get("longUrl"), title=item.get("title"), tags=item.get("tags"),
                  created_at=item.get("dateCreated"), host=item.get("domain") or short_host)


def rows(text: str) -> list[ImportRow]:
    items = items_at(json_document(text, LABEL), LABEL, ("shortUrls", "data"), ("data",))
    return [_row(n, item) if isinstance(item, dict) else not_a_record(n) for n, item in enumerate(items, 1)]
