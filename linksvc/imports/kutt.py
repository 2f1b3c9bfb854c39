"""Kutt: the links as its API lists them (``GET /api/v2/links``: ``data``, each with ``address``, ``target``,
``description``, ``link``, ``domain``, ``banned``, ``created_at``). The code is the address. A link Kutt banned
(its target was reported as harmful) is not brought in, nor one Kutt protected with a password (the export does
not carry the password, and an open copy would show what its owner kept closed): the row says so."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from linksvc.imports.rows import ImportRow, items_at, json_document, not_a_record, row_of, short_parts

NAME = "kutt"
LABEL = "Kutt"
SOURCE = "https://docs.kutt.it/"


def _row(number: int, item: dict[str, Any]) -> ImportRow:
    short_host, short_code = short_parts(item.get("link"))
    row = row_of(number, item.get("address") or short_code, item.get("target"), title=item.get("description"),
                 created_at=item.get("created_at"), host=item.get("domain") or short_host)
    if item.get("banned") is True:
        return replace(row, problem="was banned on Kutt (its destination was reported as harmful)")
    if item.get("password") is True:
        return replace(row, problem="has a password on Kutt, which its export does not carry: create it here with "
                                    "a password of its own")
    return row


def rows(text: str) -> list[ImportRow]:
    items = items_at(json_document(text, LABEL), LABEL, ("data",))
    return [_row(n, item) if isinstance(item, dict) else not_a_record(n) for n, item in enumerate(items, 1)]
