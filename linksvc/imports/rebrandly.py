"""Rebrandly: the links as its API lists them (``GET /v1/links``: a list of link objects with ``slashtag``,
``destination``, ``title``, ``shortUrl``, ``domain.fullName``, ``createdAt``). The code is the slashtag."""

from __future__ import annotations

from typing import Any

from linksvc.imports.rows import ImportRow, items_at, json_document, not_a_record, row_of, short_parts

NAME = "rebrandly"
LABEL = "Rebrandly"
SOURCE = "https://developers.rebrandly.com/docs/link-entity"


def _row(number: int, item: dict[str, Any]) -> ImportRow:
    domain = item.get("domain")
    host = domain.get("fullName") if isinstance(domain, dict) else item.get("domainName")
    short_host, short_code = short_parts(item.get("shortUrl"))
    return row_of(number, item.get("slashtag") or short_code, item.get("destination"), title=item.get("title"),
                  tags=item.get("tags"), created_at=item.get("createdAt"), host=host or short_host)


def rows(text: str) -> list[ImportRow]:
    items = items_at(json_document(text, LABEL), LABEL, ("links",))
    return [_row(n, item) if isinstance(item, dict) else not_a_record(n) for n, item in enumerate(items, 1)]
