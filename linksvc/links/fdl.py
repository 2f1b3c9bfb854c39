"""Firebase Dynamic Links compatibility (docs/decisions.md, "Dynamic Links"): long links of the FDL form and the
reader of an FDL export (the console's, a long link per row, or Google Takeout's, a column per parameter).

A long Dynamic Link is ``https://DOMAIN/?link=...&apn=...&ibi=...`` (Firebase's "Manually constructing a Dynamic
Link URL": https://firebase.google.com/docs/dynamic-links/create-manually). Its parameters describe a whole link,
so :func:`link_of_long_link` turns them into the body of one of our links, which the resolver then answers like any
stored link (intent URL, store with the install referrer, fallbacks, tracking_id, UTM rules), and the importer
stores under the FDL short link's own path (a Takeout export's row gives the same parameters in its columns).

The parameter table, and what each becomes here (:data:`PARAMETERS`):

======  ==============================================================================================
link    the deep link the app opens: the link's ``deeplink`` (the intent URL's target on Android, the
        ``$app-found`` answer), and its destination where ``ofl`` is not given
apn     ``android.package``                 afl   ``android.fallback_url`` (else the Play page)
amv     accepted; the app checks its own version (FDL sent old versions to the Play Store; a browser
        cannot know the installed version, and neither can we)
ibi     ``ios.bundle_id``                   ifl   ``ios.fallback_url`` (else the App Store page)
isi     ``ios.app_store_id``                ius, imv, efr, ipbi, ipfl: accepted, no effect (see decisions)
ofl     the destination on every other platform (desktop), and for bots
utm_*   the click's UTM (the five fields), as if they had come in the short link's query
st, sd, si  the preview's title, description and image (``preview`` of the link)
at, ct, mt, pt  App Store analytics tokens: added to the App Store URL
d       accepted; no debug page
======  ==============================================================================================
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

UTM_FIELDS = ("utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content")
PARAMETERS: dict[str, str] = {
    "link": "deeplink, and the destination unless ofl is given",
    "apn": "android.package", "afl": "android.fallback_url", "amv": "accepted, no effect",
    "ibi": "ios.bundle_id", "ifl": "ios.fallback_url", "isi": "ios.app_store_id",
    "ius": "accepted, no effect", "ipfl": "accepted, no effect", "ipbi": "accepted, no effect",
    "imv": "accepted, no effect", "efr": "accepted, no effect", "ofl": "destination_url",
    **{name: "the click's UTM" for name in UTM_FIELDS},
    "gclid": "accepted, no effect",
    "st": "preview.title", "sd": "preview.description", "si": "preview.image_url",
    "at": "App Store URL", "ct": "App Store URL", "mt": "App Store URL", "pt": "App Store URL",
    "d": "accepted, no effect",
}
"""Every parameter of Firebase's table; a long link with any other parameter is still answered (FDL ignored
unknown ones too), they are just not used."""
APP_STORE_TOKENS = ("at", "ct", "mt", "pt")


def is_long_link(query: Mapping[str, str]) -> bool:
    """A request for ``/`` is a long Dynamic Link when it names the deep link or an app (without the deep link,
    a wrong one: the answer says ``link`` is missing)."""
    return any(name in query for name in ("link", "apn", "ibi", "isi", "ofl"))


@dataclass(frozen=True)
class LongLink:
    """What a long link's parameters make: a link body (the admin API's fields, not yet checked), the UTM of the
    click, and the App Store analytics tokens."""

    body: dict[str, Any]
    utm: dict[str, str]
    app_store_tokens: dict[str, str] = field(default_factory=dict)


def link_of_long_link(query: Mapping[str, str]) -> LongLink:
    """The link a long Dynamic Link's parameters describe (``query``: its decoded parameters, first value each).
    The body is to be checked by the Link model like any other (its errors name our fields; :data:`FIELD_OF`
    maps them back to the FDL parameter)."""
    def value(name: str) -> str | None:
        text = query.get(name)
        return text if text else None

    deep = value("link")
    body: dict[str, Any] = {"kind": "external", "destination_url": value("ofl") or deep}
    if deep is not None:
        body["deeplink"] = deep
    if value("apn"):
        body["android"] = {"package": value("apn"), "fallback_url": value("afl")}
    if value("ibi") or value("isi"):
        body["ios"] = {"bundle_id": value("ibi"), "app_store_id": value("isi"), "fallback_url": value("ifl")}
    preview = {key: value(name) for key, name in (("title", "st"), ("description", "sd"), ("image_url", "si"))
               if value(name)}
    if preview:
        body["preview"] = preview
    utm = {name: query[name] for name in UTM_FIELDS if query.get(name)}
    tokens = {name: query[name] for name in APP_STORE_TOKENS if query.get(name)}
    return LongLink(body, utm, tokens)


FIELD_OF = {"destination_url": "link", "deeplink": "link", "android.package": "apn", "android.fallback_url": "afl",
            "ios.bundle_id": "ibi", "ios.app_store_id": "isi", "ios.fallback_url": "ifl", "preview.title": "st",
            "preview.description": "sd", "preview.image_url": "si"}
"""Our field -> the FDL parameter it came from (``destination_url`` is ``ofl`` when the long link has one)."""


def parameter_of(field_path: str, query: Mapping[str, str]) -> str:
    """The FDL parameter behind one of our fields, to name it in an error."""
    if field_path == "destination_url" and query.get("ofl"):
        return "ofl"
    return FIELD_OF.get(field_path, field_path)


def parameters_of(long_link: str) -> dict[str, str]:
    """A long link's parameters, decoded, the first value of each."""
    found: dict[str, str] = {}
    for name, text in parse_qsl(urlsplit(long_link).query, keep_blank_values=True):
        found.setdefault(name, text)
    return found


# --- the importer ------------------------------------------------------------------------------------------

SHORT_HEADERS = ("short dynamic link", "short link", "shortlink", "short_link", "short_dynamic_link", "short url")
LONG_HEADERS = ("long dynamic link", "long link", "longlink", "long_link", "long_dynamic_link", "long url")
NAME_HEADERS = ("link name", "name", "link_name")
TAKEOUT_GUIDE = "https://firebase.google.com/support/guides/export-dynamic-links"
"""Firebase's "Export Dynamic Links metadata" (Google Takeout): one CSV per domain, one column per parameter
("Short link", "Deep link (link)", "Android package name (apn)", ..., "iTunes connect at", ..., "Archived?",
"Link name", "Creation timestamp")."""


@dataclass(frozen=True)
class ExportRow:
    line: int  # in the file, the header being line 1 (a row whose cell spans lines: its first line)
    short_link: str
    parameters: dict[str, str]  # the FDL parameters of the row's link, as a long link's (parameters_of)
    name: str | None


class ExportProblem(ValueError):
    """The file as a whole cannot be read (no header naming the short link and the link's parameters)."""


def _simple(name: str) -> str:
    return " ".join(name.strip().lower().replace("_", " ").split())


def _header(names: list[str], choices: tuple[str, ...]) -> int | None:
    simple = [_simple(name) for name in names]
    for choice in choices:
        wanted = _simple(choice)
        if wanted in simple:
            return simple.index(wanted)
    return None


def _twice(header: list[str], long_form: bool) -> str | None:
    """What the header names in two columns or more (the short link, the long link, the name, or, in Takeout's
    form, a parameter), as a problem to tell; None when each is named once. Which of two columns would be the
    one meant cannot be known: taking the first silently read an empty cell where the other held the value."""
    roles: dict[str, list[int]] = {}
    for at, title in enumerate(header):
        simple = _simple(title)
        for role, choices in (("the short link", SHORT_HEADERS), ("the long link", LONG_HEADERS),
                              ("the link name", NAME_HEADERS)):
            if simple in {_simple(choice) for choice in choices}:
                roles.setdefault(role, []).append(at)
                break
        else:
            parameter = None if long_form else parameter_column(title)
            if parameter is not None:
                roles.setdefault(f"the parameter {parameter}", []).append(at)
    for role, ats in roles.items():
        if len(ats) > 1:
            named = ", ".join(f"{at + 1} ({header[at].strip()!r})" for at in ats)
            return f"the header names {role} in more than one column (columns {named}): keep one"
    return None


def parameter_column(name: str) -> str | None:
    """The FDL parameter a column of the Takeout export holds: the one its title ends with in parentheses
    ("Deep link (link)", "UTM source (utm_source)"), the token of "iTunes connect at" (at, ct, mt, pt), or the
    parameter itself as a title ("link", "apn"); None for the other columns ("Short link", "Archived?",
    "Link name", "Creation timestamp")."""
    title = name.strip().lower()
    words = title.split()
    if title.endswith(")") and "(" in title:
        title = title[title.rindex("(") + 1:-1].strip()
    elif len(words) == 3 and words[:2] == ["itunes", "connect"]:
        title = words[2]
    return title if title in PARAMETERS else None


def export_rows(text: str) -> list[ExportRow]:
    """The rows of an FDL export, a CSV in one of two forms told apart by its header, which names the short link
    column ("Short Dynamic Link", "Short link", "short_link", ...) and optionally the link's name ("Link name"):

    - the console's: a long link column ("Long Dynamic Link", "long_link", ...), whose parameters are the row's;
    - Google Takeout's (:data:`TAKEOUT_GUIDE`): a column per parameter, the deep link's ("Deep link (link)")
      among them; every column that names a parameter (:func:`parameter_column`) gives the row's value of it.

    A long link column wins when a header has both. A header naming one of these in two columns is refused.
    Lines may end in CRLF, LF or CR. Empty rows are skipped."""
    # newline="": the csv module's own line ends (CRLF, LF or a lone CR, as old spreadsheets on macOS write),
    # and a line break inside a quoted cell kept as it is.
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff"), newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise ExportProblem("the file is empty") from None
    except csv.Error as wrong:
        raise ExportProblem(f"line 1 cannot be read as CSV: {wrong}") from None
    short_at, long_at, name_at = (_header(header, SHORT_HEADERS), _header(header, LONG_HEADERS),
                                  _header(header, NAME_HEADERS))
    columns: dict[str, int] = {}
    if long_at is None:
        for at, title in enumerate(header):
            parameter = parameter_column(title)
            if parameter is not None:
                columns.setdefault(parameter, at)
    twice = _twice(header, long_at is not None)
    if twice is not None:
        raise ExportProblem(twice)
    if short_at is None or (long_at is None and "link" not in columns):
        raise ExportProblem("the header must name a short link column (\"Short Dynamic Link\" or \"Short link\") "
                            "and either a long link column (\"Long Dynamic Link\", the console's export) or a "
                            "column per parameter with the deep link's (\"Deep link (link)\", Google Takeout's)")
    rows = []
    while True:
        line = reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as wrong:  # a cell past the csv module's field limit (128 KiB): no link has one
            raise ExportProblem(f"line {line} cannot be read as CSV: {wrong}") from None
        if not any(cell.strip() for cell in cells):
            continue
        def cell(at: int | None, cells: list[str] = cells) -> str:
            return cells[at].strip() if at is not None and at < len(cells) else ""
        if long_at is not None:
            parameters = parameters_of(cell(long_at))
        else:
            parameters = {name: cell(at) for name, at in columns.items() if cell(at)}
        rows.append(ExportRow(line, cell(short_at), parameters, cell(name_at) or None))
    return rows


def short_path(short_link: str) -> tuple[str, str] | None:
    """(host, code) of a short Dynamic Link ``https://HOST/CODE``; None when it is not one."""
    try:
        parts = urlsplit(short_link)
    except ValueError:
        return None
    path = parts.path.strip("/")
    if parts.scheme not in ("http", "https") or not parts.hostname or not path or "/" in path or parts.query:
        return None
    return parts.hostname.lower().rstrip("."), path
