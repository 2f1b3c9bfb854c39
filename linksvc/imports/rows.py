"""The common row every vendor's export is read into, and what the parsers share.

A parser is pure: the export's text in, a list of :class:`ImportRow` out. A file that is not the vendor's export
at all (not JSON, not the documented shape, too many rows) raises :class:`ExportProblem` and nothing is imported;
a row that lacks what a link needs still becomes a row, carrying its ``problem``, so that it fails alone. Every
cell is data: nothing read here is evaluated, and text is only trimmed.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from linksvc.jsoncodec import JSONDecodeError, loads

MAX_ROWS = 20_000
"""Rows of one import: an export with more is refused whole (send it in parts), like the Dynamic Links import's."""


class ExportProblem(ValueError):
    """The file is not the vendor's export: the message says what was expected."""


@dataclass(frozen=True, slots=True)
class ImportRow:
    """One link of an export. ``number`` is its place in the file: a CSV row's line (the header is line 1), a JSON
    list's item (from 1). ``code`` is the back-half, slashtag or keyword (None: the vendor's export has none);
    ``host`` the short domain it was served on, if the export names it; ``created_at`` the vendor's time, ISO 8601
    in UTC when it reads as a time."""

    number: int
    code: str | None
    destination: str
    title: str | None = None
    tags: tuple[str, ...] = ()
    created_at: str | None = None
    host: str | None = None
    problem: str | None = None


def json_document(text: str, vendor: str) -> Any:
    try:
        return loads(text)
    except (JSONDecodeError, RecursionError):
        raise ExportProblem(f"is not JSON: a {vendor} export is the JSON its API lists links with") from None


def items_at(document: Any, vendor: str, *paths: tuple[str, ...]) -> list[Any]:
    """The list of links of a JSON export: ``document`` itself when it is a list, else the first of ``paths``
    (keys, outside in) that leads to a list."""
    if isinstance(document, list):
        return _bounded(document)
    for path in paths:
        found: Any = document
        for key in path:
            found = found.get(key) if isinstance(found, dict) else None
        if isinstance(found, list):
            return _bounded(found)
    shapes = " or ".join(".".join(path) for path in paths)
    raise ExportProblem(f"is not a {vendor} export: expected a list of links at {shapes}")


def _bounded(items: list[Any]) -> list[Any]:
    if len(items) > MAX_ROWS:
        raise ExportProblem(f"holds {len(items):,} links; at most {MAX_ROWS:,} an import: send the export in parts")
    return items


def csv_records(text: str, vendor: str) -> list[tuple[int, dict[str, str]]]:
    """The rows of a CSV export by its header, each with its line; header names folded (case, spaces, ``-``, ``_``)
    so that ``Long URL`` and ``long_url`` are the same column. Separator: comma, or the first of ``;`` and tab
    that the header holds instead."""
    lines = text.lstrip("\ufeff")
    header = lines.split("\n", 1)[0]
    delimiter = "," if "," in header else ";" if ";" in header else "\t" if "\t" in header else ","
    try:
        reader = csv.reader(io.StringIO(lines, newline=""), delimiter=delimiter, strict=True)
        rows = [(reader.line_num, row) for row in reader]
    except csv.Error as exc:
        raise ExportProblem(f"is not a {vendor} CSV export: {exc}") from None
    if not rows:
        raise ExportProblem(f"is empty: a {vendor} CSV export starts with its header")
    names = [folded(name) for name in rows[0][1]]
    records = [(line, dict(zip(names, (cell.strip() for cell in cells), strict=False)))
               for line, cells in rows[1:] if any(cell.strip() for cell in cells)]
    return _bounded(records)  # type: ignore[return-value]


def folded(name: str) -> str:
    return "".join(ch for ch in name.strip().lower() if ch.isalnum())


def first(record: Mapping[str, Any], *names: str) -> Any:
    """The first of ``names`` the record holds with a value (CSV: folded names)."""
    for name in names:
        value = record.get(name)
        if value not in (None, ""):
            return value
    return None


def text(value: Any) -> str | None:
    """A cell or JSON value as text: strings trimmed, numbers written out, anything else (objects, lists) none."""
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def tags_of(value: Any) -> tuple[str, ...]:
    """Tags as a list of text (JSON) or one cell separated by ``,``, ``;`` or ``|``; blanks and repeats dropped."""
    if isinstance(value, str):
        for separator in ("|", ";"):
            value = value.replace(separator, ",")
        items: Iterable[Any] = value.split(",")
    elif isinstance(value, list):
        items = (item.get("name") if isinstance(item, dict) else item for item in value)
    else:
        return ()
    found: list[str] = []
    for item in items:
        tag = text(item)
        if tag and tag not in found:
            found.append(tag)
    return tuple(found)


def short_parts(short_url: Any) -> tuple[str | None, str | None]:
    """(host, code) of a short link: ``https://bit.ly/abc``, ``bit.ly/abc`` or ``//sho.rt/abc``; (None, None)
    when it reads as neither."""
    value = text(short_url)
    if value is None:
        return None, None
    if "//" not in value:
        value = "//" + value
    try:
        parts = urlsplit(value)
        host = (parts.hostname or "").rstrip(".") or None
    except ValueError:
        return None, None
    path = parts.path.strip("/")
    return host, path or None


def created(value: Any) -> str | None:
    """The vendor's creation time as ISO 8601 in UTC when it reads as a time (ISO 8601 with or without an offset,
    ``+0000`` offsets, MySQL's ``YYYY-MM-DD HH:MM:SS`` taken as UTC, Unix seconds), else its text as given."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, UTC).isoformat().replace("+00:00", "Z")
        except (OverflowError, OSError, ValueError):
            return None
    raw = text(value)
    if raw is None:
        return None
    candidate = raw.replace(" ", "T", 1) if len(raw) >= 19 and raw[10] == " " else raw
    if candidate.endswith("Z"):
        candidate = candidate[:-1] + "+00:00"
    if len(candidate) > 5 and candidate[-5] in "+-" and candidate[-4:].isdigit() and candidate[-3] != ":":
        candidate = candidate[:-2] + ":" + candidate[-2:]  # +0000 → +00:00
    try:
        moment = datetime.fromisoformat(candidate)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")
    except (ValueError, OverflowError):  # not a time, or one at the calendar's edge in another zone
        return raw[:64]


def row_of(number: int, code: Any, destination: Any, *, title: Any = None, tags: Any = None, created_at: Any = None,
           host: Any = None) -> ImportRow:
    """The common row of one record; a record without a destination carries its problem."""
    url = text(destination)
    return ImportRow(number=number, code=text(code), destination=url or "", title=text(title), tags=tags_of(tags),
                     created_at=created(created_at), host=(text(host) or "").lower().rstrip(".") or None,
                     problem=None if url else "has no destination URL")


def not_a_record(number: int) -> ImportRow:
    return ImportRow(number=number, code=None, destination="", problem="is not a link object")
