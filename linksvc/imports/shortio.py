"""Short.io: the links of a domain as its API lists them (``GET /api/links?domain_id=...``: ``links``, each with
``path``, ``originalURL``, ``title``, ``tags``, ``shortURL``, ``createdAt``). The code is the path."""

from __future__ import annotations

from typing import Any

from linksvc.imports.rows import ImportRow, items_at, json_document, not_a_record, row_of, short_parts

NAME = "shortio"
LABEL = "Short.io"
SOURCE = "https://developers.short.io/reference/get_api-links"


def _row(number: int, item: dict[str, Any]) -> ImportRow:
    host, short_code = short_parts(item.get("secureShortURL") or item.get("shortURL"))
    return row_of(number, item.get("path") or short_code, item.get("originalURL"), title=item.get("title"),
                  tags=item.get("tags"), created_at=item.get("createdAt"), host=host)


def rows(text: str) -> list[ImportRow]:
    items = items_at(json_document(text, LABEL), LABEL, ("links",))
    return [_row(n, item) if isinstance(item, dict) else not_a_record(n) for n, item in enumerate(items, 1)]
