"""YOURLS: the links as its API's ``stats`` action answers with ``format=json`` (``links``: an object of
``link_1``, ``link_2``, ..., each with ``shorturl``, ``url``, ``title``, ``timestamp``, ``ip``, ``clicks``). The
code is the keyword, the last part of ``shorturl``; ``timestamp`` is the server's local time, read as UTC."""

from __future__ import annotations

from typing import Any

from linksvc.imports.rows import ExportProblem, ImportRow, items_at, json_document, not_a_record, row_of, short_parts

NAME = "yourls"
LABEL = "YOURLS"
SOURCE = "https://yourls.org/docs/development/api"


def _row(number: int, item: dict[str, Any]) -> ImportRow:
    host, code = short_parts(item.get("shorturl"))
    return row_of(number, code, item.get("url"), title=item.get("title"), created_at=item.get("timestamp"),
                  host=host)


def rows(text: str) -> list[ImportRow]:
    document = json_document(text, LABEL)
    links = document.get("links") if isinstance(document, dict) else None
    if isinstance(links, dict):  # what the API sends: link_1, link_2, ... in their order
        items = items_at(list(links.values()), LABEL)
    elif isinstance(links, list):
        items = items_at(links, LABEL)
    else:
        raise ExportProblem(f"is not a {LABEL} export: expected the stats action's object of links at links")
    return [_row(n, item) if isinstance(item, dict) else not_a_record(n) for n, item in enumerate(items, 1)]
