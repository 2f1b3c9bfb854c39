"""CSV that a spreadsheet opens as text, never as formulas (OWASP "CSV Injection"; docs/decisions.md,
"Reports and bounded answers").

Every CSV the service writes goes through :func:`csv_text`: every field is quoted (``csv.QUOTE_ALL``, a quote
inside doubled) and neutralised by :func:`cell`. The rule holds whatever separator the reader's locale uses
(``,`` in most of the Americas, ``;`` in Colombia and most of Europe, tab when pasted): a ``'`` goes before a
trigger character (``=``, ``+``, ``-``, ``@``, tab, CR) found at the start of the field, and before one found
right after any separator a reader might split on (``,``, ``;``, tab, CR, LF). So even a reader that ignored
the quotes and split ``ok;=1+1;`` on ``;`` would see ``'=1+1``, text. Blanks between the start (or the
separator) and the trigger do not hide it: readers that trim the spaces around a field (LibreOffice's "Trim
spaces", Google Sheets' import) see `` =1+1`` as ``=1+1``, so the ``'`` goes before the blanks (``' =1+1``). The
full-width signs (``＝``, ``＋``, ``－``, ``＠``), which spreadsheets with East Asian input read as their ASCII
forms, and NUL (OWASP ASVS 1.2.10) are triggers too. Reading the value back: drop a ``'`` at the start and after
such a separator when blanks and a trigger follow it.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable
from typing import Any

TRIGGERS = "=+-@\t\r\x00\uff1d\uff0b\uff0d\uff20"
SEPARATORS = ",;\t\r\n"
BLANKS = r"[^\S\t\r\n]*"
"""Whitespace a trimming reader drops before a trigger (tab, CR and LF are separators or triggers themselves)."""
_INSIDE = re.compile(f"([{re.escape(SEPARATORS)}])(?={BLANKS}[{re.escape(TRIGGERS)}])")
_START = re.compile(f"{BLANKS}[{re.escape(TRIGGERS)}]")


def cell(value: Any) -> str:
    """``value`` as the text of a CSV field no spreadsheet reads as a formula (None is empty)."""
    text = "" if value is None else str(value)
    if not text:
        return text
    text = _INSIDE.sub(r"\1'", text)
    return "'" + text if _START.match(text) else text


def csv_text(rows: Iterable[Iterable[Any]]) -> str:
    """``rows`` (the header first) as CSV text: CRLF line ends, every field quoted and neutralised."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n", quoting=csv.QUOTE_ALL)
    for row in rows:
        writer.writerow([cell(value) for value in row])
    return out.getvalue()
