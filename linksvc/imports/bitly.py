"""Bitly: the links of a group as its API lists them (``GET /v4/groups/{group_guid}/bitlinks``: ``links``, each
with ``id`` ``bit.ly/abc``, ``link``, ``custom_bitlinks``, ``long_url``, ``title``, ``tags``, ``created_at``), or a
CSV export whose columns carry those names (``Long URL`` and ``long_url`` alike).

The code is the first custom back-half (``custom_bitlinks``, what a team chose and printed) when the link has
one, else the Bitly id's back-half.
"""

from __future__ import annotations

from typing import Any

from linksvc.imports.rows import (
    ImportRow,
    csv_records,
    first,
    items_at,
    json_document,
    not_a_record,
    row_of,
    short_parts,
)

NAME = "bitly"
LABEL = "Bitly"
SOURCE = "https://dev.bitly.com/api-reference/#getBitlinksByGroup"


def _row(number: int, item: dict[str, Any]) -> ImportRow:
    custom = item.get("custom_bitlinks")
    short = custom[0] if isinstance(custom, list) and custom else first(item, "id", "link", "bitlink", "shortlink",
                                                                            "shortlinkurl", "bitlinkurl")
    host, code = short_parts(short)
    return row_of(number, code, first(item, "long_url", "longurl", "destination", "destinationurl"),
                  title=first(item, "title"), tags=first(item, "tags"),
                  created_at=first(item, "created_at", "createdat", "created", "datecreated"), host=host)


def rows(text: str) -> list[ImportRow]:
    if text.lstrip("\ufeff \r\n\t")[:1] in ("{", "["):
        items = items_at(json_document(text, LABEL), LABEL, ("links",))
        return [_row(n, item) if isinstance(item, dict) else not_a_record(n) for n, item in enumerate(items, 1)]
    return [_row(line, record) for line, record in csv_records(text, LABEL)]
